package agtemporal

// The approvals of agcore serve --temporal's background responses: the
// calls a response's workflow (ResponseWorkflowID) waits on, listed by
// its PendingQuery and decided by its DecideUpdate, as for any turn, but
// addressed by the response id, and with a turn that is over (or never
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
	id := ResponseWorkflowID(responseID)
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
	err := Decide(ctx, c, ResponseWorkflowID(responseID), d)
	if err == nil {
		return nil
	}
	var nf *serviceerror.NotFound
	// The validator's rejection comes back as its text; a workflow that
	// is over refuses updates.
	if errors.As(err, &nf) || strings.Contains(err.Error(), ErrUnknownCall.Error()) || strings.Contains(err.Error(), "workflow execution already completed") {
		return fmt.Errorf("%w: %q of response %s", ErrUnknownCall, d.CallID, responseID)
	}
	return err
}
