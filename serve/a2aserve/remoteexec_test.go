package a2aserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// fakeRemote runs the handed-over turns as a worker would, in goroutines
// writing the task through a TaskWriter: each answers "Remote answer.",
// or, with hang, waits until it is cancelled. A turn whose input is drop
// (when set) is accepted and never run: as if the accepting process died
// before the hand-over.
type fakeRemote struct {
	store *memstore.Store
	hang  bool
	drop  string

	mu       sync.Mutex
	started  []a2aserve.RemoteTask
	cancels  map[string]chan struct{}
	canceled []string
	dropped  map[string]bool // task ids of the turns never run
	wg       sync.WaitGroup
	w        a2aserve.TaskWriter
}

func (r *fakeRemote) StartTask(_ context.Context, t a2aserve.RemoteTask) error {
	stop := make(chan struct{})
	r.mu.Lock()
	r.started = append(r.started, t)
	if r.cancels == nil {
		r.cancels = map[string]chan struct{}{}
	}
	r.cancels[t.Log.TaskID] = stop
	dropped := r.drop != "" && len(t.Input) == 1 && t.Input[0].Text() == r.drop
	if dropped {
		if r.dropped == nil {
			r.dropped = map[string]bool{}
		}
		r.dropped[t.Log.TaskID] = true
		delete(r.cancels, t.Log.TaskID)
	}
	r.mu.Unlock()
	if dropped {
		return nil
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx := context.Background()
		ev, err := a2aserve.NewTaskEvents(t.Log, nil, nil)
		if err != nil {
			return
		}
		ev.Update(agent.Update{Kind: agent.UpdateText, Text: "Remote "})
		if b, ok := ev.Take(); ok {
			_ = r.w.Store(ctx, r.store, nil, t.Log, []json.RawMessage{b}, false)
		}
		var final json.RawMessage
		if r.hang {
			<-stop
			final, _ = ev.End(nil, context.Canceled, true)
		} else {
			final, _ = ev.End(&agent.Response{RunID: t.TurnID, Message: llm.AssistantText("Remote answer.")}, nil, false)
		}
		_ = r.w.Store(ctx, r.store, nil, t.Log, []json.RawMessage{final}, true)
	}()
	return nil
}

func (r *fakeRemote) CancelTask(_ context.Context, agent, task string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.canceled = append(r.canceled, agent+"/"+task)
	if c := r.cancels[task]; c != nil {
		close(c)
		delete(r.cancels, task)
	}
	return nil
}

func (r *fakeRemote) PendingTask(context.Context, string, string) ([]a2aserve.PendingCall, error) {
	return nil, nil
}

func (r *fakeRemote) DecideTask(context.Context, string, string, string, tool.Decision) error {
	return approval.ErrUnknown
}

// TestRemoteTasks: with a Remote runner, a task's turn is handed over and
// followed from the store: a blocking message/send returns the task the
// runner completed; tasks/get answers it on another server; the task is
// stored remote, so a running one with no lease is not read lost; and
// tasks/cancel on the other server cancels it through the runner.
func TestRemoteTasks(t *testing.T) {
	store := memstore.New()
	fr := &fakeRemote{store: store}
	t.Cleanup(fr.wg.Wait)
	opts := a2aserve.Options{Remote: fr}
	a := newFixtureWith(t, store, &approval.Broker{}, opts)
	b := newFixtureWith(t, store, &approval.Broker{}, opts)

	done := send(t, a.client("alice"), userText("hi"))
	if done.Status.State != a2a.TaskStateCompleted || answer(done) != "Remote answer." {
		t.Fatalf("a blocking message/send: %s %q", done.Status.State, answer(done))
	}
	fr.mu.Lock()
	st := fr.started[0]
	fr.mu.Unlock()
	if st.Agent != "helper" || st.TurnID != string(done.ID) || st.Log.Principal != "alice" || st.Log.TaskID != string(done.ID) ||
		len(st.Input) != 1 || st.Input[0].Text() != "hi" || st.SessionID == "" || st.Log.TurnsBefore != 0 {
		t.Fatalf("the task handed over: %+v", st)
	}
	got, err := b.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: done.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || answer(got) != "Remote answer." {
		t.Fatalf("tasks/get on the other server: %+v, %v", got, err)
	}
	if _, err := b.client("bob").GetTask(bounded(t), &a2a.TaskQueryParams{ID: done.ID}); err == nil {
		t.Fatal("bob reads alice's remote task")
	}

	// A turn that hangs: working on the other server (no lease, not
	// lost), then cancelled through it.
	fr.hang = true
	no := false
	res, err := a.client("alice").SendMessage(bounded(t), &a2a.MessageSendParams{Message: userText("hang"), Config: &a2a.MessageSendConfig{Blocking: &no}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("a non-blocking message/send: %s", task.Status.State)
	}
	rec, err := store.GetRecord(context.Background(), "agcore.a2a.tasks", "helper/"+string(task.ID))
	if err != nil || !json.Valid(rec.Value) || !contains(rec.Value, `"remote":true`) {
		t.Fatalf("the task's record: %s, %v", rec.Value, err)
	}
	if _, err := store.GetRecord(context.Background(), "agcore.a2a.runs", "helper/"+string(task.ID)); err == nil {
		t.Fatal("a remote task holds a run lease")
	}
	if got, err := b.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("tasks/get of the running remote task on the other server: %+v, %v", got, err)
	}
	c, err := b.client("alice").CancelTask(bounded(t), &a2a.TaskIDParams{ID: task.ID})
	if err != nil || c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel on the other server: %+v, %v", c, err)
	}
	fr.mu.Lock()
	canceled := fr.canceled
	fr.mu.Unlock()
	if len(canceled) != 1 || canceled[0] != "helper/"+string(task.ID) {
		t.Fatalf("the runner's cancellations: %v", canceled)
	}
	waitFor(t, func() bool {
		got, err := a.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID})
		return err == nil && got.Status.State == a2a.TaskStateCanceled
	})

	// Cancelled through the accepting server, which still follows it.
	res, err = a.client("alice").SendMessage(bounded(t), &a2a.MessageSendParams{Message: userText("hang again"), Config: &a2a.MessageSendConfig{Blocking: &no}})
	if err != nil {
		t.Fatal(err)
	}
	again := res.(*a2a.Task)
	c, err = a.client("alice").CancelTask(bounded(t), &a2a.TaskIDParams{ID: again.ID})
	if err != nil || c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel on the accepting server: %+v, %v", c, err)
	}
	waitFor(t, func() bool {
		got, err := b.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: again.ID})
		return err == nil && got.Status.State == a2a.TaskStateCanceled
	})
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// watchingRemote is a fakeRemote that is also a RemoteWatcher: the turns
// of the tasks in ended have ended, without writing their end; the others
// it dropped it has no run for (a2aserve.ErrRemoteNotFound).
type watchingRemote struct {
	*fakeRemote
	ended sync.Map // task id → true
	asked sync.Map // task id → true: TaskEnded was asked about it
}

