package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve"

	agtemporal "github.com/agcore/agcore/temporal"
)

// The reply's codes: codeUnknownCall for a decision of a call the turn
// does not wait on, codeInvalidContent for a decision whose content does
// not fit the form it answers (the workflow's validator refused it).
const (
	codeUnknownCall    = "unknown_call"
	codeInvalidContent = "invalid_content"
)

// runnerApprovals answers serve-runner's "pending" and "decide": the
// calls the workflow of a background response (Response), of an AG-UI
// run (AGUI, its key PRINCIPAL/RUN), of a chat turn of the web page
// (ChatID, PRINCIPAL/SESSION/RUN) or of an A2A task (A2A, AGENT/TASK)
// waits on, through its approvals query and update.
func runnerApprovals(ctx context.Context, cl client.Client, req runnerRequest) (runnerReply, error) {
	n := 0
	for _, id := range []string{req.Response, req.AGUI, req.ChatID, req.A2A} {
		if id != "" {
			n++
		}
	}
	if n != 1 {
		return runnerReply{}, errors.New(req.Op + ": a response, an AG-UI run, a chat turn or an A2A task, one of them")
	}
	pending, decide := agtemporal.PendingResponse, agtemporal.DecideResponse
	id := req.Response
	switch {
	case req.AGUI != "":
		pending, decide, id = agtemporal.PendingAGUI, agtemporal.DecideAGUI, req.AGUI
	case req.A2A != "":
		agentName, task, _ := strings.Cut(req.A2A, "/")
		pending = func(ctx context.Context, c client.Client, _ string) ([]agtemporal.PendingApproval, error) {
			return agtemporal.PendingA2A(ctx, c, agentName, task)
		}
		decide = func(ctx context.Context, c client.Client, _ string, d agtemporal.Decision) error {
			return agtemporal.DecideA2A(ctx, c, agentName, task, d)
		}
	case req.ChatID != "":
		pending, decide, id = agtemporal.PendingWeb, agtemporal.DecideWeb, req.ChatID
	}
	if req.Op == "pending" {
		p, err := pending(ctx, cl, id)
		return runnerReply{Pending: remoteApprovals(p)}, err
	}
	err := decide(ctx, cl, id, agtemporal.Decision{CallID: req.CallID, Approve: req.Approve, Reason: req.Reason, Content: req.Content})
	return runnerReply{Code: decideCode(err)}, err
}

// decideCode is the reply's code for a decision's error: "" for none or
// for an error that has no code.
func decideCode(err error) string {
	switch {
	case errors.Is(err, agtemporal.ErrUnknownCall):
		return codeUnknownCall
	case errors.Is(err, mcp.ErrFormContent):
		return codeInvalidContent
	}
	return ""
}

// remoteApprovals are a workflow's pending calls as serve lists them.
func remoteApprovals(p []agtemporal.PendingApproval) []serve.RemoteApproval {
	out := make([]serve.RemoteApproval, len(p))
	for i, a := range p {
		in := json.RawMessage(a.Input)
		if !json.Valid(in) {
			b, _ := json.Marshal(a.Input) // kept, as a JSON string
			in = b
		}
		out[i] = serve.RemoteApproval{CallID: a.CallID, Tool: a.Tool, Input: in, Since: a.Since}
	}
	return out
}
