package agtemporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// readAGUIData reads the AG-UI events of an event stream as decoded
// objects, calling fn with each until it returns false or the stream
// ends.
func readAGUIData(t *testing.T, body io.Reader, fn func(map[string]any) bool) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if !fn(ev) {
			return
		}
	}
}

// TestE2EServeTemporalAGUIApprovals: two `agcore serve --temporal`
// replicas with two principals (alice, bob) and one `agcore worker`
// offering write_file (which needs approval), over one store (PostgreSQL,
// Redis). Alice's AG-UI run, accepted and streamed by A, shows the call
// that waits in the workflow as a run of the serving process does: its
// tool call, then the interrupt event CUSTOM agcore.approval_required
// with the id POST /v1/approvals/{id} decides, and no result. A is
// SIGKILLed; on B, GET /v1/approvals lists the call for alice (that id)
// and nothing for bob, bob's decision and a call the run does not wait on
// are 404s, alice approves it, and the run reconnected on B after the
// last event A gave reaches RUN_FINISHED with the file written. AG-UI's
// own client (@ag-ui/client's HttpAgent, which verifies the event
// sequence) reconnects to that run on B, interrupt included, and runs a
// new one through B whose call it approves from the interrupt it gets.
func TestE2EServeTemporalAGUIApprovals(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret,bob=bob-secret")
	const alice, bob = "alice-secret", "bob-secret"
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			store := serveStore(t, kind)
			root := t.TempDir()
			w, _ := newWorld(t,
				sseReply("I will write it. ", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"approved"}`}),
				sseReply("The note is written."),
				sseReply("Another. ", fakeCall{"call_c", "write_file", `{"path":"client.txt","content":"by the client"}`}),
				sseReply("Written for the client."))
			worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
				"--base-url", w.fake.URL, "--store", store, "--root", root, "--tools", "write_file")
			serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
			a, baseA := startServeReplica(t, serveArgs...)
			b, baseB := startServeReplica(t, serveArgs...)

			// Accepted and streamed by A until the call waits.
			run := fmt.Sprintf("run-%s-%d", kind, time.Now().UnixNano())
			input := map[string]any{"threadId": "thread-" + run, "runId": run, "state": map[string]any{},
				"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "write a note"}}, "tools": []any{}, "context": []any{}}
			resp := authed(t, "POST", baseA+"/agui/agcore", alice, input)
			if resp.StatusCode != 200 {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("POST /agui/agcore on A: %d %s\n%s", resp.StatusCode, body, a.errw)
			}
			started := time.Now()
			// A stream that never shows the interrupt is cut, and fails.
			cut := time.AfterFunc(time.Minute, func() { resp.Body.Close() })
			var before []map[string]any
			readAGUIData(t, resp.Body, func(ev map[string]any) bool {
				before = append(before, ev)
				if ev["type"] == "TOOL_CALL_RESULT" || ev["type"] == "RUN_FINISHED" || ev["type"] == "RUN_ERROR" {
					t.Fatalf("event %v before the call was decided", ev)
				}
				return ev["type"] != "CUSTOM"
			})
			cut.Stop()
			if len(before) < 5 || before[0]["type"] != "RUN_STARTED" {
				t.Fatalf("A streamed %v\nA: %s\nworker: %s", before, a.errw, worker.errw)
			}
			var types []string
			for _, ev := range before {
				types = append(types, ev["type"].(string))
			}
			// The waiting call as a run of the serving process shows it:
			// the call, then the interrupt (serve/agui.go).
			if tail := strings.Join(types[len(types)-4:], " "); tail != "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END CUSTOM" {
				t.Fatalf("the events before the decision end with %s", tail)
			}
			interrupt := before[len(before)-1]
			value, _ := interrupt["value"].(map[string]any)
			args, _ := value["arguments"].(map[string]any)
			if interrupt["name"] != "agcore.approval_required" || value["id"] != run+"/call_w" || value["toolCallId"] != "call_w" ||
				value["tool"] != "write_file" || args["path"] != "note.txt" {
				t.Fatalf("the interrupt %v", interrupt)
			}
			t.Logf("%s: the interrupt on A's stream %s after the run was posted", kind, time.Since(started).Round(time.Millisecond))
			a.kill() // the accepting replica and its serve-runner
			resp.Body.Close()

			// Listed on B, for alice only, with the interrupt's id.
			p := waitApproval(t, baseB, alice, time.Minute)
			if p.ID != value["id"] || p.Object != "approval" || p.Tool != "write_file" || p.CallID != "call_w" || p.Run != run ||
				p.Agent != "agcore" || p.Created == 0 || !strings.Contains(p.Arguments, `"note.txt"`) {
				t.Fatalf("alice's pending call: %+v (run %s)\nB: %s", p, run, b.errw)
			}
			listed := time.Now()
			if got := listApprovals(t, baseB, alice); len(got) != 1 {
				t.Fatalf("alice's list again: %+v", got)
			}
			t.Logf("%s: GET /v1/approvals on B (the AG-UI run's workflow queried through serve-runner) took %s", kind, time.Since(listed).Round(time.Millisecond))
			if got := listApprovals(t, baseB, bob); len(got) != 0 {
				t.Fatalf("bob sees %+v", got)
			}
			if code := decideApproval(t, baseB, bob, p.ID, true, ""); code != 404 {
				t.Fatalf("bob's decision: %d, want 404", code)
			}
			if code := decideApproval(t, baseB, alice, run+"/call_nope", true, ""); code != 404 {
				t.Fatalf("deciding a call the run does not wait on: %d, want 404\nB: %s", code, b.errw)
			}
			if _, err := os.Stat(filepath.Join(root, "note.txt")); err == nil {
				t.Fatal("the file was written before the approval")
			}
			start := time.Now()
			if code := decideApproval(t, baseB, alice, p.ID, true, ""); code != 200 {
				t.Fatalf("alice's approval on B: %d\nB: %s", code, b.errw)
			}
			decided := time.Since(start)

			// Reconnected on B after the last event A gave.
			last := len(before) - 1
			r := authed(t, "GET", fmt.Sprintf("%s/agui/agcore/runs/%s?after=%d", baseB, run, last), alice, nil)
			var after []map[string]any
			readAGUIData(t, r.Body, func(ev map[string]any) bool { after = append(after, ev); return true })
			r.Body.Close()
			text := ""
			var result any
			for _, ev := range append(before, after...) {
				switch ev["type"] {
				case "TEXT_MESSAGE_CONTENT":
					text += ev["delta"].(string)
				case "TOOL_CALL_RESULT":
					result = ev["content"]
				}
			}
			if len(after) == 0 || after[len(after)-1]["type"] != "RUN_FINISHED" || after[len(after)-1]["runId"] != run ||
				text != "I will write it. The note is written." || result == nil || strings.Contains(fmt.Sprint(result), "denied") {
				t.Fatalf("the reconnected stream: %q, result %v, %v\nworker: %s", text, result, after, worker.errw)
			}
			t.Logf("%s: approved on B in %s, RUN_FINISHED %s after the decision", kind, decided.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			if got, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(got) != "approved" {
				t.Fatalf("note.txt: %q, %v", got, err)
			}
			if code := decideApproval(t, baseB, alice, p.ID, true, ""); code != 404 {
				t.Fatalf("a second decision of the call: %d, want 404", code)
			}
			if got := listApprovals(t, baseB, alice); len(got) != 0 {
				t.Fatalf("after the run alice sees %+v", got)
			}

			// AG-UI's own client, on B: the run reconnected to from its
			// start (the interrupt among the events it verifies), then a
			// new run whose call it approves from the interrupt it gets.
			dir := os.Getenv("AGCORE_AGUI_CLIENT_DIR")
			if dir == "" {
				testenv.Missing(t, "the @ag-ui/client npm package is not installed: eval \"$(.ci/agui-client-setup.sh)\"")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			node := exec.CommandContext(ctx, "node", filepath.Join("testdata", "agui-approval-client.mjs"))
			node.Env = append(os.Environ(), "AGCORE_BASE="+baseB, "AGCORE_RUN="+run, "AGCORE_TOKEN="+alice)
			var stderr strings.Builder
			node.Stderr = &stderr
			out, err := node.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s\nworker: %s", err, stderr.String(), worker.errw)
			}
			type clientInterrupt struct{ Name, ID, Tool, ToolCallID string }
			var got struct {
				Reconnect, Fresh struct {
					Events     []string
					Text       string
					Interrupts []clientInterrupt
					Decisions  []int
				}
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			seq := func(evs []string) string { return strings.Join(evs, " ") }
			want := clientInterrupt{"agcore.approval_required", run + "/call_w", "write_file", "call_w"}
			if rc := got.Reconnect; len(rc.Events) != len(before)+len(after) || len(rc.Interrupts) != 1 || rc.Interrupts[0] != want ||
				rc.Text != "I will write it. The note is written." {
				t.Fatalf("@ag-ui/client reconnected on B: %q %+v %s", rc.Text, rc.Interrupts, seq(rc.Events))
			}
			f := got.Fresh
			if !strings.Contains(seq(f.Events), "TOOL_CALL_END CUSTOM TOOL_CALL_RESULT") || !strings.HasSuffix(seq(f.Events), "STEP_FINISHED RUN_FINISHED") ||
				len(f.Interrupts) != 1 || f.Interrupts[0].ID != "fresh-"+run+"/call_c" || len(f.Decisions) != 1 || f.Decisions[0] != 200 ||
				f.Text != "Another. Written for the client." {
				t.Fatalf("@ag-ui/client's run on B: %q %+v %v %s\nworker: %s", f.Text, f.Interrupts, f.Decisions, seq(f.Events), worker.errw)
			}
			if got, err := os.ReadFile(filepath.Join(root, "client.txt")); err != nil || string(got) != "by the client" {
				t.Fatalf("client.txt: %q, %v", got, err)
			}
			t.Logf("%s: @ag-ui/client reconnected to %d events (one interrupt); its own run of %d events, its call approved from the interrupt (%d)",
				kind, len(got.Reconnect.Events), len(f.Events), f.Decisions[0])
		})
	}
}
