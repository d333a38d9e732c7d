package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A turn whose tool loop would cross a spending limit on its fourth model
// call sends three, through the built binary: exit status 1, the error
// names the flag of the limit, the done event (finish_reason "budget",
// what is left of the limit) says the turn was stored, and the stored
// session is well-formed, every tool call answered.
func TestRunStopsAtItsBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		in, out  int // what each scripted call reports
		flag     string
		leftKind string
	}{
		// gpt-4o-mini: $0.15 in, $0.60 out per million; 16,384 output
		// tokens at most. Each call reports 100 input and 10,000 output
		// tokens ($0.006); the worst case of the next is its input (a
		// few hundred tokens) and 16,384 output tokens, under $0.0102:
		// after two calls $0.0222 fits $0.025, after three $0.0282 does
		// not.
		{"max-cost", []string{"--max-cost", "0.025"}, 100, 10_000, "--max-cost", "cost_usd"},
		// Each call uses 10,100 tokens; the worst case of the next is its
		// input and 16,384: after two calls under 40,000 fits 42,000,
		// after three, over 46,684, it does not.
		{"token-budget", []string{"--token-budget", "42000"}, 100, 10_000, "--token-budget", "tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var replies []reply
			for _, id := range []string{"call_1", "call_2", "call_3", "call_4"} {
				replies = append(replies, openaiReply(turn{calls: []call{{id, "list_dir", `{"path":"."}`}}, in: tc.in, out: tc.out}))
			}
			srv := newFake(t, replies...)
			c := newCLI(t).openai(srv, "sk-test")
			writeFiles(t, c.dir, map[string]string{"a.txt": "a"})
			args := append([]string{"run", "--json", "--session", "loop"}, tc.args...)
			r := c.run("", append(args, "list the files, again and again")...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
			}
			if n := len(srv.got()); n != 3 {
				t.Errorf("%d model calls sent, want 3", n)
			}
			evs := events(t, r.stdout)
			done := ofType(evs, "done")
			if len(done) != 1 || done[0]["finish_reason"] != "budget" {
				t.Fatalf("done events %v, want one with finish_reason budget", done)
			}
			run, _ := done[0]["budget"].(map[string]any)["run"].(map[string]any)
			if _, ok := run[tc.leftKind]; !ok {
				t.Errorf("done's budget %v, want what is left of the run's %s", done[0]["budget"], tc.leftKind)
			}
			e := last(t, evs)
			if msg, _ := e["message"].(string); e.typ() != "error" || e["code"] != "budget" || !strings.Contains(msg, "spending limit "+tc.flag+" reached") {
				t.Errorf("last event %v, want a budget error naming %s", e, tc.flag)
			}
			s := c.show("loop")
			if len(s.Messages) != 7 {
				t.Fatalf("stored %d messages, want 7 (the prompt, three calls, three results)", len(s.Messages))
			}
			var answered = map[string]bool{}
			for _, raw := range s.Messages {
				var m struct {
					Role       string `json:"role"`
					ToolCallID string `json:"tool_call_id"`
					Content    []struct {
						Type string `json:"type"`
						ID   string `json:"id"`
					} `json:"content"`
				}
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				for _, b := range m.Content {
					if b.Type == "tool_use" {
						answered[b.ID] = answered[b.ID] || false
					}
				}
				if m.ToolCallID != "" {
					answered[m.ToolCallID] = true
				}
			}
			for id, ok := range answered {
				if !ok {
					t.Errorf("tool call %s is not answered in the stored session", id)
				}
			}
			if len(answered) != 3 {
				t.Errorf("%d tool calls stored, want 3", len(answered))
			}

			// Text mode: the same stop, the session named on stderr.
			srv.add(replies...)
			r = c.run("", append([]string{"run", "--session", "loop2"}, append(tc.args, "again")...)...)
			t.Logf("text mode stderr:\n%s", r.stderr)
			if r.code != 1 || !strings.Contains(r.stderr, "error (budget): spending limit "+tc.flag+" reached") || !strings.Contains(r.stderr, "session loop2") {
				t.Errorf("text mode: exit %d\nstderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// sessions list shows each session's spend against the session limits of
// the config file (or --session-max-cost, --session-token-budget).
func TestSessionsListShowsSpendAgainstTheLimit(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "Hi.", in: 1000, out: 200}))
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--session", "limited", "hello")
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(`{"session_token_budget": 50000, "session_max_cost": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.ok("sessions", "list")
	if !strings.Contains(r.stdout, "1,200/50,000") || !strings.Contains(r.stdout, "/$1.00") {
		t.Errorf("sessions list:\n%s", r.stdout)
	}
	r = c.ok("sessions", "list", "--json", "--session-token-budget", "9000")
	var out struct {
		Limits map[string]any `json:"session_limits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Limits["tokens"] != 9000.0 || out.Limits["cost_usd"] != 1.0 {
		t.Errorf("sessions list --json: %v %s", err, r.stdout)
	}
}

// chat keeps a session limit across its turns: the turn that could cross
// it is not sent, the error names the flag, and chat goes on (and ends
// normally).
func TestChatKeepsTheSessionBudget(t *testing.T) {
	t.Parallel()
	// Each answer reports 100 input and 10,000 output tokens; the worst
	// case of a call is its input and 16,384 output tokens: the first fits
	// 20,000, the second (10,100 spent) does not.
	srv := newFake(t, openaiReply(turn{text: "One.", in: 100, out: 10_000}), openaiReply(turn{text: "Two.", in: 100, out: 10_000}))
	c := newCLI(t).openai(srv, "sk-test")
	r := c.run("first\nsecond\n", "chat", "--session", "capped", "--tools", "", "--session-token-budget", "20000")
	if r.code != 0 || len(srv.got()) != 1 || !strings.Contains(r.stderr, "error (budget): spending limit --session-token-budget reached: the session token limit of 20000 tokens would be crossed: 10100 tokens spent") {
		t.Errorf("exit %d, %d model calls\nstdout:\n%s\nstderr:\n%s", r.code, len(srv.got()), r.stdout, r.stderr)
	}
}
