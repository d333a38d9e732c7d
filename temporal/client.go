package agtemporal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/mcp"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// DefaultTaskQueue is the task queue workers poll and turns are started
// on when none is given.
const DefaultTaskQueue = "agcore"

// NewWorker returns a worker polling taskQueue with the turn workflows and
// their activities registered (see [Register]). Start it with Run or Start.
func NewWorker(c client.Client, taskQueue string, opts Options, wopts worker.Options) worker.Worker {
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	w := worker.New(c, taskQueue, wopts)
	Register(w, opts)
	return w
}

// StartTurn starts the turn's workflow, id TurnWorkflowID(in.SessionID,
// in.TurnID), or attaches to it: a second start of a running turn returns
// the running workflow (the conflict policy USE_EXISTING), and a start of
// a turn that has ended returns that ended run (the reuse policy
// REJECT_DUPLICATE refuses to run it again), so a turn runs at most once
// however often it is submitted.
func StartTurn(ctx context.Context, c client.Client, taskQueue string, in TurnInput) (client.WorkflowRun, error) {
	if err := validateInput(&in); err != nil {
		return nil, err
	}
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	id := TurnWorkflowID(in.SessionID, in.TurnID)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowExecutionTimeout: in.Timeout,
	}, TurnWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return c.GetWorkflow(ctx, id, ""), nil
	}
	return run, err
}

// Pending returns the approvals a turn's workflow is waiting for.
func Pending(ctx context.Context, c client.Client, workflowID string) ([]PendingApproval, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", PendingQuery)
	if err != nil {
		return nil, fmt.Errorf("agtemporal: pending approvals of %s: %w", workflowID, err)
	}
	var out []PendingApproval
	if err := v.Get(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// Decide sends a decision to a turn's workflow and waits until the
// workflow has recorded it. A call id the turn is not waiting on is
// rejected by the update's validator (the error's text names
// ErrUnknownCall's); content that does not fit the form it answers is an
// error matching mcp.ErrFormContent, saying why in one line.
func Decide(ctx context.Context, c client.Client, workflowID string, d Decision) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: DecideUpdate, Args: []any{d},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrTypeFormContent {
		why := strings.TrimPrefix(ae.Message(), mcp.ErrFormContent.Error()+": ")
		return fmt.Errorf("agtemporal: deciding %s: %w: %s", d.CallID, mcp.ErrFormContent, why)
	}
	if err != nil {
		return fmt.Errorf("agtemporal: deciding %s on %s: %w", d.CallID, workflowID, err)
	}
	return nil
}
