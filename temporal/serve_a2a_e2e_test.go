package agtemporal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

// a2aHook records the push notifications it gets: "TOKEN TASK STATE".
type a2aHook struct {
	mu  sync.Mutex
	got []string
}

func (h *a2aHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var task struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if json.NewDecoder(r.Body).Decode(&task) != nil {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r.Header.Get("X-A2A-Notification-Token")+" "+task.ID+" "+task.Status.State)
}

func (h *a2aHook) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// taskGet is tasks/get of task on base's default agent, by plain JSON-RPC:
// the task's state and its status message's text.
func taskGet(t *testing.T, base, task string) (string, string) {
	t.Helper()
	resp := postJSON(t, base+"/a2a/agcore", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": task}})
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Status struct {
				State   string `json:"state"`
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"status"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, p := range out.Result.Status.Message.Parts {
		text += p.Text
	}
	return out.Result.Status.State, text
}

// TestE2EServeTemporalA2A: two `agcore serve --temporal` replicas and one
// `agcore worker` over one store (PostgreSQL, Redis), driven by the A2A
// project's JavaScript client. A non-blocking message/send on A (with a
// push config) answers at once, the task working; A is SIGKILLed mid-turn
// (after its tool call, during its second model call); resubscribed on
// B, the task goes on on the worker and reaches completed with the
// answer, the tool having run once, and the webhook (127.0.0.1, allowed
// by --a2a-push-allow-host) got its working and completed states, each
// once. A task started on B and cancelled through B while its model
// call hangs ends canceled; a blocking message/send on B returns the
// completed task; a message/stream on B streams it to completed. A task
// whose workflow is terminated mid-turn is read failed on B, the
// workflow's status in its message, and its push config is notified of
// the failed state, once; a task stored three minutes ago whose workflow
// Temporal does not know (never handed over) is read failed on B.
func TestE2EServeTemporalA2A(t *testing.T) {
	jsDir := os.Getenv("AGCORE_A2A_JS_DIR")
	if jsDir == "" {
		testenv.Missing(t, "the @a2a-js/sdk npm package is not installed: eval \"$(.ci/a2a-js-setup.sh)\"")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "a2a-temporal-client.mjs"))
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			store := serveStore(t, kind)
			arrived, release, hung, hung2 := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
			w, _ := newWorld(t,
				sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
				gateReply(arrived, release, "Done after the crash."),
				hangReply(hung),
				sseReply("Blocking answer."),
				sseReply("Streamed answer."),
				hangReply(hung2))
			worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
				"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record)
			hook := &a2aHook{}
			hookSrv := httptest.NewServer(hook)
			t.Cleanup(hookSrv.Close)
			serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake",
				"--base-url", w.fake.URL, "--a2a-push-allow-host", "127.0.0.1"}
			a, baseA := startServeReplica(t, serveArgs...)
			_, baseB := startServeReplica(t, serveArgs...)
			node := func(mode string, env ...string) map[string]any {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", script)
				cmd.Env = append(os.Environ(), "MODE="+mode, "AGCORE_A="+baseA, "AGCORE_B="+baseB, "AGCORE_WEBHOOK="+hookSrv.URL+"/hook")
				cmd.Env = append(cmd.Env, env...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("node %s: %v\n%s\nA: %s\nworker: %s", mode, err, stderr.String(), a.errw, worker.errw)
				}
				var m map[string]any
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("node %s: %v: %s", mode, err, out)
				}
				return m
			}

			// Sent to A, not blocking: the task at once, working.
			s := node("send")
			task, _ := s["taskId"].(string)
			if s["kind"] != "task" || s["state"] != "working" || task == "" {
				t.Fatalf("a non-blocking message/send on A answered %v", s)
			}
			waitFor(t, "the second model call", time.Minute, arrived)
			a.kill() // the accepting replica and its serve-runner, mid-turn
			close(release)

			// Resubscribed on B: the turn went on on the worker.
			start := time.Now()
			r := node("resubscribe", "TASK_ID="+task)
			states, _ := r["states"].([]any)
			if len(states) == 0 || states[len(states)-1] != "completed" || r["state"] != "completed" || r["answer"] != "Done after the crash." {
				t.Fatalf("resubscribed on B: %v\nworker: %s", r, worker.errw)
			}
			if meta, _ := r["meta"].(map[string]any); meta == nil || meta["session_turn"] != float64(1) || meta["model"] == nil {
				t.Errorf("the completed task's metadata: %v", r["meta"])
			}
			t.Logf("%s: resubscribed on B after A's kill: completed %s later", kind, time.Since(start).Round(time.Millisecond))
			if got := w.recorded(t); strings.Join(got, ",") != "once" {
				t.Fatalf("the tool ran %v, want once", got)
			}
			// The webhook got the task's states, its end once.
			for deadline := time.Now().Add(30 * time.Second); !slices.Contains(hook.seen(), "tok-1 "+task+" completed"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the webhook got %q", hook.seen())
				}
			}
			// Each change once: working (from A, which stored it), then
			// completed (from the worker).
			if want := []string{"tok-1 " + task + " working", "tok-1 " + task + " completed"}; !slices.Equal(hook.seen(), want) {
				t.Errorf("the webhook got %q, want %q", hook.seen(), want)
			}

			// Started on B, cancelled through B while its model call hangs.
			st := node("start")
			hangTask, _ := st["taskId"].(string)
			waitFor(t, "the hanging model call", time.Minute, hung)
			c := node("cancel", "TASK_ID="+hangTask)
			if c["cancelled"] != "canceled" || c["got"] != "canceled" {
				t.Fatalf("tasks/cancel on B: %v\nworker: %s", c, worker.errw)
			}

			// Blocking, and streamed, on B.
			if b := node("blocking"); b["kind"] != "task" || b["state"] != "completed" || b["answer"] != "Blocking answer." {
				t.Fatalf("a blocking message/send on B: %v", b)
			}
			if sm := node("stream"); sm["state"] != "completed" || sm["answer"] != "Streamed answer." {
				t.Fatalf("a message/stream on B: %v", sm)
			}

			// A task whose workflow is terminated mid-turn (as `temporal
			// workflow terminate` would): a replica reading it unchanged
			// asks the runner, and stores it failed.
			st = node("start", "TOKEN=tok-gone")
			gone, _ := st["taskId"].(string)
			waitFor(t, "the second hanging model call", time.Minute, hung2)
			_, cl := devServerClient(t, w.addr)
			if err := cl.TerminateWorkflow(context.Background(), agtemporal.A2AWorkflowID("agcore", gone), "", "terminated by the test"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
				state, text := taskGet(t, baseB, gone)
				if state == "failed" && strings.Contains(text, "ended without its outcome") && strings.Contains(text, "Terminated") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the task of the terminated workflow: %s %q", state, text)
				}
			}
			// Its webhook got the failed state, from the replica that
			// stored it, once.
			failed := "tok-gone " + gone + " failed"
			for deadline := time.Now().Add(30 * time.Second); !slices.Contains(hook.seen(), failed); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the webhook got %q, want %q", hook.seen(), failed)
				}
			}
			time.Sleep(300 * time.Millisecond) // a second notification would come by now
			var got []string
			for _, n := range hook.seen() {
				if strings.HasPrefix(n, "tok-gone ") {
					got = append(got, n)
				}
			}
			if want := []string{"tok-gone " + gone + " working", failed}; !slices.Equal(got, want) {
				t.Errorf("the webhook got %q of the terminated task, want %q", got, want)
			}

			// A task stored three minutes ago by a replica that died
			// before handing it over (its record, working, no workflow):
			// Temporal does not know it, so B's tasks/get ends it failed.
			lost := lostTask(t, store, gone, 3*time.Minute)
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
				state, text := taskGet(t, baseB, lost)
				if state == "failed" && strings.Contains(text, "no workflow for the task") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the task Temporal does not know: %s %q", state, text)
				}
			}
		})
	}
}

