package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSessionsFork: agcore sessions fork branches a session at a turn; the
// branch goes on with agcore run --session while the source keeps its
// turns; a turn that does not exist is a usage error.
func TestSessionsFork(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Paris.", in: 10, out: 2}),
		openaiReply(turn{text: "Lyon.", in: 10, out: 2}),
		openaiReply(turn{text: "Marseille.", in: 10, out: 2}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--tools", "", "--session", "trip", "The capital?")
	c.ok("run", "--tools", "", "--session", "trip", "Another city?")
	r := c.run("", "sessions", "fork", "trip", "--at", "1", "--to", "trip-b")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "trip-b" || !strings.Contains(r.stderr, "at turn 1") {
		t.Fatalf("fork: %d %q %q", r.code, r.stdout, r.stderr)
	}
	c.ok("run", "--tools", "", "--session", "trip-b", "A third one?")
	if got := srv.messages(2); strings.Contains(got, "Another city?") || !strings.Contains(got, "The capital?") {
		t.Fatalf("the branch's turn saw: %s", got)
	}
	show := func(id string) (turns int, texts []string) {
		var s struct {
			Turns    int
			Messages []struct {
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal([]byte(c.ok("sessions", "show", "--json", id).stdout), &s); err != nil {
			t.Fatal(err)
		}
		for _, m := range s.Messages {
			for _, b := range m.Content {
				texts = append(texts, b.Text)
			}
		}
		return s.Turns, texts
	}
	if n, texts := show("trip-b"); n != 2 || strings.Join(texts, "|") != "The capital?|Paris.|A third one?|Marseille." {
		t.Fatalf("the branch: %d turns %q", n, texts)
	}
	if n, texts := show("trip"); n != 2 || strings.Join(texts, "|") != "The capital?|Paris.|Another city?|Lyon." {
		t.Fatalf("the source: %d turns %q", n, texts)
	}
	if r := c.run("", "sessions", "fork", "trip", "--at", "9"); r.code != 2 || !strings.Contains(r.stderr, "no such turn") {
		t.Fatalf("a turn that does not exist: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "sessions", "fork", "trip", "--to", "trip-b"); r.code != 1 || !strings.Contains(r.stderr, "exists already") {
		t.Fatalf("onto an existing id: %d %q", r.code, r.stderr)
	}
}
