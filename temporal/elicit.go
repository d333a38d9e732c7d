package agtemporal

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// ElicitationTool is the tool name an MCP server's request for input has
// among a turn's pending decisions ([PendingApproval.Tool]), as it has in
// agcore serve's (mcp.ElicitationTool).
const ElicitationTool = mcp.ElicitationTool

// ElicitRequest is an MCP server's request for input, filed with the turn
// by [ElicitUpdate]: ID is its pending decision's call id, Input its JSON
// (the server, the message, the requested schema).
type ElicitRequest struct {
	ID    string
	Input string
}

// elicit is the ElicitUpdate handler: the request waits among the pending
// decisions (the PendingQuery lists it, the DecideUpdate decides it) and
// the update completes with the decision, or a denial at the turn's
// approval timeout.
func (d *driver) elicit(w workflow.Context, q ElicitRequest) (Decision, error) {
	if d.in.ApproveAll {
		return Decision{CallID: q.ID, Approve: true}, nil
	}
	delete(d.decided, q.ID)
	d.pending = append(d.pending, PendingApproval{CallID: q.ID, Tool: ElicitationTool, Input: q.Input, Since: workflow.Now(w).UTC()})
	if d.waiting != nil { // an AG-UI run's interrupt, as for a call (respond.go)
		d.waiting(tool.Call{ID: q.ID, Name: ElicitationTool, Input: json.RawMessage(q.Input)})
	}
	decided := func() bool { _, ok := d.decided[q.ID]; return ok }
	if d.in.ApprovalTimeout > 0 {
		ok, err := workflow.AwaitWithTimeout(w, d.in.ApprovalTimeout, decided)
		if err != nil || !ok {
			return Decision{CallID: q.ID, Reason: fmt.Sprintf("no decision within %s", d.in.ApprovalTimeout)}, err
		}
	} else if err := workflow.Await(w, decided); err != nil {
		return Decision{}, err
	}
	return d.decided[q.ID], nil
}

// elicitations numbers the requests of this process, for their ids.
var elicitations atomic.Uint64

// Elicit answers an MCP server's request for input made during a tool
// activity (ctx is the activity's, or derived from it): the request is
// filed with the activity's workflow as a pending decision (tool
// [ElicitationTool]), which `agcore approve` lists and decides; approving
// accepts with the decision's content over the form's defaults (checked by
// the DecideUpdate's validator), denying declines. Out of an activity,
// or when the workflow cannot be reached, the request is declined. A
// worker gives it to the MCP servers its tools come from (mcp.Server's
// Elicit), with its client.
func Elicit(ctx context.Context, c client.Client, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if c == nil || !activity.IsActivity(ctx) {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	info := activity.GetInfo(ctx)
	call, err := mcp.ElicitationCall(fmt.Sprintf("elicitation-%s-%d", info.ActivityID, elicitations.Add(1)), server, req)
	if err != nil {
		return nil, err
	}
	q := ElicitRequest{ID: call.ID, Input: string(call.Input)}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		UpdateName: ElicitUpdate, Args: []any{q}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	var dec Decision
	if err := h.Get(ctx, &dec); err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	// Checked already by the DecideUpdate's validator; a content that
	// still does not fit cancels.
	res, err := mcp.ElicitResult(req, dec.Tool())
	if err != nil {
		activity.GetLogger(ctx).Warn("the answer to an MCP server's request for input was cancelled", "server", server, "error", err)
	}
	return res, nil
}
