package a2aserve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
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
