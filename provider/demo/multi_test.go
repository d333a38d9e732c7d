package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var agentParams = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)

func TestHandsOverToNamedAgent(t *testing.T) {
	m := &Model{}
	tools := []llm.ToolDefinition{{Name: "transfer_to_billing", Parameters: json.RawMessage(`{}`)}, {Name: "transfer_to_tech_support", Parameters: json.RawMessage(`{}`)}}
	for user, want := range map[string]string{
		"My invoice is wrong, billing please": "transfer_to_billing",
		"The app crashes: support!":           "transfer_to_tech_support",
		"hello":                               "transfer_to_billing",
	} {
		req := &llm.Request{Messages: []llm.Message{llm.SystemText("Route."), llm.UserText(user)}, Tools: tools}
		resp, err := m.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolUses()
		if len(calls) != 1 || calls[0].Name != want {
			t.Errorf("%q: calls %+v, want %s", user, calls, want)
			continue
		}
		// The target's request holds the transfer: it answers instead.
		req.Messages = append(req.Messages, resp.Message, llm.ToolResultText(calls[0].ID, "Transferred.", false))
		req.Messages[0] = llm.SystemText("You handle billing. Be kind.")
		resp, _ = m.Generate(t.Context(), req)
		if resp.Message.HasToolUse() || !strings.Contains(resp.Message.Text(), "You handle billing.") {
			t.Errorf("%q: after the handoff: %q", user, resp.Message.Text())
		}
	}
}

func TestAsksAgentTools(t *testing.T) {
	m := &Model{}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("What is Go?")}, Tools: []llm.ToolDefinition{
		{Name: "historian", Parameters: agentParams}, {Name: "critic", Parameters: agentParams}, {Name: "other", Parameters: json.RawMessage(`{"type":"object"}`)},
	}}
	resp, _ := m.Generate(t.Context(), req)
	calls := resp.Message.ToolUses()
	if len(calls) != 2 || calls[0].Name != "historian" || calls[1].Name != "critic" || string(calls[0].Input) != `{"input":"What is Go?"}` {
		t.Fatalf("calls %+v", calls)
	}
	req.Messages = append(req.Messages, resp.Message, llm.ToolResultText(calls[0].ID, "Since 2009.", false), llm.ToolResultText(calls[1].ID, "Simple.", false))
	resp, _ = m.Generate(t.Context(), req)
	if got := resp.Message.Text(); resp.Message.HasToolUse() || !strings.Contains(got, "**historian**: Since 2009.") || !strings.Contains(got, "**critic**: Simple.") {
		t.Errorf("answer %q", got)
	}
}
