package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/web"
)

// TestServeRunnerWebTurnInput: a start request of a chat turn of the web
// page, as agcore serve writes it on the wire ("chat"), becomes a workflow
// input with Web (and neither Response nor AGUI): the session's owner as
// the principal, the run as the turn id, the quota of another principal
// kept as QuotaPrincipal.
func TestServeRunnerWebTurnInput(t *testing.T) {
	chat := web.RemoteChat{Agent: "agcore", Input: []llm.Message{llm.UserText("hi")},
		Quota: &web.ChatQuota{Principal: "local", Total: budget.Limits{Tokens: 100}},
		Log:   web.ChatLog{Key: "local/s1", Session: "s1", Run: "r1", Seq: 2}}
	line, err := json.Marshal(runnerRequest{ID: 1, Op: "start", Agents: []agent.Spec{{Name: "agcore"}}, ApproveAll: true, Chat: &chat})
	if err != nil {
		t.Fatal(err)
	}
	var req runnerRequest
	if err := json.Unmarshal(line, &req); err != nil {
		t.Fatal(err)
	}
	in := chatInput(req)
	if in.Web == nil || *in.Web != chat.Log || in.Response != nil || in.AGUI != nil || in.TurnID != "r1" || in.SessionID != "s1" ||
		in.Principal != "" || in.Agent != "agcore" || !in.ApproveAll || len(in.Messages) != 1 {
		t.Fatalf("the input %+v", in)
	}
	if in.Quota == nil || in.Quota.Total.Tokens != 100 || in.QuotaPrincipal != "local" {
		t.Fatalf("the quota %+v of %q", in.Quota, in.QuotaPrincipal)
	}
}

// TestRunnerApprovalsOfOneTurn: "pending" and "decide" name one turn: a
// chat turn together with a response or an AG-UI run is refused before
// any call to the server.
func TestRunnerApprovalsOfOneTurn(t *testing.T) {
	for _, op := range []string{"pending", "decide"} {
		for name, req := range map[string]runnerRequest{
			"chat and response": {Op: op, Response: "resp_1", ChatID: "local/s1/r1"},
			"chat and agui":     {Op: op, AGUI: "local/r1", ChatID: "local/s1/r1"},
		} {
			if _, err := runnerApprovals(context.Background(), nil, req); err == nil {
				t.Errorf("%s with %s: no error", op, name)
			}
		}
	}
}
