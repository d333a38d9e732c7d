package cli

// The approvals of agcore serve --temporal's background responses and
// AG-UI runs: the calls their workflows wait on, listed and decided through the child
// serve-runner (the workflow's approvals query and update), so that
// GET and POST /v1/approvals of any replica reach them.

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

// serve-runner's codes: codeUnknownCall for a decision of a call the
// turn does not wait on, codeInvalidContent for one whose content does
// not fit the form it answers.
const (
	codeUnknownCall    = "unknown_call"
	codeInvalidContent = "invalid_content"
)

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
	a, err := r.ask(ctx, runnerMsg{Op: "decide", Response: responseID, CallID: callID, Approve: d.Approved, Reason: d.Reason, Content: d.Content})
	return decideError(a, err)
}

var _ serve.RemoteAGUICanceler = (*temporalRunner)(nil)

// CancelAGUI implements serve.RemoteAGUICanceler.
func (r *temporalRunner) CancelAGUI(ctx context.Context, key string) error {
	return r.call(ctx, runnerMsg{Op: "cancel", AGUI: key})
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
	a, err := r.ask(ctx, runnerMsg{Op: "decide", AGUI: key, CallID: callID, Approve: d.Approved, Reason: d.Reason, Content: d.Content})
	return decideError(a, err)
}

// decideError is the error of serve-runner's answer a to a decision: one
// wrapping approval.ErrUnknown for a call the turn does not wait on, one
// matching mcp.ErrFormContent (saying why, in one line) for content that
// does not fit the form it answers.
func decideError(a runnerMsg, err error) error {
	if err == nil {
		return nil
	}
	switch a.Code {
	case codeUnknownCall:
		return fmt.Errorf("%w: %s", approval.ErrUnknown, a.Error)
	case codeInvalidContent:
		_, why, ok := strings.Cut(a.Error, mcp.ErrFormContent.Error()+": ")
		if !ok {
			why = a.Error
		}
		return fmt.Errorf("%w: %s", mcp.ErrFormContent, why)
	}
	return err
}
