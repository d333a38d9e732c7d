package sessiontest

import (
	"context"
	"fmt"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// testFork checks session.Fork over the store: the branch holds the
// source's first turns, with its owner, readable through the owner's
// scoped view only, and goes on from there; the source is unchanged.
func testFork(t *testing.T, s session.Store) {
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		err := s.Append(ctx, "fork-src", session.Turn{ID: fmt.Sprint("t", i), Owner: "alice",
			Messages: []llm.Message{llm.UserText(fmt.Sprint("q", i)), llm.AssistantText(fmt.Sprint("a", i))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := session.Fork(ctx, session.Scoped(s, "alice"), "fork-src", "fork-dst", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != 2 || len(got.Messages) != 4 || got.Messages[3].Text() != "a2" || got.Owner != "alice" {
		t.Fatalf("the branch: %d turns, %d messages, owner %q", got.Turns, len(got.Messages), got.Owner)
	}
	if _, err := session.Scoped(s, "bob").Load(ctx, "fork-dst"); err == nil {
		t.Fatal("another owner reads the branch")
	}
	if err := s.Append(ctx, "fork-dst", session.Turn{ID: "b3", Owner: "alice", Messages: []llm.Message{llm.UserText("other"), llm.AssistantText("b3")}}); err != nil {
		t.Fatal(err)
	}
	src, err := s.Load(ctx, "fork-src")
	if err != nil || src.Turns != 3 || len(src.Messages) != 6 || src.Messages[5].Text() != "a3" {
		t.Fatalf("the source after the branch went on: %+v %v", src, err)
	}
	dst, err := s.Load(ctx, "fork-dst")
	if err != nil || dst.Turns != 3 || dst.Messages[5].Text() != "b3" {
		t.Fatalf("the branch after its own turn: %+v %v", dst, err)
	}
}
