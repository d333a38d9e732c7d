package a2aserve_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// replicas returns two servers over one store, as two processes: a runs
// the scripted turns; b's model must not be called.
func replicas(t *testing.T, steps ...llmtest.Step) (a, b *fixture) {
	store := memstore.New()
	shared := func() *approval.Broker {
		return &approval.Broker{Shared: host.Approvals(store), Poll: 5 * time.Millisecond}
	}
	return newFixtureOn(t, store, shared(), steps...), newFixtureOn(t, store, shared())
}

// TestTasksAcrossReplicas: a task started on one server is answered by
// tasks/get and resubscribe on the other; its approval is decided through
// the other, whose message ends with the turn's result.
func TestTasksAcrossReplicas(t *testing.T) {
	a, b := replicas(t, llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`)), llmtest.Text("Deleted x."))
	task, _ := parked(t, a, "alice")
	bc := b.client("alice")
	got, err := bc.GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("tasks/get on the other server: %+v, %v", got, err)
	}
	if _, err := b.client("bob").GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID}); err == nil {
		t.Fatal("bob reads alice's task on the other server")
	}
	// The decision, through the other server: its answer is the end of
	// the turn, which runs on the first.
	done := send(t, bc, followUp(task.ID, a2a.TextPart{Text: "approve"}))
	if done.Status.State != a2a.TaskStateCompleted || answer(done) != "Deleted x." || a.ran.Load() != 1 {
		t.Fatalf("after the decision on the other server: %s %q, ran %d", done.Status.State, answer(done), a.ran.Load())
	}
	for _, f := range []*fixture{a, b} {
		got, err := f.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted || answer(got) != "Deleted x." {
			t.Fatalf("tasks/get after the turn: %+v, %v", got, err)
		}
	}
	// Resubscribing to the finished task, on either server: the task.
	var last a2a.Event
	for ev, err := range b.client("alice").ResubscribeToTask(bounded(t), &a2a.TaskIDParams{ID: task.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	if lt, ok := last.(*a2a.Task); !ok || lt.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resubscribe ended with %T %+v", last, last)
	}
	if n := b.sessionLen("alice", task.ContextID); n != 4 {
		t.Fatalf("session holds %d messages", n)
	}
}

// TestTaskOfADeadProcess: a task stored unfinished whose run nobody
// holds (its process died) reads as failed, and takes no message.
func TestTaskOfADeadProcess(t *testing.T) {
	a, _ := replicas(t)
	now := time.Now()
	task := &a2a.Task{ID: "t-dead", ContextID: "ctx-dead", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}}
	data, _ := json.Marshal(task)
	v, _ := json.Marshal(map[string]any{"owner": "alice", "task": json.RawMessage(data)})
	if _, err := a.store.PutRecord(context.Background(), "agcore.a2a.tasks", session.Record{Key: "helper/t-dead", Value: v}); err != nil {
		t.Fatal(err)
	}
	c := a.client("alice")
	got, err := c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: "t-dead"})
	if err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("tasks/get: %+v, %v", got, err)
	}
	if _, err := c.SendMessage(bounded(t), &a2a.MessageSendParams{Message: followUp("t-dead", a2a.TextPart{Text: "approve"})}); err == nil {
		t.Fatal("a message to a lost task was taken")
	}
}

// TestCancelAcrossReplicas: a task waiting for approval, cancelled as
// soon as its stream shows input-required, through the server running
// its turn or the other one, ends canceled, and reads so on both. (Sent
// to the other server, the cancellation does not reach the turn: it goes
// on waiting, and its end, here a denial, changes nothing of the task.)
func TestCancelAcrossReplicas(t *testing.T) {
	for _, tt := range []struct {
		name  string
		other bool // cancel through the server not running the turn
	}{
		{"running server", false},
		{"other server", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			steps := []llmtest.Step{llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`))}
			if tt.other {
				steps = append(steps, llmtest.Text("Not deleted."))
			}
			a, b := replicas(t, steps...)
			var taskID a2a.TaskID
			for ev, err := range a.client("alice").SendStreamingMessage(bounded(t), &a2a.MessageSendParams{Message: userText("delete x")}) {
				if err != nil {
					t.Fatal(err)
				}
				if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == a2a.TaskStateInputRequired {
					taskID = st.TaskID
					break
				}
			}
			if taskID == "" {
				t.Fatal("never reached input-required")
			}
			via := a
			if tt.other {
				via = b
			}
			task, err := via.client("alice").CancelTask(bounded(t), &a2a.TaskIDParams{ID: taskID})
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel answered %s", task.Status.State)
			}
			if tt.other {
				// End the turn still waiting on the first server.
				for _, p := range a.broker.Pending(nil) {
					if err := a.broker.Decide(p.ID, tool.Decision{Reason: "test over"}); err != nil {
						t.Fatal(err)
					}
				}
				waitFor(t, func() bool { return a.model.Calls() == 2 })
			} else if p := a.broker.Pending(nil); len(p) != 0 {
				t.Fatalf("the cancelled turn still waits: %v", p)
			}
			for _, f := range []*fixture{a, b} {
				got, err := f.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: taskID})
				if err != nil || got.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("tasks/get: %+v, %v", got, err)
				}
			}
			if a.ran.Load() != 0 {
				t.Fatalf("the tool ran %d times", a.ran.Load())
			}
		})
	}
}
