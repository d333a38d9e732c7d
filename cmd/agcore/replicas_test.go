package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session"
)

// replicaProvider is an OpenAI-compatible provider for the replica
// tests, answering from the request alone: "write ..." gets a write_file
// call, whose result gets "written"; "hang ..." gets an answer that stops
// after its first piece until the client goes away; anything else is
// echoed.
func replicaProvider(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			openaiReply(turn{text: "written", in: 30, out: 1})(w, r)
			return
		}
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = contentText(m.Content)
			}
		}
		switch {
		case strings.HasPrefix(last, "write"):
			openaiReply(turn{calls: []call{{"call-w", "write_file", `{"path":"out.txt","content":"from a replica"}`}}, in: 20, out: 5})(w, r)
		case strings.HasPrefix(last, "hang"):
			openaiReply(turn{text: "a long answer that never ends", hang: true, in: 10, out: 1})(w, r)
		default:
			openaiReply(turn{text: "echo: " + last, in: 10, out: 3})(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// replicaStore returns the URL of a store of the test's own: a
// PostgreSQL schema (dropped after) or a Redis key prefix (its keys
// deleted after) in the database AGCORE_TEST_REDIS names.
func replicaStore(t *testing.T, kind string) string {
	t.Helper()
	env := map[string]string{"postgres": "AGCORE_TEST_POSTGRES", "redis": "AGCORE_TEST_REDIS"}[kind]
	raw := os.Getenv(env)
	if raw == "" {
		testenv.Missing(t, "%s is not set: set it to run the replica tests over %s", env, kind)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch kind {
	case "postgres":
		schema := pgtest.Schema(t, raw, "h_replicas_")
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
	case "redis":
		return redisPrefix(t, ctx, raw, "replicas_")
	}
	return u.String()
}

// replicaClient talks to the replicas over HTTP, each request bounded.
type replicaClient struct {
	t  *testing.T
	hc *http.Client
}

func (c replicaClient) do(method, u string, body any) (int, map[string]any) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		c.t.Fatalf("%s %s: %d %s", method, u, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

// rpc calls the A2A JSON-RPC method of agent agcore and returns its result.
func (c replicaClient) rpc(base, method string, params any) map[string]any {
	c.t.Helper()
	code, out := c.do("POST", base+"/a2a/agcore", map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	res, ok := out["result"].(map[string]any)
	if code != 200 || !ok {
		c.t.Fatalf("%s: %d %v", method, code, out)
	}
	return res
}

func a2aMessage(text, taskID string) map[string]any {
	m := map[string]any{"kind": "message", "role": "user", "messageId": randomHex(8), "parts": []any{map[string]any{"kind": "text", "text": text}}}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return map[string]any{"message": m}
}

func taskState(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

func taskAnswer(task map[string]any) string {
	var b strings.Builder
	arts, _ := task["artifacts"].([]any)
	for _, a := range arts {
		parts, _ := a.(map[string]any)["parts"].([]any)
		for _, p := range parts {
			s, _ := p.(map[string]any)["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func respText(resp map[string]any) string {
	var b strings.Builder
	items, _ := resp["output"].([]any)
	for _, it := range items {
		content, _ := it.(map[string]any)["content"].([]any)
		for _, c := range content {
			s, _ := c.(map[string]any)["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestServeReplicas runs two agcore serve processes over one PostgreSQL
// store (and two over one Redis store), sending requests to them in turn:
// a Responses conversation continued by previous_response_id across them,
// every response readable from both; an A2A task started on one answered
// by tasks/get on the other; tool calls waiting for approval on one
// decided through the other (the approvals API, and an A2A message), once;
// one process SIGKILLed mid-turn, leaving only whole turns stored and the
// conversation going on through the other; and a process restarted,
// still answering GET /v1/responses/{id} and tasks/get.
func TestServeReplicas(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			storeURL := replicaStore(t, kind)
			provider := replicaProvider(t)
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "compatible"
			c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
			c.env["AGCORE_MODEL"] = "local-model"
			root := t.TempDir()
			args := []string{"--store", storeURL, "--tools", "read_file,write_file", "--root", root}
			baseA, cmdA, _ := c.startServe(t, args...)
			baseB, _, _ := c.startServe(t, args...)
			hc := &http.Client{Timeout: time.Minute}
			cl := replicaClient{t: t, hc: hc}
			bases := []string{baseA, baseB}

			// A Responses conversation, its turns alternating between the two.
			prev := ""
			var ids []string
			for i := range 4 {
				body := map[string]any{"model": "agcore", "input": fmt.Sprint("turn ", i)}
				if prev != "" {
					body["previous_response_id"] = prev
				}
				code, resp := cl.do("POST", bases[i%2]+"/v1/responses", body)
				if code != 200 || respText(resp) != fmt.Sprint("echo: turn ", i) {
					t.Fatalf("turn %d on replica %d: %d %v", i, i%2, code, resp)
				}
				prev = resp["id"].(string)
				ids = append(ids, prev)
			}
			for i, id := range ids {
				if !strings.HasSuffix(id, fmt.Sprintf("_%d", i+1)) {
					t.Errorf("response %d has the id %s", i+1, id)
				}
				for _, base := range bases {
					code, resp := cl.do("GET", base+"/v1/responses/"+id, nil)
					if code != 200 || resp["id"] != id || respText(resp) != fmt.Sprint("echo: turn ", i) {
						t.Fatalf("GET %s from %s: %d %v", id, base, code, resp)
					}
				}
			}

			// An A2A task started on A, read on B.
			task := cl.rpc(baseA, "message/send", a2aMessage("hello a2a", ""))
			taskID := task["id"].(string)
			if got := cl.rpc(baseB, "tasks/get", map[string]any{"id": taskID}); taskState(got) != "completed" || taskAnswer(got) != "echo: hello a2a" {
				t.Fatalf("tasks/get on B: %v", got)
			}

			// A call waiting for approval on A, decided through B's approvals API.
			done := make(chan map[string]any, 1)
			go func() {
				_, resp := cl.do("POST", baseA+"/v1/responses", map[string]any{"model": "agcore", "input": "write the file"})
				done <- resp
			}()
			var pending []any
			for deadline := time.Now().Add(30 * time.Second); len(pending) == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the call waiting on A never showed on B")
				}
				_, out := cl.do("GET", baseB+"/v1/approvals", nil)
				pending, _ = out["data"].([]any)
			}
			approvalID := pending[0].(map[string]any)["id"].(string)
			if code, out := cl.do("POST", baseB+"/v1/approvals/"+approvalID, map[string]any{"approved": true}); code != 200 || out["approved"] != true {
				t.Fatalf("deciding on B: %d %v", code, out)
			}
			if code, _ := cl.do("POST", baseA+"/v1/approvals/"+approvalID, map[string]any{"approved": false}); code != 404 {
				t.Fatalf("a second decision on A: %d, want 404", code)
			}
			select {
			case resp := <-done:
				if resp["status"] != "completed" || respText(resp) != "written" {
					t.Fatalf("A's turn after B's decision: %v", resp)
				}
			case <-time.After(time.Minute):
				t.Fatal("A's turn never went on after B's decision")
			}
			if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "from a replica" {
				t.Fatalf("out.txt: %q, %v", b, err)
			}
			os.Remove(filepath.Join(root, "out.txt"))

			// An A2A task waiting for input on A, decided by a message to B.
			task = cl.rpc(baseA, "message/send", a2aMessage("write through a2a", ""))
			if taskState(task) != "input-required" {
				t.Fatalf("the A2A task on A: %v", task)
			}
			a2aTask := task["id"].(string)
			task = cl.rpc(baseB, "message/send", a2aMessage("approve", a2aTask))
			if taskState(task) != "completed" || taskAnswer(task) != "written" {
				t.Fatalf("the A2A decision on B: %v", task)
			}
			if got := cl.rpc(baseA, "tasks/get", map[string]any{"id": a2aTask}); taskState(got) != "completed" {
				t.Fatalf("tasks/get on A after B's decision: %v", got)
			}

			// A SIGKILLed mid-turn: nothing of its turn is stored, and the
			// conversation goes on through B.
			killResponseMidTurn(t, hc, baseA, cmdA, "killconv")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st, err := session.Open(ctx, storeURL)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if sess, err := st.Load(ctx, "killconv"); err == nil && (sess.Turns != 0 || len(sess.Messages) != 0) {
				t.Fatalf("the killed turn left %d turns, %d messages", sess.Turns, len(sess.Messages))
			}
			start := time.Now()
			code, resp := cl.do("POST", baseB+"/v1/responses", map[string]any{"model": "agcore", "input": "after the kill", "conversation": "killconv"})
			if code != 200 || resp["id"] != "resp_killconv_1" || respText(resp) != "echo: after the kill" {
				t.Fatalf("continuing on B after the kill: %d %v", code, resp)
			}
			t.Logf("%s: the conversation of the killed process went on through the other after %v (its claim's lease)", kind, time.Since(start).Round(100*time.Millisecond))
			if sess, err := st.Load(ctx, "killconv"); err != nil || sess.Turns != 1 || len(sess.Messages) != 2 {
				t.Fatalf("killconv after the kill: %+v, %v", sess, err)
			}

			// A restarted: it answers for what the processes before it did.
			baseA2, _, _ := c.startServe(t, args...)
			for i, id := range ids {
				if code, resp := cl.do("GET", baseA2+"/v1/responses/"+id, nil); code != 200 || respText(resp) != fmt.Sprint("echo: turn ", i) {
					t.Fatalf("GET %s after the restart: %d %v", id, code, resp)
				}
			}
			for _, id := range []string{taskID, a2aTask} {
				if got := cl.rpc(baseA2, "tasks/get", map[string]any{"id": id}); taskState(got) != "completed" {
					t.Fatalf("tasks/get %s after the restart: %v", id, got)
				}
			}
		})
	}
}

// killResponseMidTurn starts a streamed Responses turn of conversation
// conv on base ("hang": its answer never ends), SIGKILLs the server once
// the answer has begun, and waits for the process to end.
func killResponseMidTurn(t *testing.T, hc *http.Client, base string, cmd *exec.Cmd, conv string) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"agcore","stream":true,"input":"hang on","conversation":%q}`, conv)
	resp, err := hc.Post(base+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "response.output_text.delta") {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the killed server did not end")
	}
}