func (r *watchingRemote) TaskEnded(_ context.Context, _, task string) (bool, string, error) {
	r.asked.Store(task, true)
	if _, ok := r.ended.Load(task); ok {
		return true, "terminated", nil
	}
	r.mu.Lock()
	dropped := r.dropped[task]
	r.mu.Unlock()
	if dropped {
		return false, "", fmt.Errorf("no workflow for %s: %w", task, a2aserve.ErrRemoteNotFound)
	}
	return false, "", nil
}

// TestRemoteTaskWhoseRunEnded: a remote task whose turn's run ended
// without writing its end (its workflow terminated) is stored failed, the
// runner's reason in its status message, by the first process that reads
// it unchanged for a while, and its push notification config (set through
// the other process) is notified of the failed state, once; a task whose
// run goes on stays working. A task the runner has no run for (the
// accepting process died before the hand-over) ends so too once its
// status is older than a2aserve.RemoteLostAfter, notified the same; a
// younger one stays working.
func TestRemoteTaskWhoseRunEnded(t *testing.T) {
	defer a2aserve.SetRemoteCheckAfter(50 * time.Millisecond)()
	hook := newWebhook(t)
	store := memstore.New()
	fr := &watchingRemote{fakeRemote: &fakeRemote{store: store, hang: true, drop: "drop"}}
	t.Cleanup(func() {
		fr.mu.Lock()
		for id, c := range fr.cancels {
			close(c)
			delete(fr.cancels, id)
		}
		fr.mu.Unlock()
		fr.wg.Wait()
	})
	opts := a2aserve.Options{Remote: fr, PushAllowHosts: []string{"127.0.0.1"}}
	a := newFixtureWith(t, store, &approval.Broker{}, opts)
	b := newFixtureWith(t, store, &approval.Broker{}, opts)
	no := false
	start := func(text string) a2a.TaskID {
		res, err := a.client("alice").SendMessage(bounded(t), &a2a.MessageSendParams{Message: userText(text), Config: &a2a.MessageSendConfig{Blocking: &no}})
		if err != nil {
			t.Fatal(err)
		}
		return res.(*a2a.Task).ID
	}
	// gone's turn ended at once, as a workflow terminated before it wrote
	// anything.
	gone, alive, young, old := start("drop"), start("hang"), start("drop"), start("drop")
	if err := a2aserve.AgeTask(bounded(t), store, "helper", old, a2aserve.RemoteLostAfter+time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, id := range []a2a.TaskID{gone, old} {
		if _, err := b.client("alice").SetTaskPushConfig(bounded(t), &a2a.TaskPushConfig{TaskID: id, Config: a2a.PushConfig{ID: "hook", URL: hook.srv.URL, Token: string(id)}}); err != nil {
			t.Fatal(err)
		}
	}
	fr.ended.Store(string(gone), true)
	failed := func(id a2a.TaskID, reason string) {
		t.Helper()
		waitFor(t, func() bool {
			got, err := b.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: id})
			return err == nil && got.Status.State == a2a.TaskStateFailed && got.Status.Message != nil &&
				strings.Contains(got.Status.Message.Parts[0].(a2a.TextPart).Text, "ended without its outcome: "+reason)
		})
	}
	failed(gone, "terminated")
	failed(old, "the durable runner has no workflow for the task")
	// The others are asked about too, and stay working.
	for _, id := range []a2a.TaskID{alive, young} {
		waitFor(t, func() bool {
			got, err := b.client("alice").GetTask(bounded(t), &a2a.TaskQueryParams{ID: id})
			if err != nil || got.Status.State != a2a.TaskStateWorking {
				t.Fatalf("the task whose run goes on or is young: %+v, %v", got, err)
			}
			_, asked := fr.asked.Load(string(id))
			return asked
		})
	}
	want := []string{string(gone) + " failed", string(old) + " failed"}
	waitFor(t, func() bool { return len(hook.received()) >= len(want) })
	time.Sleep(300 * time.Millisecond) // a second notification would come by now
	if got := hook.received(); !sameSet(got, want) {
		t.Fatalf("the webhook got %q, want %q", got, want)
	}
	// The young one's turn ends too, so nothing follows it past the test.
	fr.ended.Store(string(young), true)
	failed(young, "terminated")
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
