package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// hangCounter counts a provider's "hang" answers still open.
type hangCounter struct{ n atomic.Int64 }

// a2aProvider is backgroundProvider whose "hang" answers are counted
// while open: a turn cancelled in its process closes its answer.
func a2aProvider(t *testing.T, hangs *hangCounter) *httptest.Server {
	inner := backgroundProvider(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `hang on`) && !strings.Contains(string(body), `"role":"tool"`) {
			hangs.n.Add(1)
			defer hangs.n.Add(-1)
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, inner.URL+r.URL.Path, strings.NewReader(string(body)))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// webhook records the push notifications it gets: token and task state.
type webhook struct {
	mu  sync.Mutex
	got []string // "TOKEN TASK STATE"
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var task struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if json.NewDecoder(r.Body).Decode(&task) != nil {
		http.Error(w, "bad", 400)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r.Header.Get("X-A2A-Notification-Token")+" "+task.ID+" "+task.Status.State)
}

func (h *webhook) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// TestServeA2ABackground drives A2A with the A2A project's JavaScript SDK
// across two built agcore serve processes over one PostgreSQL store, and
// over one Redis store: a non-blocking message/send on A answers at once
// and the turn runs on; push configs are set, got, listed and deleted
// through B; webhooks on private and link-local addresses are refused; the
// task is resubscribed on B to its end; every change of its state reaches
// the local webhook (allowed with --a2a-push-allow-host) with its token,
// and the end of the task running on A reaches a config set through B,
// once;
// a message on B whose referenceTaskIds names the task starts a new
// context holding the task's conversation; tasks/cancel through B stops a
// turn running on A (its model call closes); and A is SIGKILLed mid-turn: resubscribed on B, the task ends
// failed once A's lease passed.
func TestServeA2ABackground(t *testing.T) {
	t.Parallel()
	jsDir := os.Getenv("AGCORE_A2A_JS_DIR")
	if jsDir == "" {
		testenv.Missing(t, "the @a2a-js/sdk npm package is not installed: eval \"$(.ci/a2a-js-setup.sh)\"")
	}
	script, _ := filepath.Abs("../../serve/testdata/a2a-js-background.mjs")
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			storeURL := replicaStore(t, kind)
			hangs := &hangCounter{}
			provider := a2aProvider(t, hangs)
			hook := &webhook{}
			hookSrv := httptest.NewServer(hook)
			t.Cleanup(hookSrv.Close)
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "compatible"
			c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
			c.env["AGCORE_MODEL"] = "local-model"
			args := []string{"--store", storeURL, "--tools", "", "--a2a-push-allow-host", "127.0.0.1"}
			baseA, cmdA, _ := c.startServe(t, args...)
			baseB, _, _ := c.startServe(t, args...)
			node := func(mode string, env ...string) map[string]any {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", script)
				cmd.Env = append(os.Environ(), "MODE="+mode, "AGCORE_A="+baseA, "AGCORE_B="+baseB,
					"AGCORE_WEBHOOK="+hookSrv.URL+"/hook", "AGCORE_RELEASE="+provider.URL+"/release")
				cmd.Env = append(cmd.Env, env...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("node %s: %v\n%s", mode, err, stderr.String())
				}
				var m map[string]any
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("node %s: %v: %s", mode, err, out)
				}
				return m
			}
			js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

			r := node("run")
			if r["pushCapability"] != true {
				t.Errorf("the agent card does not offer push notifications: %v", r)
			}
			if sent := r["sent"].(map[string]any); sent["kind"] != "task" || (sent["state"] != "submitted" && sent["state"] != "working") {
				t.Fatalf("a non-blocking message/send answered %v", sent)
			}
			if r["set"] != "second" || r["got"] != "tok-2" || r["listed"] != float64(2) || r["listedAfterDelete"] != float64(1) {
				t.Fatalf("push configs through B: %s", js(r))
			}
			for name, msg := range r["refused"].(map[string]any) {
				if msg == "ok" {
					t.Errorf("the webhook URL %s was accepted", name)
				}
			}
			states := r["resubscribed"].([]any)
			if len(states) == 0 || states[len(states)-1] != "completed" {
				t.Fatalf("resubscribed on B: %v", states)
			}
			// The task ran on A; it records its turn (the first of its
			// session), where B forks the new context.
			if f := r["final"].(map[string]any); f["state"] != "completed" || f["answer"] != "once upon a time a turn outlived its connection" || f["sessionTurn"] != float64(1) {
				t.Fatalf("tasks/get on B: %v", f)
			}
			if f := r["fork"].(map[string]any); f["state"] != "completed" || f["newContext"] != true || f["answer"] != "history: slow story | history please" {
				t.Fatalf("a new context from the task, on B: %v", f)
			}
			if r["cancelled"] != "canceled" {
				t.Fatalf("tasks/cancel through B: %v", r["cancelled"])
			}
			// The cancelled turn stopped on A: its model call closed.
			for deadline := time.Now().Add(30 * time.Second); hangs.n.Load() > 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the turn cancelled through B still runs on A")
				}
			}
			// Every change of the task's state reached the webhook, with the
			// config's token, ending completed.
			task := r["taskId"].(string)
			var mine []string
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				mine = mine[:0]
				for _, g := range hook.seen() {
					if strings.Contains(g, task) {
						mine = append(mine, g)
					}
				}
				if slices.Contains(mine, "tok-1 "+task+" completed") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the webhook got %q", hook.seen())
				}
			}
			// And the config set through B reached the webhook from A, once
			// for the task's end.
			for deadline := time.Now().Add(30 * time.Second); !slices.Contains(hook.seen(), "tok-3 "+task+" completed"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the config set through B got nothing of the end: %q", hook.seen())
				}
			}
			ends := 0
			for _, g := range hook.seen() {
				switch {
				case g == "tok-3 "+task+" completed":
					ends++
				case g == "tok-2 "+task+" working":
					// The config set and deleted through B while the turn
					// streamed on A may have caught a change of the working
					// task (its answer's first delta) while it was set.
				case strings.Contains(g, task) && !strings.HasPrefix(g, "tok-1 ") && !strings.HasPrefix(g, "tok-3 "):
					t.Errorf("a notification with another token (or to the deleted config after the turn went on): %q", g)
				}
			}
			if ends != 1 || r["kept"] != "kept" {
				t.Errorf("the config set through B (%v) got the end %d times", r["kept"], ends)
			}
			if !slices.ContainsFunc(mine, func(s string) bool { return strings.HasSuffix(s, " working") }) {
				t.Errorf("no working notification: %q", mine)
			}

			// A SIGKILLed mid-turn.
			s := node("start")
			if err := cmdA.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmdA.Wait()
			start := time.Now()
			l := node("lost", "TASK_ID="+s["taskId"].(string))
			t.Logf("%s: the killed process's task ended %v on the other %v after the kill", kind, l["last"], time.Since(start).Round(100*time.Millisecond))
			if l["last"] != "failed" || l["got"] != "failed" {
				t.Fatalf("the killed task on B: %s", js(l))
			}
		})
	}
}
