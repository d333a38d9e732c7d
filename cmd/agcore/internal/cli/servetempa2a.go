package cli

// agcore serve --temporal's A2A tasks: the temporalRunner is the A2A
// handler's a2aserve.Remote, so that every task's turn runs as a workflow
// (agcore-a2a/AGENT/TASK) on the workers, cancelled, and its approvals
// listed and decided, through the child serve-runner.

import (
	"context"
	"encoding/json"

	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/tool"
)

var _ a2aserve.RemoteWatcher = (*temporalRunner)(nil)

// StartTask implements a2aserve.Remote.
func (r *temporalRunner) StartTask(ctx context.Context, t a2aserve.RemoteTask) error {
	return r.call(ctx, runnerMsg{Op: "start", Agents: r.agents, ApproveAll: r.approveAll, Task: &t})
}

// CancelTask implements a2aserve.Remote.
func (r *temporalRunner) CancelTask(ctx context.Context, agent, task string) error {
	return r.call(ctx, runnerMsg{Op: "cancel", A2A: agent + "/" + task})
}

// PendingTask implements a2aserve.Remote.
func (r *temporalRunner) PendingTask(ctx context.Context, agent, task string) ([]a2aserve.PendingCall, error) {
	a, err := r.ask(ctx, runnerMsg{Op: "pending", A2A: agent + "/" + task})
	if err != nil {
		return nil, err
	}
	out := make([]a2aserve.PendingCall, len(a.Pending))
	for i, p := range a.Pending {
		out[i] = a2aserve.PendingCall{CallID: p.CallID, Tool: p.Tool, Input: json.RawMessage(p.Input)}
	}
	return out, nil
}

// DecideTask implements a2aserve.Remote.
func (r *temporalRunner) DecideTask(ctx context.Context, agent, task, callID string, d tool.Decision) error {
	a, err := r.ask(ctx, runnerMsg{Op: "decide", A2A: agent + "/" + task, CallID: callID, Approve: d.Approved, Reason: d.Reason, Content: d.Content})
	return decideError(a, err)
}

// TaskEnded implements a2aserve.RemoteWatcher: the serve-runner child
// describes the task's workflow (its "status" op); one that is no longer
// running ended without the task's end when a2aserve asks (the end's
// write is its last activity). One the server does not know is
// a2aserve.ErrRemoteNotFound.
func (r *temporalRunner) TaskEnded(ctx context.Context, agent, task string) (bool, string, error) {
	return r.workflowEnded(ctx, runnerMsg{Op: "status", A2A: agent + "/" + task}, a2aserve.ErrRemoteNotFound)
}
