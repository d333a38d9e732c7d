package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// aguiProvider answers "read ..." with a read_file call, "write ..." with
// a write_file call (which needs approval), a tool result with what it
// got, anything else with an echo.
func aguiProvider(t *testing.T) *httptest.Server {
	gate := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/release" {
			once.Do(func() { close(gate) })
			return
		}
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			openaiReply(turn{text: "the tool said: " + contentText(last.Content), in: 30, out: 4})(w, r)
			return
		}
		text := contentText(last.Content)
		switch {
		case strings.HasPrefix(text, "read"):
			openaiReply(turn{calls: []call{{"call-r", "read_file", `{"path":"notes.txt"}`}}, in: 20, out: 5})(w, r)
		case strings.HasPrefix(text, "slow"):
			openaiReply(turn{text: "a run that outlived its client", gate: gate, in: 10, out: 6})(w, r)
		case strings.HasPrefix(text, "write"):
			openaiReply(turn{calls: []call{{"call-w", "write_file", `{"path":"out.txt","content":"approved"}`}}, in: 20, out: 5})(w, r)
		default:
			openaiReply(turn{text: "echo: " + text, in: 10, out: 3})(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestServeAGUI drives the built agcore serve's AG-UI endpoint with the
// protocol's own client (@ag-ui/client's HttpAgent, which verifies the
// event sequence): a run whose tool call the server runs (tool call
// start, args, end, result, then the answer), the state snapshot and the
// agent as a step; a second run on the thread continuing its session; and
// a call that needs approval, announced as an interrupt (a CUSTOM event)
// the client answers through the approvals API, after which the run goes
// on to its end; and a run the client left mid-answer goes on, and a
// client pointed at the run's URL reconnects to it from its first event to
// its end.
func TestServeAGUI(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("AGCORE_AGUI_CLIENT_DIR")
	if dir == "" {
		testenv.Missing(t, "the @ag-ui/client npm package is not installed: eval \"$(.ci/agui-client-setup.sh)\"")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hi from the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["AGCORE_MODEL"] = "local-model"
	provider := aguiProvider(t)
	c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
	base, _, _ := c.startServe(t, "--store", "memory:", "--tools", "read_file,write_file", "--root", root)
	script, _ := filepath.Abs("../../serve/testdata/agui-client.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", script)
	node.Env = append(os.Environ(), "AGCORE_BASE="+base, "AGCORE_RELEASE="+provider.URL+"/release")
	var stderr strings.Builder
	node.Stderr = &stderr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var r struct {
		Tool, Next, Approval struct {
			Events   []string
			Messages []struct {
				Role    string
				Content *string
				Tools   []string
			}
		}
		Decided   []int
		State     map[string]any
		Reconnect struct {
			Left   string
			Events []string
			Text   string
		}
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	seq := func(evs []string) string { return strings.Join(evs, " ") }
	want := "RUN_STARTED STATE_SNAPSHOT STEP_STARTED TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT"
	if !strings.HasPrefix(seq(r.Tool.Events), want) || !strings.HasSuffix(seq(r.Tool.Events), "TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED") {
		t.Fatalf("the tool run's events: %s", seq(r.Tool.Events))
	}
	text := ""
	for _, m := range r.Tool.Messages {
		if m.Role == "assistant" && m.Content != nil {
			text += *m.Content
		}
	}
	if text != "the tool said: hi from the notes" {
		t.Fatalf("the tool run's messages: %+v", r.Tool.Messages)
	}
	if len(r.Next.Messages) == 0 || r.Next.Messages[len(r.Next.Messages)-1].Content == nil || *r.Next.Messages[len(r.Next.Messages)-1].Content != "echo: hello again" {
		t.Fatalf("the second run: %+v", r.Next)
	}
	if !strings.Contains(seq(r.Approval.Events), "CUSTOM") || !strings.HasSuffix(seq(r.Approval.Events), "RUN_FINISHED") || len(r.Decided) != 1 || r.Decided[0] != 200 {
		t.Fatalf("the approval run: %s, decided %v", seq(r.Approval.Events), r.Decided)
	}
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "approved" {
		t.Fatalf("the approved call's file: %q %v", b, err)
	}
	rc := r.Reconnect
	if rc.Left == "" || len(rc.Events) == 0 || rc.Events[0] != "RUN_STARTED" || rc.Events[len(rc.Events)-1] != "RUN_FINISHED" || rc.Text != "a run that outlived its client" {
		t.Fatalf("the run reconnected to: %+v", rc)
	}
	if r.State["topic"] != "notes" {
		t.Fatalf("the state after the runs: %v", r.State)
	}
}

// TestServeAGUICancel: two built agcore serve processes over PostgreSQL;
// an AG-UI run on A whose client left waits in its model call; POST
// /agui/agcore/runs/RUN/cancel on B stops it where it runs (A): the
// answer is "cancelled", the run's events read on B end RUN_ERROR
// "cancelled", and the model call was closed. Another principal's
// cancel of the run, or one of an ended run, is a 404.
func TestServeAGUICancel(t *testing.T) {
	t.Parallel()
	storeURL := replicaStore(t, "postgres")
	provider := aguiProvider(t) // "slow ..." waits for /release, which never comes
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["AGCORE_MODEL"] = "local-model"
	c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
	c.env["AGCORE_SERVE_TOKENS"] = "alice=token-a,bob=token-b"
	args := []string{"--store", storeURL, "--tools", ""}
	baseA, _, _ := c.startServe(t, args...)
	baseB, _, _ := c.startServe(t, args...)
	call := func(base, token, path string, body any) *http.Response {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	run := fmt.Sprintf("run-%d", time.Now().UnixNano())
	resp := call(baseA, "token-a", "/agui/agcore", map[string]any{"threadId": "t-" + run, "runId": run, "state": map[string]any{},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "slow please"}}, "tools": []any{}})
	if resp.StatusCode != 200 {
		t.Fatalf("POST /agui/agcore on A: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "STEP_STARTED") {
	}
	resp.Body.Close() // the client leaves; the run goes on on A

	if r := call(baseB, "token-b", "/agui/agcore/runs/"+run+"/cancel", nil); r.StatusCode != 404 {
		r.Body.Close()
		t.Fatalf("bob cancelling alice's run: %d, want 404", r.StatusCode)
	} else {
		r.Body.Close()
	}
	r := call(baseB, "token-a", "/agui/agcore/runs/"+run+"/cancel", nil)
	var got struct {
		Status string
		Event  struct{ Type, Code string }
	}
	_ = json.NewDecoder(r.Body).Decode(&got)
	r.Body.Close()
	if r.StatusCode != 200 || got.Status != "cancelled" || got.Event.Type != "RUN_ERROR" || got.Event.Code != "cancelled" {
		t.Fatalf("cancel on B: %d %+v", r.StatusCode, got)
	}
	again := call(baseB, "token-a", "/agui/agcore/runs/"+run+"/cancel", nil)
	again.Body.Close()
	if again.StatusCode != 404 {
		t.Fatalf("cancelling the ended run: %d, want 404", again.StatusCode)
	}
}