// lostTask stores, in store, a copy of the record of task (of the default
// agent, agcore), as a task of its own that is working and was last
// changed age ago, for which Temporal has no workflow; it returns its id.
func lostTask(t *testing.T, store, task string, age time.Duration) string {
	t.Helper()
	ctx := context.Background()
	recs := storeRecords(t, store)
	rec, err := recs.GetRecord(ctx, "agcore.a2a.tasks", "agcore/"+task)
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]json.RawMessage
	var body map[string]any
	if err := json.Unmarshal(rec.Value, &tr); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(tr["task"], &body); err != nil {
		t.Fatal(err)
	}
	id := "lost-" + task
	body["id"] = id
	body["status"] = map[string]any{"state": "working", "timestamp": time.Now().Add(-age).UTC().Format(time.RFC3339Nano)}
	tr["task"], _ = json.Marshal(body)
	v, _ := json.Marshal(tr)
	if _, err := recs.PutRecord(ctx, "agcore.a2a.tasks", session.Record{Key: "agcore/" + id, Value: v, Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestE2EServeTemporalA2AApprovals: an A2A task whose turn, on the
// worker, calls write_file (which needs approval): a blocking
// message/send on replica A returns the task input-required, naming the
// call; A is SIGKILLed; "approve" sent to the task on B reaches the
// workflow, and the message's answer is the task completed, the file
// written.
func TestE2EServeTemporalA2AApprovals(t *testing.T) {
	jsDir := os.Getenv("AGCORE_A2A_JS_DIR")
	if jsDir == "" {
		testenv.Missing(t, "the @a2a-js/sdk npm package is not installed: eval \"$(.ci/a2a-js-setup.sh)\"")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "a2a-temporal-client.mjs"))
	store := serveStore(t, "postgres")
	root := t.TempDir()
	w, _ := newWorld(t,
		sseReply("I will write it. ", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"approved"}`}),
		sseReply("The note is written."))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--root", root, "--tools", "write_file")
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	_, baseB := startServeReplica(t, serveArgs...)
	node := func(mode string, env ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", script)
		cmd.Env = append(os.Environ(), "MODE="+mode, "AGCORE_A="+baseA, "AGCORE_B="+baseB)
		cmd.Env = append(cmd.Env, env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node %s: %v\n%s\nworker: %s", mode, err, stderr.String(), worker.errw)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("node %s: %v: %s", mode, err, out)
		}
		return m
	}
	q := node("ask")
	approvals, _ := q["approvals"].([]any)
	if q["state"] != "input-required" || len(approvals) != 1 {
		t.Fatalf("a blocking message/send on A: %v\nA: %s", q, a.errw)
	}
	if p, _ := approvals[0].(map[string]any); p["approval_id"] != "call_w" || p["tool"] != "write_file" {
		t.Fatalf("the waiting call: %v", p)
	}
	if _, err := os.Stat(filepath.Join(root, "note.txt")); err == nil {
		t.Fatal("the file was written before the approval")
	}
	a.kill()
	d := node("decide", "TASK_ID="+q["taskId"].(string), "CONTEXT_ID="+q["contextId"].(string))
	if d["state"] != "completed" || d["got"] != "completed" || d["answer"] != "The note is written." {
		t.Fatalf("approved on B: %v\nworker: %s", d, worker.errw)
	}
	if got, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(got) != "approved" {
		t.Fatalf("note.txt: %q %v", got, err)
	}
}
