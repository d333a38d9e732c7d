package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
)

// TestFork: POST /api/sessions/{id}/fork makes a new session with the
// session's first turns, the original unchanged; the page's next chat on
// the fork is its next turn (what "edit an earlier message" and
// "regenerate" send), seeing only the kept turns. The stored transcript
// numbers the turns its user items begin.
func TestFork(t *testing.T) {
	f := newFixture(t, llmtest.New(llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		// The answer names the history it saw: its user messages.
		var users []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				users = append(users, m.Text())
			}
		}
		return &llm.Response{Message: llm.AssistantText(fmt.Sprint(users)), FinishReason: llm.FinishStop}, nil
	})))
	for i := 1; i <= 3; i++ {
		err := f.store.Append(context.Background(), "s-1", session.Turn{ID: fmt.Sprint("t", i), Time: time.Now(),
			Messages: []llm.Message{llm.UserText(fmt.Sprint("question ", i)), llm.AssistantText(fmt.Sprint("answer ", i))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := decode(t, f.do(t, context.Background(), "GET", "/api/sessions/s-1", "", nil), 200)
	var turns []float64
	for _, it := range got["items"].([]any) {
		if it := it.(map[string]any); it["type"] == "user" {
			turns = append(turns, it["turn"].(float64))
		}
	}
	if fmt.Sprint(turns) != "[1 2 3]" {
		t.Fatalf("the user items' turns: %v", turns)
	}

	// Edit the third message: fork after turn 2, send the new text there.
	forked := decode(t, f.do(t, context.Background(), "POST", "/api/sessions/s-1/fork", "", map[string]any{"turns": 2}), 201)
	branch, _ := forked["session"].(string)
	if branch == "" || branch == "s-1" || forked["turns"] != 2.0 {
		t.Fatalf("fork answered %v", forked)
	}
	evs := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"session": branch, "message": "question 3, edited"})))
	if text := textOf(evs); text != "[question 1 question 2 question 3, edited]" {
		t.Fatalf("the turn on the fork saw %q", text)
	}
	b, err := f.store.Load(context.Background(), branch)
	if err != nil || b.Turns != 3 {
		t.Fatalf("the fork: %v turns, %v", b, err)
	}
	orig, err := f.store.Load(context.Background(), "s-1")
	if err != nil || orig.Turns != 3 || orig.Messages[4].Text() != "question 3" || len(orig.Messages) != 6 {
		t.Fatalf("the original changed: %+v, %v", orig, err)
	}

	for _, tt := range []struct {
		name, path string
		body       any
		status     int
	}{
		{"before the first turn", "/api/sessions/s-1/fork", map[string]any{"turns": 0}, 400},
		{"past the last turn", "/api/sessions/s-1/fork", map[string]any{"turns": 4}, 409},
		{"a missing session", "/api/sessions/nope/fork", map[string]any{"turns": 1}, 404},
		{"an agent without sessions", "/api/sessions/s-1/fork?agent=plain", map[string]any{"turns": 1}, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			decode(t, f.do(t, context.Background(), "POST", tt.path, "", tt.body), tt.status)
		})
	}
}

// textOf joins the text events of a chat stream.
func textOf(evs []event) string {
	var s string
	for _, ev := range evs {
		if ev.Type == "text" {
			s += ev.Text
		}
	}
	return s
}
