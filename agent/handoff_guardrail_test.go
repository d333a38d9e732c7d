package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
)

// TestHandoffRunsTheAnsweringAgentsOutputGuardrails: after a handoff the
// output guardrails that check the answer are those of the agent that
// gave it, not those of the agent the turn started with.
func TestHandoffRunsTheAnsweringAgentsOutputGuardrails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, answer string
		tripped      string // the guardrail that trips; "" for none
	}{
		{"billing's guardrail trips on billing's answer", "A refund of $10 is on its way.", "no-refunds"},
		{"triage's guardrail does not check billing's answer", "Your invoice was sent again.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			billing, err := agent.New(llmtest.New(llmtest.Text(tt.answer)), agent.Config{Name: "billing",
				Hooks: &middleware.Hooks{OutputGuardrails: outputGuard("no-refunds", func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
					if strings.Contains(resp.Message.Text(), "refund") {
						return middleware.Tripwire("promises a refund", nil)
					}
					return nil
				})}})
			if err != nil {
				t.Fatal(err)
			}
			triage, err := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("c1", "transfer_to_billing", `{}`))), agent.Config{Name: "triage",
				Handoffs: []*agent.Agent{billing},
				Hooks: &middleware.Hooks{OutputGuardrails: outputGuard("triage-only", func(context.Context, *llm.Request, *llm.Response) error {
					return middleware.Tripwire("triage's own answers only", nil)
				})}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := triage.Run(t.Context(), []llm.Message{llm.UserText("Billing question")}, nil)
			var ge *middleware.GuardrailError
			switch {
			case tt.tripped == "" && err != nil:
				t.Fatalf("error %v, want billing's answer", err)
			case tt.tripped == "" && (resp.Agent != "billing" || resp.Text() != tt.answer):
				t.Fatalf("answer %q by %q", resp.Text(), resp.Agent)
			case tt.tripped != "" && (!errors.As(err, &ge) || ge.Guardrail != tt.tripped || ge.Stage != middleware.StageOutput):
				t.Fatalf("error %v, want the output guardrail %q tripped", err, tt.tripped)
			}
		})
	}
}
