package main_test

import (
	"context"
	"encoding/json"
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
	"github.com/agcore/agcore/session"
)

// backgroundProvider answers "slow ..." with a story whose text after its
// first piece waits until POST /release; "hang ..." with an answer that
// never ends; anything else with an echo.
func backgroundProvider(t *testing.T) *httptest.Server {
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
		last := ""
		var users []string
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = contentText(m.Content)
				users = append(users, last)
			}
		}
		switch {
		case strings.HasPrefix(last, "history"):
			// The user messages the turn saw: its conversation's history.
			openaiReply(turn{text: "history: " + strings.Join(users, " | "), in: 10, out: 3})(w, r)
		case strings.HasPrefix(last, "slow"):
			openaiReply(turn{text: "once upon a time a turn outlived its connection", gate: gate, in: 10, out: 9})(w, r)
		case strings.HasPrefix(last, "hang"):
			openaiReply(turn{text: "a long answer that never ends", hang: true, in: 10, out: 1})(w, r)
		default:
			openaiReply(turn{text: "echo: " + last, in: 10, out: 3})(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestServeBackgroundNodeSDK drives background responses with OpenAI's
// Node SDK across two built agcore serve processes over one PostgreSQL
// store, and over one Redis store: a streamed background turn dropped on
// A goes on without a client and is resumed on B after the last event
// read (responses.retrieve with stream and starting_after), to its end;
// it is polled on A and streamed again whole after its end; a background
// turn is cancelled through B (responses.cancel) while it runs on A; and
// A is SIGKILLed mid-turn: the turn's stream, resumed on B, ends
// response.failed (replica_lost) once A's lease passed, the polled
// response is failed, and nothing of the turn is stored.
func TestServeBackgroundNodeSDK(t *testing.T) {
	t.Parallel()
	nodeDir := os.Getenv("AGCORE_OPENAI_NODE_DIR")
	if nodeDir == "" {
		testenv.Missing(t, "the openai npm package is not installed: eval \"$(.ci/openai-node-setup.sh)\"")
	}
	script, _ := filepath.Abs("../../serve/testdata/openai-node-background.mjs")
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			storeURL := replicaStore(t, kind)
			provider := backgroundProvider(t)
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "compatible"
			c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
			c.env["AGCORE_MODEL"] = "local-model"
			args := []string{"--store", storeURL, "--tools", "", "--background-limit", "4", "--event-log-retention", "1h"}
			baseA, cmdA, _ := c.startServe(t, args...)
			baseB, _, _ := c.startServe(t, args...)
			node := func(mode string, env ...string) map[string]any {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", script)
				cmd.Env = append(os.Environ(), "MODE="+mode, "AGCORE_A="+baseA+"/v1", "AGCORE_B="+baseB+"/v1", "AGCORE_MODEL=agcore",
					"AGCORE_RELEASE="+provider.URL+"/release")
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

			// Resumed on the other process; polled; cancelled.
			r := node("resume")
			js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
			created := r["created"].(map[string]any)
			if created["status"] != "in_progress" || created["background"] != true {
				t.Fatalf("created: %v", created)
			}
			first, rest := r["first"].([]any), r["rest"].([]any)
			all := append(append([]any{}, first...), rest...)
			text := ""
			for i, e := range all {
				ev := e.(map[string]any)
				if int(ev["seq"].(float64)) != i {
					t.Fatalf("event %d has the sequence number %v: %s", i, ev["seq"], js(all))
				}
				if ev["type"] == "response.output_text.delta" {
					text += ev["delta"].(string)
				}
			}
			if last := rest[len(rest)-1].(map[string]any); last["type"] != "response.completed" || text != "once upon a time a turn outlived its connection" {
				t.Fatalf("resumed on B: %q, %s", text, js(rest))
			}
			polled := r["polled"].(map[string]any)
			if polled["status"] != "completed" || polled["text"] != text || polled["background"] != true {
				t.Fatalf("polled on A: %v", polled)
			}
			if int(r["again"].(float64)) != len(all)-1 {
				t.Fatalf("streamed again after the end from event 1: %v events, want %d", r["again"], len(all)-1)
			}
			if q := r["queued"].(map[string]any); q["status"] != "in_progress" || q["background"] != true {
				t.Fatalf("a background turn to cancel: %v", q)
			}
			if c := r["cancelled"].(map[string]any); c["status"] != "cancelled" || r["cancelledPolled"] != "cancelled" {
				t.Fatalf("cancelled through B: %v, polled %v", c, r["cancelledPolled"])
			}

			// A SIGKILLed mid-turn.
			s := node("start")
			id, after := s["id"].(string), int(s["after"].(float64))
			if err := cmdA.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmdA.Wait()
			start := time.Now()
			l := node("lost", "RESPONSE_ID="+id, "AFTER="+js(after))
			t.Logf("%s: the killed process's turn ended failed on the other %v after the kill", kind, time.Since(start).Round(100*time.Millisecond))
			lost := l["rest"].([]any)
			end := lost[len(lost)-1].(map[string]any)
			if int(lost[0].(map[string]any)["seq"].(float64)) <= after || end["type"] != "response.failed" || end["status"] != "failed" ||
				!strings.Contains(js(end["error"]), "replica_lost") {
				t.Fatalf("the killed turn resumed on B: %s", js(lost))
			}
			if p := l["polled"].(map[string]any); p["status"] != "failed" || !strings.Contains(js(p["error"]), "replica_lost") {
				t.Fatalf("the killed turn polled on B: %v", p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st, err := session.Open(ctx, storeURL)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if sess, err := st.Load(ctx, "lostconv"); err == nil && sess.Turns != 0 {
				t.Fatalf("the killed turn left %d turns", sess.Turns)
			}
		})
	}
}
