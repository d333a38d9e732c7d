package cli

// The web page's chat turns under agcore serve --temporal: the
// temporalRunner is the page's web.Remote, each turn handed, as data, to
// the child serve-runner, which runs it as a workflow
// (agcore-web/PRINCIPAL/SESSION/RUN) on the workers, and cancels it or
// lists and decides the calls it waits on (web.RemoteApprovals), so that
// the page of every replica follows, stops and approves it; it says
// whether the workflow still runs (web.RemoteWatcher), so that a turn
// whose workflow ended without its outcome ends failed.

import (
	"context"

	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/tool"
)

var (
	_ web.Remote          = (*temporalRunner)(nil)
	_ web.RemoteApprovals = (*temporalRunner)(nil)
	_ web.RemoteWatcher   = (*temporalRunner)(nil)
)

// StartChat implements web.Remote.
func (r *temporalRunner) StartChat(ctx context.Context, t web.RemoteChat) error {
	return r.call(ctx, runnerMsg{Op: "start", Agents: r.agents, ApproveAll: r.approveAll, Chat: &t})
}

// CancelChat implements web.Remote.
func (r *temporalRunner) CancelChat(ctx context.Context, id string) error {
	return r.call(ctx, runnerMsg{Op: "cancel", ChatID: id})
}

// PendingChat implements web.RemoteApprovals.
func (r *temporalRunner) PendingChat(ctx context.Context, id string) ([]web.RemoteApproval, error) {
	a, err := r.ask(ctx, runnerMsg{Op: "pending", ChatID: id})
	if err != nil {
		return nil, err
	}
	out := make([]web.RemoteApproval, len(a.Pending))
	for i, p := range a.Pending {
		out[i] = web.RemoteApproval{CallID: p.CallID, Tool: p.Tool, Input: p.Input, Since: p.Since}
	}
	return out, nil
}

// DecideChat implements web.RemoteApprovals.
func (r *temporalRunner) DecideChat(ctx context.Context, id, callID string, d tool.Decision) error {
	a, err := r.ask(ctx, runnerMsg{Op: "decide", ChatID: id, CallID: callID, Approve: d.Approved, Reason: d.Reason, Content: d.Content})
	return decideError(a, err)
}

// ChatEnded implements web.RemoteWatcher, as RemoteEnded does
// serve.RemoteWatcher: the turn's workflow described by serve-runner's
// "status" op; one the server does not know is web.ErrChatNotFound.
func (r *temporalRunner) ChatEnded(ctx context.Context, id string) (bool, string, error) {
	return r.workflowEnded(ctx, runnerMsg{Op: "status", ChatID: id}, web.ErrChatNotFound)
}
