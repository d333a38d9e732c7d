package agtemporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// aguiEvent is one AG-UI event of a stream.
type aguiEvent struct {
	Type    string `json:"type"`
	Delta   string `json:"delta"`
	Content string `json:"content"`
	RunID   string `json:"runId"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// readAGUI reads the AG-UI events of an event stream ("data: {...}"
// lines), calling fn with each until it returns false or the stream ends.
func readAGUI(t *testing.T, body io.Reader, fn func(aguiEvent) bool) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev aguiEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if !fn(ev) {
			return
		}
	}
}

// TestE2EServeTemporalAGUISurvivesTheAcceptingReplica: two `agcore serve
// --temporal` replicas and one `agcore worker` over one store
// (PostgreSQL, Redis). An AG-UI run (POST /agui/agcore with a
// RunAgentInput, read as server-sent events as an AG-UI client reads
// them) is accepted by A, which is SIGKILLed mid-turn (after its tool
// call's result, during its second model call); reconnecting on B after
// the last event A gave (/agui/agcore/runs/RUN?after=N), the run goes on
// on the worker and reaches RUN_FINISHED, the tool having run once; the
// whole run, read again on B from its start, is the same run; and
// AG-UI's own client (@ag-ui/client's HttpAgent, which verifies the event
// sequence) reconnects to it on B and runs a new run through B.
func TestE2EServeTemporalAGUISurvivesTheAcceptingReplica(t *testing.T) {
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			store := serveStore(t, kind)
			arrived, release := make(chan struct{}), make(chan struct{})
			w, _ := newWorld(t,
				sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
				gateReply(arrived, release, "Done after the crash."),
				sseReply("Hello from the worker."))
			worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
				"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record)
			serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
			a, baseA := startServeReplica(t, serveArgs...)
			_, baseB := startServeReplica(t, serveArgs...)

			run := fmt.Sprintf("run-%s-%d", kind, time.Now().UnixNano())
			input := map[string]any{"threadId": "thread-" + run, "runId": run, "state": map[string]any{},
				"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "record once"}}, "tools": []any{}, "context": []any{}}
			resp := postJSON(t, baseA+"/agui/agcore", input)
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("POST /agui/agcore on A: %d %s\n%s", resp.StatusCode, b, a.errw)
			}
			var before []aguiEvent
			readAGUI(t, resp.Body, func(ev aguiEvent) bool {
				before = append(before, ev)
				return ev.Type != "TOOL_CALL_RESULT"
			})
			if len(before) < 4 || before[0].Type != "RUN_STARTED" || before[len(before)-1].Type != "TOOL_CALL_RESULT" {
				t.Fatalf("A streamed %+v\nA: %s\nworker: %s", before, a.errw, worker.errw)
			}
			waitFor(t, "the second model call", time.Minute, arrived)
			a.kill() // the accepting replica and its serve-runner, mid-turn
			resp.Body.Close()
			close(release)

			// Reconnected on B after the last event A gave.
			start := time.Now()
			last := len(before) - 1
			r, err := http.Get(fmt.Sprintf("%s/agui/agcore/runs/%s?after=%d", baseB, run, last))
			if err != nil {
				t.Fatal(err)
			}
			var after []aguiEvent
			readAGUI(t, r.Body, func(ev aguiEvent) bool { after = append(after, ev); return true })
			r.Body.Close()
			text := ""
			for _, ev := range append(before, after...) {
				if ev.Type == "TEXT_MESSAGE_CONTENT" {
					text += ev.Delta
				}
			}
			if len(after) == 0 || after[len(after)-1].Type != "RUN_FINISHED" || after[len(after)-1].RunID != run || text != "Recording.Done after the crash." {
				t.Fatalf("the reconnected stream: %q %+v\nworker: %s", text, after, worker.errw)
			}
			t.Logf("%s: reconnected on B after event %d, RUN_FINISHED %s later (%d events in all)", kind, last, time.Since(start).Round(time.Millisecond), len(before)+len(after))
			if got := w.recorded(t); strings.Join(got, ",") != "once" {
				t.Fatalf("the tool ran %v, want once", got)
			}

			// The whole run again on B (a POST to the run's URL, as an
			// AG-UI client reconnects): the same events.
			all := postJSON(t, baseB+"/agui/agcore/runs/"+run, map[string]any{})
			var again []aguiEvent
			readAGUI(t, all.Body, func(ev aguiEvent) bool { again = append(again, ev); return true })
			all.Body.Close()
			if len(again) != len(before)+len(after) {
				t.Fatalf("the whole run again: %d events, want %d", len(again), len(before)+len(after))
			}
			for i, ev := range append(before, after...) {
				if again[i] != ev {
					t.Fatalf("event %d again: %+v, first %+v", i, again[i], ev)
				}
			}

			// AG-UI's own client, on B.
			dir := os.Getenv("AGCORE_AGUI_CLIENT_DIR")
			if dir == "" {
				testenv.Missing(t, "the @ag-ui/client npm package is not installed: eval \"$(.ci/agui-client-setup.sh)\"")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			node := exec.CommandContext(ctx, "node", filepath.Join("testdata", "agui-remote-client.mjs"))
			node.Env = append(os.Environ(), "AGCORE_BASE="+baseB, "AGCORE_RUN="+run)
			var stderr strings.Builder
			node.Stderr = &stderr
			out, err := node.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s\nworker: %s", err, stderr.String(), worker.errw)
			}
			var got struct {
				Reconnect, Fresh struct {
					Events []string
					Text   string
				}
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			seq := func(evs []string) string { return strings.Join(evs, " ") }
			if rc := got.Reconnect; len(rc.Events) != len(again) || rc.Text != "Recording.Done after the crash." {
				t.Fatalf("@ag-ui/client reconnected on B: %q %s", rc.Text, seq(rc.Events))
			}
			if f := got.Fresh; !strings.HasPrefix(seq(f.Events), "RUN_STARTED STATE_SNAPSHOT STEP_STARTED TEXT_MESSAGE_START") ||
				!strings.HasSuffix(seq(f.Events), "TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED") || f.Text != "Hello from the worker." {
				t.Fatalf("@ag-ui/client's run on B: %q %s\nworker: %s", f.Text, seq(f.Events), worker.errw)
			}
		})
	}
}
