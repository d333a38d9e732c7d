package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

func threeTurns(t *testing.T, st session.Store, id, owner string) {
	t.Helper()
	for i := 1; i <= 3; i++ {
		err := st.Append(context.Background(), id, session.Turn{ID: fmt.Sprint("t", i), Owner: owner, Model: "m",
			Messages: []llm.Message{llm.UserText(fmt.Sprint("q", i)), llm.AssistantText(fmt.Sprint("a", i))}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func texts(s *session.Session) string {
	var out []string
	for _, m := range s.Messages {
		out = append(out, m.Text())
	}
	return fmt.Sprint(out)
}

// TestFork: a branch has the source's first turns, its owner and model,
// and goes on from there; the source is unchanged.
func TestFork(t *testing.T) {
	tests := []struct {
		name  string
		at    int
		turns int
		want  string
		err   error
	}{
		{"at the first turn", 1, 1, "[q1 a1]", nil},
		{"at a middle turn", 2, 2, "[q1 a1 q2 a2]", nil},
		{"at the last turn", 3, 3, "[q1 a1 q2 a2 q3 a3]", nil},
		{"all of it (0)", 0, 3, "[q1 a1 q2 a2 q3 a3]", nil},
		{"past the end", 4, 0, "", session.ErrNoTurn},
		{"before the start", -1, 0, "", session.ErrNoTurn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			threeTurns(t, st, "src", "alice")
			got, err := session.Fork(ctx, st, "src", "dst", tc.at)
			if !errors.Is(err, tc.err) || (tc.err != nil) != (err != nil) {
				t.Fatalf("Fork: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if got.Turns != tc.turns || texts(got) != tc.want || got.Owner != "alice" || got.Model != "m" {
				t.Fatalf("branch: %d turns %s owner %q model %q", got.Turns, texts(got), got.Owner, got.Model)
			}
			if src, _ := st.Load(ctx, "src"); src.Turns != 3 || len(src.Messages) != 6 {
				t.Fatalf("the source changed: %d turns", src.Turns)
			}
			// The branch goes on.
			if err := st.Append(ctx, "dst", session.Turn{ID: "next", Owner: "alice", Messages: []llm.Message{llm.UserText("other"), llm.AssistantText("b")}}); err != nil {
				t.Fatal(err)
			}
			if again, _ := st.Load(ctx, "dst"); again.Turns != tc.turns+1 {
				t.Fatalf("the branch after a turn: %d turns", again.Turns)
			}
		})
	}
}

// TestForkRules: the branch's id must be free; another owner's session
// is not found through a scoped store; a history whose turns do not each
// begin with a user message forks at its end only.
func TestForkRules(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	threeTurns(t, st, "src", "alice")
	threeTurns(t, st, "taken", "alice")
	if _, err := session.Fork(ctx, st, "src", "taken", 1); !errors.Is(err, session.ErrExists) {
		t.Fatalf("onto an existing session: %v", err)
	}
	if _, err := session.Fork(ctx, session.Scoped(st, "bob"), "src", "bobs", 1); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("bob forks alice's session: %v", err)
	}
	if got, err := session.Fork(ctx, session.Scoped(st, "alice"), "src", "hers", 2); err != nil || got.Owner != "alice" || got.Turns != 2 {
		t.Fatalf("alice forks hers: %+v %v", got, err)
	}
	// A turn that answered function calls begins with a tool message.
	err := st.Append(ctx, "calls", session.Turn{ID: "1", Messages: []llm.Message{llm.UserText("q"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c1", Name: "f"}}}}})
	if err == nil {
		err = st.Append(ctx, "calls", session.Turn{ID: "2", Messages: []llm.Message{llm.ToolResultText("c1", "r", false), llm.AssistantText("done")}})
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Fork(ctx, st, "calls", "c-1", 1); !errors.Is(err, session.ErrNoTurn) {
		t.Fatalf("an unknown turn end: %v", err)
	}
	if got, err := session.Fork(ctx, st, "calls", "c-2", 2); err != nil || len(got.Messages) != 4 {
		t.Fatalf("at the end: %+v %v", got, err)
	}
}
