package a2aserve_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
)

// seenUsers answers with the user messages of its request: the history
// the turn saw.
func seenUsers() llmtest.Step {
	return llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		var users []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				users = append(users, m.Text())
			}
		}
		return &llm.Response{Message: llm.AssistantText("saw " + strings.Join(users, " + ")), FinishReason: llm.FinishStop}, nil
	})
}

// TestNewContextFromTask: a message with referenceTaskIds naming an
// earlier completed task and no context of its own starts a new context
// whose history is the task's conversation up to that task (not what its
// context said after it); the original context goes on unchanged. A
// reference in the task's own context is a plain refinement; a reference
// to a task of another principal, or to none, is rejected.
func TestNewContextFromTask(t *testing.T) {
	f := newFixture(t, seenUsers(), seenUsers(), seenUsers(), seenUsers())
	c := f.client("alice")
	first := send(t, c, userText("one"))
	msg := userText("two")
	msg.ContextID = first.ContextID
	second := send(t, c, msg)
	if answer(second) != "saw one + two" {
		t.Fatalf("the second task: %q", answer(second))
	}

	// A new context from the first task.
	msg = userText("two, otherwise")
	msg.ReferenceTasks = []a2a.TaskID{first.ID}
	branch := send(t, c, msg)
	if branch.Status.State != a2a.TaskStateCompleted || branch.ContextID == first.ContextID || answer(branch) != "saw one + two, otherwise" {
		t.Fatalf("the new context: %s %s %q", branch.Status.State, branch.ContextID, answer(branch))
	}
	if n := f.sessionLen("alice", branch.ContextID); n != 4 {
		t.Fatalf("the new context's session holds %d messages, want 4", n)
	}
	if n := f.sessionLen("alice", first.ContextID); n != 4 {
		t.Fatalf("the original session holds %d messages, want 4", n)
	}

	// In the task's own context, the reference is a refinement.
	msg = userText("three")
	msg.ContextID, msg.ReferenceTasks = first.ContextID, []a2a.TaskID{first.ID}
	if got := answer(send(t, c, msg)); got != "saw one + two + three" {
		t.Fatalf("a refinement in the context: %q", got)
	}

	for _, tt := range []struct {
		name      string
		principal string
		ref       a2a.TaskID
	}{
		{"another principal's task", "bob", first.ID},
		{"no such task", "alice", "no-such-task"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := userText("fork")
			msg.ReferenceTasks = []a2a.TaskID{tt.ref}
			got := send(t, f.client(tt.principal), msg)
			if got.Status.State != a2a.TaskStateRejected {
				t.Fatalf("%s: %s %q", tt.name, got.Status.State, answer(got))
			}
		})
	}
	if calls := f.model.Calls(); calls != 4 {
		t.Fatalf("the model was called %d times, want 4", calls)
	}
}

// forgetTurn rewrites task id as a task stored before turns were
// recorded: without its session turn in its metadata.
func (f *fixture) forgetTurn(id a2a.TaskID) {
	f.t.Helper()
	ctx := context.Background()
	key := "helper/" + string(id)
	rec, err := f.store.GetRecord(ctx, "agcore.a2a.tasks", key)
	if err != nil {
		f.t.Fatal(err)
	}
	var tr struct {
		Owner string   `json:"owner"`
		Task  a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(rec.Value, &tr); err != nil {
		f.t.Fatal(err)
	}
	meta, _ := tr.Task.Metadata[a2aserve.MetadataKey].(map[string]any)
	if _, ok := meta["session_turn"]; !ok {
		f.t.Fatalf("task %s has no session turn to forget: %v", id, tr.Task.Metadata)
	}
	delete(meta, "session_turn")
	if rec.Value, err = json.Marshal(tr); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.store.PutRecord(ctx, "agcore.a2a.tasks", rec); err != nil {
		f.t.Fatal(err)
	}
}

// sessionTurn returns the session turn recorded in task's metadata, 0
// for none.
func sessionTurn(task *a2a.Task) int {
	meta, _ := task.Metadata[a2aserve.MetadataKey].(map[string]any)
	n, _ := meta["session_turn"].(float64)
	return int(n)
}

// TestForkAtTheTaskTurn: a completed task records the number of its
// turn in its session, and a new context from it forks exactly there,
// also when an identical turn follows it (content cannot tell them
// apart). A task stored without the number (before it was recorded) is
// forked at the latest turn that matches it; one whose recorded turn is
// no longer its own (the session was deleted and its context reused) is
// refused.
func TestForkAtTheTaskTurn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second string // the second message and answer of the context
		legacy bool   // the first task is stored without its turn
		want   string // what the new context's turn saw
		msgs   int    // the new context's session length after it
	}{
		{"identical turns", "same", false, "saw same + next", 4},
		{"distinct turns", "other", false, "saw same + next", 4},
		{"distinct turns, a task without its turn", "other", true, "saw same + next", 4},
		{"identical turns, a task without its turn: the latest", "same", true, "saw same + same + next", 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, llmtest.Text("ok"), llmtest.Text("ok"), seenUsers())
			c := f.client("alice")
			first := send(t, c, userText("same"))
			msg := userText(tt.second)
			msg.ContextID = first.ContextID
			second := send(t, c, msg)
			if a, b := sessionTurn(first), sessionTurn(second); a != 1 || b != 2 {
				t.Fatalf("the tasks record turns %d and %d, want 1 and 2", a, b)
			}
			if tt.legacy {
				f.forgetTurn(first.ID)
			}
			msg = userText("next")
			msg.ReferenceTasks = []a2a.TaskID{first.ID}
			branch := send(t, c, msg)
			if branch.Status.State != a2a.TaskStateCompleted || answer(branch) != tt.want {
				t.Fatalf("the new context: %s %q, want %q", branch.Status.State, answer(branch), tt.want)
			}
			if n := f.sessionLen("alice", branch.ContextID); n != tt.msgs {
				t.Fatalf("the new context's session holds %d messages, want %d", n, tt.msgs)
			}
			if n := sessionTurn(branch); n != tt.msgs/2 {
				t.Fatalf("the new context's task records turn %d, want %d", n, tt.msgs/2)
			}
			if n := f.sessionLen("alice", first.ContextID); n != 4 {
				t.Fatalf("the original session holds %d messages, want 4", n)
			}
		})
	}

	t.Run("the task's session replaced", func(t *testing.T) {
		f := newFixture(t, llmtest.Text("ok"), llmtest.Text("ok"))
		c := f.client("alice")
		first := send(t, c, userText("same"))
		id := a2aserve.SessionID(host.SessionName(host.WithPrincipal(context.Background(), "alice"), first.ContextID))
		if err := f.store.Delete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		msg := userText("another")
		msg.ContextID = first.ContextID
		send(t, c, msg) // turn 1 of the context again, not the task's
		msg = userText("next")
		msg.ReferenceTasks = []a2a.TaskID{first.ID}
		if got := send(t, c, msg); got.Status.State != a2a.TaskStateRejected {
			t.Fatalf("a fork from a task whose turn is gone: %s %q", got.Status.State, answer(got))
		}
	})
}
