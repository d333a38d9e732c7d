package a2aserve_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

// parked sends a message whose turn calls delete_file and returns the task,
// waiting for approval, and the approval's id from its status message.
func parked(t *testing.T, f *fixture, principal string) (*a2a.Task, string) {
	t.Helper()
	task := send(t, f.client(principal), userText("delete x"))
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("task = %s, %+v", task.Status.State, task.Status.Message)
	}
	var id string
	for _, p := range task.Status.Message.Parts {
		if dp, ok := p.(a2a.DataPart); ok {
			list, _ := dp.Data["approvals"].([]any)
			if len(list) == 1 {
				first, _ := list[0].(map[string]any)
				id, _ = first["approval_id"].(string)
				if first["tool"] != "delete_file" || first["arguments"] != `{"path":"x"}` {
					t.Fatalf("approval = %v", first)
				}
			}
		}
	}
	if id != string(task.ID)+"/c1" {
		t.Fatalf("approval id %q in %+v", id, task.Status.Message)
	}
	return task, id
}

func TestApproval(t *testing.T) {
	tests := []struct {
		name     string
		decision func(approvalID string) []a2a.Part
		approved bool
		told     string // what the model reads in the tool result
	}{
		{"text approve", func(string) []a2a.Part { return []a2a.Part{a2a.TextPart{Text: "approve"}} }, true, "deleted x"},
		{"data approve", func(id string) []a2a.Part {
			return []a2a.Part{a2a.DataPart{Data: map[string]any{"approval_id": id, "approved": true}}}
		}, true, "deleted x"},
		{"text deny", func(string) []a2a.Part { return []a2a.Part{a2a.TextPart{Text: "Deny: not on a Friday"}} }, false, "not on a Friday"},
		{"data deny", func(id string) []a2a.Part {
			return []a2a.Part{a2a.DataPart{Data: map[string]any{"approval_id": id, "approved": false, "reason": "too risky"}}}
		}, false, "too risky"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t,
				llmtest.Reply(llm.Text{Text: "Deleting x."}, llmtest.Call("c1", "delete_file", `{"path":"x"}`)),
				llmtest.Text("All done."))
			task, id := parked(t, f, "alice")
			c := f.client("alice")
			got := send(t, c, followUp(task.ID, tt.decision(id)...))
			if got.Status.State != a2a.TaskStateCompleted || answer(got) != "All done." {
				t.Fatalf("after the decision: %s, %q", got.Status.State, answer(got))
			}
			if ran := f.ran.Load() == 1; ran != tt.approved {
				t.Fatalf("tool ran = %v, want %v", ran, tt.approved)
			}
			reqs := f.model.Requests()
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			b, _ := json.Marshal(last)
			if !strings.Contains(string(b), tt.told) {
				t.Fatalf("the model was told %s, want %q in it", b, tt.told)
			}
			if n := f.sessionLen("alice", task.ContextID); n != 4 {
				t.Fatalf("the session holds %d messages, want 4 (user, call, result, answer)", n)
			}
		})
	}
}

// TestApprovalNotUnderstood: a follow-up that decides nothing leaves the
// task waiting, saying how to answer.
func TestApprovalNotUnderstood(t *testing.T) {
	f := newFixture(t, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("Done."))
	task, id := parked(t, f, "alice")
	c := f.client("alice")
	for _, parts := range [][]a2a.Part{
		{a2a.TextPart{Text: "what does it do?"}},
		{a2a.DataPart{Data: map[string]any{"approval_id": "other/c9", "approved": true}}},
	} {
		got := send(t, c, followUp(task.ID, parts...))
		if got.Status.State != a2a.TaskStateInputRequired || !strings.Contains(got.Status.Message.Parts[0].(a2a.TextPart).Text, id) {
			t.Fatalf("after %v: %s %+v", parts, got.Status.State, got.Status.Message)
		}
	}
	got := send(t, c, followUp(task.ID, a2a.TextPart{Text: "yes"}))
	if got.Status.State != a2a.TaskStateCompleted || f.ran.Load() != 1 {
		t.Fatalf("after yes: %s, ran %d", got.Status.State, f.ran.Load())
	}
}

// TestApprovalStreamed: the follow-up streams the rest of the turn.
func TestApprovalStreamed(t *testing.T) {
	f := newFixture(t, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("Done, x is gone."))
	c := f.client("alice")
	var taskID a2a.TaskID
	var states []a2a.TaskState
	for ev, err := range c.SendStreamingMessage(bounded(t), &a2a.MessageSendParams{Message: userText("delete x")}) {
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			states = append(states, st.Status.State)
			taskID = st.TaskID
		}
	}
	if states[len(states)-1] != a2a.TaskStateInputRequired {
		t.Fatalf("states = %v", states)
	}
	states = nil
	var text string
	for ev, err := range c.SendStreamingMessage(bounded(t), &a2a.MessageSendParams{Message: followUp(taskID, a2a.TextPart{Text: "approve"})}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, ev.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			if ev.LastChunk {
				text = ev.Artifact.Parts[0].(a2a.TextPart).Text
			}
		}
	}
	if states[len(states)-1] != a2a.TaskStateCompleted || text != "Done, x is gone." || f.ran.Load() != 1 {
		t.Fatalf("states %v, answer %q, ran %d", states, text, f.ran.Load())
	}
}

