package a2aserve

import (
	"context"
	"errors"
	"iter"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agcore/agcore/serve/host"
)

// resumeRemote handles a message to a task whose turn does not run in
// this process: with tasks in a shared store, another process runs it.
// The message's decisions are recorded through the (shared) broker,
// which that process picks up; then the task is followed in the store
// until it rests again (terminal, or waiting for input), and its stored
// state ends this exchange as one task event.
func (e *executor) resumeRemote(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if !e.tasks.shared() {
		return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, errNoRun.Error()), nil)
	}
	_, since, err := e.tasks.version(ctx, rc.TaskID)
	if err != nil {
		return err
	}
	owner, _ := e.tasks.owner(ctx, rc.TaskID)
	if rt, ok := e.remoteTasks(); ok && rt.isRemote(ctx, rc.TaskID) {
		return e.resumeRemoteTask(ctx, rc, q, rt, owner, since)
	}
	decided, problem := e.decideTask(ctx, rc.TaskID, owner, rc.Message)
	if decided == 0 {
		if p := e.pendingOf(rc.TaskID); len(p) > 0 {
			return writeFinal(ctx, q, rc, a2a.TaskStateInputRequired, approvalMessage(rc, p, problem), nil)
		}
	}
	t, err := follow(ctx, e.tasks, rc.TaskID, since, host.Stop(ctx), func(*a2a.Task) bool {
		return len(e.pendingOf(rc.TaskID)) > 0 // a new wait, not the one just decided
	})
	if err != nil {
		return err
	}
	if t == nil {
		// This server stops (or the client left): the exchange ends, the
		// task goes on where its turn runs.
		return q.Write(ctx, agentText(rc, "This server stopped following the task; it goes on: ask for it with tasks/get."))
	}
	return q.Write(ctx, t)
}

// persist writes the end of a turn, or its wait for a decision, into the
// stored task itself: for a turn no Execute follows here, because its
// decision came through another process or channel. Tasks in memory keep
// the old way (the task's next message collects the result).
func (e *executor) persist(r *run, s signal) {
	if !e.tasks.shared() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t, err := e.tasks.Get(ctx, r.task)
	if err != nil || t.Status.State.Terminal() {
		return
	}
	switch s.kind {
	case sigFinish:
		meta := map[string]any{MetadataKey: turnMeta(s.resp, s.turn)}
		answer := &a2a.Artifact{ID: r.artifact, Name: "answer", Parts: a2a.ContentParts{a2a.TextPart{Text: s.resp.Text()}}, Metadata: meta}
		i := slices.IndexFunc(t.Artifacts, func(a *a2a.Artifact) bool { return a.ID == r.artifact || a.Name == "answer" })
		if i >= 0 {
			answer.ID = t.Artifacts[i].ID
			t.Artifacts[i] = answer
		} else {
			if answer.ID == "" {
				answer.ID = a2a.NewArtifactID()
			}
			t.Artifacts = append(t.Artifacts, answer)
		}
		setStatus(t, a2a.TaskStateCompleted, nil, meta)
		e.end(r)
	case sigError:
		if r.canceled.Load() {
			setStatus(t, a2a.TaskStateCanceled, agentText(t, "Canceled."), nil)
		} else {
			setStatus(t, a2a.TaskStateFailed, agentText(t, "The turn failed: "+s.err.Error()), nil)
		}
		e.end(r)
	case sigParked:
		p := e.pending(r)
		if len(p) == 0 {
			return
		}
		setStatus(t, a2a.TaskStateInputRequired, approvalMessage(t, p, ""), nil)
	}
	if err := e.tasks.Save(ctx, t); err != nil {
		e.log.Warn("a2a: storing a task's state", "task", r.task, "err", err)
		return
	}
	e.notify(ctx, t)
}

// notify sends t, whose state this process stored past the SDK (a turn's
// end or wait, a remote task's change), to its webhooks, as the SDK does
// for the states it stores.
func (e *executor) notify(ctx context.Context, t *a2a.Task) {
	e.sender.notifyAll(ctx, e.pushes, e.sender.recs, t)
}

// setStatus moves t to state as the SDK applies a status update: the
// previous status message joins the history, meta merges into the
// task's metadata.
func setStatus(t *a2a.Task, state a2a.TaskState, msg *a2a.Message, meta map[string]any) {
	setStatusAt(t, state, msg, meta, time.Now())
}

// setStatusAt is setStatus with the status's time given (a workflow's
// translator takes it from the workflow's clock).
func setStatusAt(t *a2a.Task, state a2a.TaskState, msg *a2a.Message, meta map[string]any, now time.Time) {
	if t.Status.Message != nil {
		t.History = append(t.History, t.Status.Message)
	}
	if meta != nil {
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		for k, v := range meta {
			t.Metadata[k] = v
		}
	}
	t.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}
}

// OnResubscribeToTask serves tasks/resubscribe: the SDK's own for a task
// whose execution this process holds; else, with tasks in a shared store
// (the task runs in another process, or its execution here is over), the
// task as stored, polled every storePoll: a task event now and one each
// time it changes, until it rests (terminal, or waiting for input).
func (h retrying) OnResubscribeToTask(ctx context.Context, p *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		first := true
		for ev, err := range h.RequestHandler.OnResubscribeToTask(ctx, p) {
			if first && p != nil && h.store.shared() && errorIsNotFound(err) {
				break
			}
			first = false
			if !yield(ev, err) {
				return
			}
		}
		if !first {
			return
		}
		// Not held here: the store. The owner check the SDK's interceptor
		// made is made again, since this path does not pass through it.
		owner, ok := h.store.owner(ctx, p.ID)
		if who, _ := host.PrincipalFrom(ctx); !ok || who != owner {
			yield(nil, errNotOwner)
			return
		}
		var last int64 = -1
		var lastState a2a.TaskState
		tick := time.NewTicker(storePoll)
		defer tick.Stop()
		for {
			t, v, err := h.store.version(ctx, p.ID)
			if err != nil {
				yield(nil, err)
				return
			}
			// A task whose process was lost reads failed at the same
			// version: its state changed all the same.
			if v != last || t.Status.State != lastState {
				last, lastState = v, t.Status.State
				if !yield(t, nil) {
					return
				}
			}
			if t.Status.State.Terminal() || t.Status.State == a2a.TaskStateInputRequired {
				return
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			case <-host.Stop(ctx):
				return
			}
		}
	}
}

func errorIsNotFound(err error) bool {
	return errors.Is(err, a2a.ErrTaskNotFound)
}
