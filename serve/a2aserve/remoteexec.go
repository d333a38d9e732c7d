package a2aserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/tool"
)

// remoteTasks returns the task store when the executor hands its turns
// over (Options.Remote, tasks in the store's records).
func (e *executor) remoteTasks() (*recordTasks, bool) {
	if e.remote == nil {
		return nil, false
	}
	rt, ok := e.tasks.(*recordTasks)
	return rt, ok
}

// startRemote begins a new task whose turn runs elsewhere: the task is
// stored working and remote, its turn handed over (Remote.StartTask),
// then followed in the store, each change an event, until it rests
// (terminal, or waiting for input).
func (e *executor) startRemote(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, rt *recordTasks) error {
	msgs, err := toLLM(rc.Message)
	if err != nil {
		return writeFinal(ctx, q, rc, a2a.TaskStateRejected, agentText(rc, err.Error()), nil)
	}
	principal, _ := host.PrincipalFrom(ctx)
	sid := SessionID(host.SessionName(ctx, rc.ContextID))
	if err := e.forkFrom(ctx, rc, sid); err != nil {
		if errors.Is(err, errForkTask) {
			return writeFinal(ctx, q, rc, a2a.TaskStateRejected, agentText(rc, err.Error()), nil)
		}
		return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, "The session store failed."), nil)
	}
	t := a2a.NewSubmittedTask(rc, rc.Message)
	now := time.Now().UTC()
	t.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}
	since, err := rt.putRemote(ctx, principal, t)
	if err != nil {
		e.log.Warn("a2a: storing a remote task", "task", rc.TaskID, "err", err)
		return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, "The task store failed."), nil)
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	before := turnCount(ctx, host.Sessions(ctx, e.agent.Store), sid)
	task := RemoteTask{Agent: e.agent.Name, Owner: host.Owner(ctx), SessionID: sid, Input: msgs, TurnID: string(rc.TaskID),
		Log: TaskLog{Agent: e.agent.Name, TaskID: string(rc.TaskID), Principal: principal, Task: raw,
			SessionID: sid, TurnsBefore: before, PushAllowHosts: e.pushHosts}}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err = e.remote.StartTask(sctx, task)
	cancel()
	if err != nil {
		e.log.Error("a2a: starting a remote task", "task", rc.TaskID, "err", err)
		setStatus(t, a2a.TaskStateFailed, agentText(t, "The turn could not be started."), nil)
		fctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if _, err := rt.putRemote(fctx, principal, t); err == nil {
			e.notify(fctx, t)
		}
		c()
		return q.Write(ctx, t)
	}
	// Its first state is this process's to notify; what runs the turn
	// notifies every later change.
	e.notify(ctx, t)
	first := copyTask(t)
	if err := q.Write(ctx, t); err != nil {
		return err
	}
	return e.followRemote(ctx, rc, q, rt, since, first)
}

// followRemote writes the stored task as an event each time it changes
// from version since (first, the task it began as), until it rests
// (terminal, or waiting for input), this server stops, or ctx ends.
func (e *executor) followRemote(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, rt *recordTasks, since int64, first *a2a.Task) error {
	tick := time.NewTicker(storePoll)
	defer tick.Stop()
	stop := host.Stop(ctx)
	prev := first
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil
		case <-stop:
			return q.Write(ctx, agentText(rc, "This server stopped following the task; it goes on: ask for it with tasks/get."))
		}
		t, v, err := rt.version(ctx, rc.TaskID)
		if err != nil {
			if errors.Is(err, a2a.ErrTaskNotFound) {
				return err
			}
			continue // the store may answer again
		}
		if v == since {
			continue
		}
		since = v
		ev := remoteEvent(prev, t)
		if ev == a2a.Event(t) {
			ev = copyTask(t) // the SDK keeps the task it is given, and changes it
		}
		if err := q.Write(ctx, ev); err != nil {
			return err
		}
		prev = t
		if t.Status.State.Terminal() || t.Status.State == a2a.TaskStateInputRequired {
			return nil
		}
	}
}

// remoteEvent is the event that moves a follower from prev to cur, two
// versions of a remote task: when only the streamed answer grew, the
// artifact-update event appending the new text (a streaming client shows
// it as a delta); otherwise the task itself.
func remoteEvent(prev, cur *a2a.Task) a2a.Event {
	if prev == nil || prev.Status.State != cur.Status.State || !sameTime(prev.Status.Timestamp, cur.Status.Timestamp) ||
		len(prev.History) != len(cur.History) || len(prev.Artifacts) != len(cur.Artifacts) {
		return cur
	}
	was, wasText := answerOf(prev)
	now, nowText := answerOf(cur)
	if was == nil || now == nil || was.ID != now.ID || len(nowText) <= len(wasText) || nowText[:len(wasText)] != wasText {
		return cur
	}
	return &a2a.TaskArtifactUpdateEvent{TaskID: cur.ID, ContextID: cur.ContextID, Append: true,
		Artifact: &a2a.Artifact{ID: now.ID, Name: now.Name, Parts: a2a.ContentParts{a2a.TextPart{Text: nowText[len(wasText):]}}}}
}