// TestOtherPrincipal: another principal can neither see, cancel nor decide
// a task; its owner still can.
func TestOtherPrincipal(t *testing.T) {
	f := newFixture(t, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("Done."))
	task, id := parked(t, f, "alice")
	bob := f.client("bob")
	if _, err := bob.SendMessage(bounded(t), &a2a.MessageSendParams{Message: followUp(task.ID,
		a2a.DataPart{Data: map[string]any{"approval_id": id, "approved": true}})}); err == nil {
		t.Fatal("bob decided alice's approval")
	}
	if _, err := bob.GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID}); err == nil {
		t.Fatal("bob read alice's task")
	}
	if _, err := bob.CancelTask(bounded(t), &a2a.TaskIDParams{ID: task.ID}); err == nil {
		t.Fatal("bob cancelled alice's task")
	}
	if f.ran.Load() != 0 || len(f.broker.Pending(nil)) != 1 {
		t.Fatalf("after bob: ran %d, pending %v", f.ran.Load(), f.broker.Pending(nil))
	}
	got := send(t, f.client("alice"), followUp(task.ID, a2a.TextPart{Text: "approve"}))
	if got.Status.State != a2a.TaskStateCompleted || f.ran.Load() != 1 {
		t.Fatalf("alice's decision: %s, ran %d", got.Status.State, f.ran.Load())
	}
}

// TestContextContinuity: two tasks with one context id share the session;
// a context id that is not a valid session id is mapped to one.
func TestContextContinuity(t *testing.T) {
	for _, contextID := range []string{"ctx-1", "not a session id/…"} {
		t.Run(contextID, func(t *testing.T) {
			f := newFixture(t, llmtest.Text("First answer."), llmtest.Text("Second answer."))
			c := f.client("alice")
			m1 := userText("first question")
			m1.ContextID = contextID
			t1 := send(t, c, m1)
			m2 := userText("second question")
			m2.ContextID = contextID
			t2 := send(t, c, m2)
			if t1.ID == t2.ID || t1.ContextID != contextID || t2.ContextID != contextID || answer(t2) != "Second answer." {
				t.Fatalf("tasks %s/%s in %q/%q, answer %q", t1.ID, t2.ID, t1.ContextID, t2.ContextID, answer(t2))
			}
			second := f.model.Requests()[1].Messages
			var texts []string
			for _, m := range second {
				texts = append(texts, m.Text())
			}
			if got := strings.Join(texts, "|"); !strings.Contains(got, "first question|First answer.|second question") {
				t.Fatalf("the second request held %q", got)
			}
			if n := f.sessionLen("alice", contextID); n != 4 {
				t.Fatalf("session of %s holds %d messages", contextID, n)
			}
		})
	}
}

// TestApprovalTimedOut: a call nobody decides within the broker's Timeout
// is denied; the turn ends unfollowed and writes its end into the stored
// task itself (tasks/get shows it).
func TestApprovalTimedOut(t *testing.T) {
	f := newFixture(t, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("I could not delete x."))
	f.broker.Timeout = 20 * time.Millisecond
	task, _ := parked(t, f, "alice")
	c := f.client("alice")
	var got *a2a.Task
	waitFor(t, func() bool {
		var err error
		got, err = c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	if got.Status.State != a2a.TaskStateCompleted || answer(got) != "I could not delete x." || f.ran.Load() != 0 {
		t.Fatalf("after the timeout: %s %q, ran %d", got.Status.State, answer(got), f.ran.Load())
	}
	if b, _ := json.Marshal(f.model.Requests()[1].Messages); !strings.Contains(string(b), "nobody approved it within") {
		t.Fatalf("the model was told %s", b)
	}
}

// TestRejectedAndFailed: a message with nothing usable is rejected; a
// turn whose model fails ends failed, with the error, storing nothing.
func TestRejectedAndFailed(t *testing.T) {
	f := newFixture(t, llmtest.Fail(errors.New("the model is down")))
	c := f.client("alice")
	if got := send(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: ""})); got.Status.State != a2a.TaskStateRejected {
		t.Fatalf("an empty message: %s", got.Status.State)
	}
	got := send(t, c, userText("hi"))
	if got.Status.State != a2a.TaskStateFailed || !strings.Contains(got.Status.Message.Parts[0].(a2a.TextPart).Text, "the model is down") {
		t.Fatalf("a failed turn: %s %+v", got.Status.State, got.Status.Message)
	}
	if n := f.sessionLen("alice", got.ContextID); n != 0 {
		t.Fatalf("a failed turn stored %d messages", n)
	}
}
