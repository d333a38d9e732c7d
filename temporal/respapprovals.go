package agtemporal

// The approvals of agcore serve --temporal's background responses and
// AG-UI runs: the calls a response's workflow (ResponseWorkflowID) or an
// AG-UI run's (AGUIWorkflowID) waits on, listed by its PendingQuery and
// decided by its DecideUpdate, as for any turn, but addressed by the
// response id or the run's key, and with a turn that is over (or never
// started) waiting on nothing.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// PendingResponse returns the calls the turn of background response
// responseID waits on; none (no error) when no such workflow runs.
func PendingResponse(ctx context.Context, c client.Client, responseID string) ([]PendingApproval, error) {
	return pendingOf(ctx, c, ResponseWorkflowID(responseID))
}

// PendingAGUI returns the calls the turn of agcore serve's AG-UI run key
// (PRINCIPAL/RUN: serve.AGUILog.Key) waits on; none (no error) when no
// such workflow runs.
func PendingAGUI(ctx context.Context, c client.Client, key string) ([]PendingApproval, error) {
	return pendingOf(ctx, c, AGUIWorkflowID(key))
}

// pendingOf returns the calls workflow id waits on; none when it is over
// or unknown.
func pendingOf(ctx context.Context, c client.Client, id string) ([]PendingApproval, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agtemporal: pending approvals of %s: %w", id, err)
	}
	if desc.GetWorkflowExecutionInfo().GetCloseTime() != nil {
		return nil, nil // over: it waits on nothing
	}
	return Pending(ctx, c, id)
}

// DecideResponse sends d to the turn of background response responseID
// and waits until the workflow has recorded it. It returns an error
// wrapping ErrUnknownCall when the turn does not wait on d.CallID: never
// did, already decided, or no such workflow runs.
func DecideResponse(ctx context.Context, c client.Client, responseID string, d Decision) error {
	return decideOf(ctx, c, ResponseWorkflowID(responseID), "response "+responseID, d)
}

// DecideAGUI sends d to the turn of agcore serve's AG-UI run key
// (PRINCIPAL/RUN) and waits until the workflow has recorded it. It
// returns an error wrapping ErrUnknownCall when the turn does not wait on
// d.CallID: never did, already decided, or no such workflow runs.
func DecideAGUI(ctx context.Context, c client.Client, key string, d Decision) error {
	return decideOf(ctx, c, AGUIWorkflowID(key), "AG-UI run "+key, d)
}

// decideOf sends d to workflow id (what names it: of) as DecideResponse
// says.
func decideOf(ctx context.Context, c client.Client, id, of string, d Decision) error {
	err := Decide(ctx, c, id, d)
	if err == nil {
		return nil
	}
	var nf *serviceerror.NotFound
	// The validator's rejection comes back as its text; a workflow that
	// is over refuses updates.
	if errors.As(err, &nf) || strings.Contains(err.Error(), ErrUnknownCall.Error()) || strings.Contains(err.Error(), "workflow execution already completed") {
		return fmt.Errorf("%w: %q of %s", ErrUnknownCall, d.CallID, of)
	}
	return err
}
