package agtemporal

// A2A tasks of agcore serve --temporal: a TurnWorkflow whose input
// carries an a2aserve.TaskLog writes the turn's progress, as the A2A
// task (a2aserve.TaskEvents), to the task's record in the serving
// processes' store, with the push notifications of each change of its
// state (a2aserve.TaskWriter), so that any replica answers tasks/get,
// resubscribes and cancels it while the turn runs on the workers. The
// workflow is respond's (respond.go), with A2A's translation: its writes
// are the task as it changed, at most once per EventsFlushInterval of
// workflow time, then the final one.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/runlog"
)

const activityA2ATask = "agcore.A2ATask"

// A2ATaskInput is one write of an A2A task: the task as it changed since
// the last write, the last one stored, Final for the task's end.
type A2ATaskInput struct {
	Log a2aserve.TaskLog
	// Owner is the principal the session store is scoped to
	// (TurnInput.Principal), where the completed task's turn is placed.
	Owner string `json:",omitempty"`
	Tasks []json.RawMessage
	Final bool `json:",omitempty"`
}

// A2AWorkflowID is the workflow id of the turn of an agcore serve A2A
// task: its agent's and its own id.
func A2AWorkflowID(agent, task string) string { return "agcore-a2a/" + agent + "/" + task }

// StartA2A starts the turn of an A2A task (in.A2A set), workflow id
// A2AWorkflowID, or finds it already started: a task runs once.
func StartA2A(ctx context.Context, c client.Client, taskQueue string, in TurnInput) error {
	if in.A2A == nil {
		return errors.New("agtemporal: StartA2A needs TurnInput.A2A")
	}
	return startOnce(ctx, c, taskQueue, in, A2AWorkflowID(in.A2A.Agent, in.A2A.TaskID), enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
}

// CancelA2A asks the turn of an A2A task to stop: the task ends
// canceled. A turn that is unknown or already over is not an error.
func CancelA2A(ctx context.Context, c client.Client, agent, task string) error {
	err := c.CancelWorkflow(ctx, A2AWorkflowID(agent, task), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// PendingA2A returns the calls the turn of an A2A task waits on; none
// (no error) when no such workflow runs.
func PendingA2A(ctx context.Context, c client.Client, agent, task string) ([]PendingApproval, error) {
	return pendingOf(ctx, c, A2AWorkflowID(agent, task))
}

// DecideA2A sends d to the turn of an A2A task and waits until the
// workflow has recorded it. It returns an error wrapping ErrUnknownCall
// when the turn does not wait on d.CallID.
func DecideA2A(ctx context.Context, c client.Client, agent, task string, d Decision) error {
	return decideOf(ctx, c, A2AWorkflowID(agent, task), "A2A task "+agent+"/"+task, d)
}

// a2aTranslator is an A2A task's: a2aserve.TaskEvents, each change of
// the task one "event" holding the task, written by the A2ATask activity
// (a2aserve.TaskWriter).
type a2aTranslator struct {
	l     a2aserve.TaskLog
	owner string
	ev    *a2aserve.TaskEvents
}

func newA2ATranslator(l a2aserve.TaskLog, owner string, now func() time.Time, ids func(string) string) (*a2aTranslator, error) {
	ev, err := a2aserve.NewTaskEvents(l, now, ids)
	if err != nil {
		return nil, err
	}
	return &a2aTranslator{l: l, owner: owner, ev: ev}, nil
}

func (t *a2aTranslator) log() (string, time.Duration) { return "", 0 }

// take returns the task as one event when it changed.
func (t *a2aTranslator) take() []runlog.Event {
	b, ok := t.ev.Take()
	if !ok {
		return nil
	}
	return []runlog.Event{{Type: "task", Data: b}}
}

func (t *a2aTranslator) update(u agent.Update) []runlog.Event {
	t.ev.Update(u)
	return t.take()
}

func tasksOf(events []runlog.Event) []json.RawMessage {
	out := make([]json.RawMessage, len(events))
	for i, e := range events {
		out[i] = e.Data
	}
	return out
}

func (t *a2aTranslator) flush(batch []runlog.Event) (string, any) {
	return activityA2ATask, A2ATaskInput{Log: t.l, Owner: t.owner, Tasks: tasksOf(batch)}
}

func (t *a2aTranslator) end(resp *agent.Response, err error, cancelled bool, pending []runlog.Event) (string, any) {
	final, _ := t.ev.End(resp, err, cancelled)
	return activityA2ATask, A2ATaskInput{Log: t.l, Owner: t.owner, Tasks: append(tasksOf(pending), final), Final: true}
}

// A2ATask writes an A2A task's changes and notifies its webhooks
// (a2aserve.TaskWriter.Store).
func (a *activities) A2ATask(ctx context.Context, in A2ATaskInput) error {
	recs, err := a.records()
	if err != nil {
		return err
	}
	st, _ := a.store(in.Owner)
	return a.tasks.Store(ctx, recs, st, in.Log, in.Tasks, in.Final)
}