// copyTask returns a copy of t that shares nothing with it.
func copyTask(t *a2a.Task) *a2a.Task {
	b, err := json.Marshal(t)
	if err != nil {
		return t
	}
	var c a2a.Task
	if json.Unmarshal(b, &c) != nil {
		return t
	}
	return &c
}

func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// answerOf returns the task's answer artifact and its text.
func answerOf(t *a2a.Task) (*a2a.Artifact, string) {
	for _, a := range t.Artifacts {
		if a.Name != "answer" {
			continue
		}
		var b strings.Builder
		for _, p := range a.Parts {
			tp, ok := p.(a2a.TextPart)
			if !ok {
				return nil, "" // not text alone: sent whole
			}
			b.WriteString(tp.Text)
		}
		return a, b.String()
	}
	return nil, ""
}

// cancelRemote cancels a remote task's turn (Remote.CancelTask) and waits
// (up to cancelWait) for the task to end, writing its end as the event;
// a task still not over by then is stored canceled here.
func (e *executor) cancelRemote(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, rt *recordTasks) error {
	if err := e.remote.CancelTask(ctx, e.agent.Name, string(rc.TaskID)); err != nil {
		e.log.Warn("a2a: cancelling a remote task", "task", rc.TaskID, "err", err)
	}
	deadline := time.Now().Add(e.cancelWait)
	tick := time.NewTicker(storePoll)
	defer tick.Stop()
	for {
		t, _, err := rt.version(ctx, rc.TaskID)
		if err == nil && t.Status.State.Terminal() {
			return q.Write(ctx, t)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			e.log.Warn("a2a: a cancelled remote turn has not ended yet", "task", rc.TaskID, "waited", e.cancelWait)
			if err != nil {
				return writeFinal(ctx, q, rc, a2a.TaskStateCanceled, agentText(rc, "Canceled."), nil)
			}
			owner, _ := rt.owner(ctx, rc.TaskID)
			setStatus(t, a2a.TaskStateCanceled, agentText(t, "Canceled."), nil)
			if _, err := rt.putRemote(context.WithoutCancel(ctx), owner, t); err != nil {
				e.log.Warn("a2a: storing a cancelled remote task", "task", rc.TaskID, "err", err)
			} else {
				e.notify(context.WithoutCancel(ctx), t)
			}
			return q.Write(ctx, t)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
}

// resumeRemoteTask handles a message to a remote task: its decisions go
// to the turn's waiting calls (Remote.DecideTask), then the task is
// followed in the store until it rests again, its stored state ending
// this exchange as one task event.
func (e *executor) resumeRemoteTask(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, rt *recordTasks, owner string, since int64) error {
	agentName, task := e.agent.Name, string(rc.TaskID)
	pending, err := e.remote.PendingTask(ctx, agentName, task)
	if err != nil {
		e.log.Warn("a2a: listing a remote task's approvals", "task", task, "err", err)
	}
	decided, problem := 0, ""
	if p, _ := host.PrincipalFrom(ctx); p != owner {
		problem = "only the principal that started the task may decide its approvals"
	} else {
		var decisions []decision
		decisions, problem = parseDecisions(rc.Message)
		for _, d := range decisions {
			for _, c := range pending {
				if d.id != "" && d.id != c.CallID {
					continue
				}
				err := e.remote.DecideTask(ctx, agentName, task, c.CallID, tool.Decision{Approved: d.approved, Reason: d.reason})
				switch {
				case err == nil:
					decided++
					e.log.Info("a2a: approval decided", "task", task, "call", c.CallID, "tool", c.Tool, "approved", d.approved)
				case !errors.Is(err, approval.ErrUnknown):
					problem = err.Error()
				}
			}
			if d.id != "" && !hasCall(pending, d.id) {
				problem = fmt.Sprintf("%q is not a call of this task waiting for approval", d.id)
			}
		}
	}
	if decided == 0 && len(pending) > 0 {
		return writeFinal(ctx, q, rc, a2a.TaskStateInputRequired, approvalMessage(rc, pendingRequests(pending), problem), nil)
	}
	t, err := follow(ctx, rt, rc.TaskID, since, host.Stop(ctx), func(*a2a.Task) bool {
		p, err := e.remote.PendingTask(ctx, agentName, task)
		return err != nil || len(p) > 0 // a new wait, not the one just decided
	})
	if err != nil {
		return err
	}
	if t == nil {
		return q.Write(ctx, agentText(rc, "This server stopped following the task; it goes on: ask for it with tasks/get."))
	}
	return q.Write(ctx, t)
}

func hasCall(calls []PendingCall, id string) bool {
	for _, c := range calls {
		if c.CallID == id {
			return true
		}
	}
	return false
}

// pendingRequests are a remote turn's waiting calls as approvalMessage
// lists them: each decided by its call id.
func pendingRequests(calls []PendingCall) []approval.Request {
	out := make([]approval.Request, len(calls))
	for i, c := range calls {
		out[i] = approval.Request{ID: c.CallID, CallID: c.CallID, Tool: c.Tool, Input: c.Input}
	}
	return out
}
