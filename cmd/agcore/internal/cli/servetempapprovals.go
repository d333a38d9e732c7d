package cli

// The approvals of agcore serve --temporal's background responses and
// AG-UI runs: the calls their workflows wait on, listed and decided through the child
// serve-runner (the workflow's approvals query and update), so that
// GET and POST /v1/approvals of any replica reach them.

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

// codeUnknownCall is serve-runner's code for a decision of a call the
// turn does not wait on.
const codeUnknownCall = "unknown_call"

// PendingRemote implements serve.RemoteApprovals.
func (r *temporalRunner) PendingRemote(ctx context.Context, responseID string) ([]serve.RemoteApproval, error) {
	a, err := r.ask(ctx, runnerMsg{Op: "pending", Response: responseID})
	if err != nil {
		return nil, err
	}
	return a.Pending, nil
}

// DecideRemote implements serve.RemoteApprovals.
func (r *temporalRunner) DecideRemote(ctx context.Context, responseID, callID string, d tool.Decision) error {
	a, err := r.ask(ctx, runnerMsg{Op: "decide", Response: responseID, CallID: callID, Approve: d.Approved, Reason: d.Reason})
	if err != nil && a.Code == codeUnknownCall {
		return fmt.Errorf("%w: %s", approval.ErrUnknown, a.Error)
	}
	return err
}

// PendingAGUI implements serve.RemoteAGUIApprovals.
func (r *temporalRunner) PendingAGUI(ctx context.Context, key string) ([]serve.RemoteApproval, error) {
	a, err := r.ask(ctx, runnerMsg{Op: "pending", AGUI: key})
	if err != nil {
		return nil, err
	}
	return a.Pending, nil
}

// DecideAGUI implements serve.RemoteAGUIApprovals.
func (r *temporalRunner) DecideAGUI(ctx context.Context, key, callID string, d tool.Decision) error {
	a, err := r.ask(ctx, runnerMsg{Op: "decide", AGUI: key, CallID: callID, Approve: d.Approved, Reason: d.Reason})
	if err != nil && a.Code == codeUnknownCall {
		return fmt.Errorf("%w: %s", approval.ErrUnknown, a.Error)
	}
	return err
}
