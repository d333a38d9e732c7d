package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// TestHandoffKeepsTheRunsBudget: after a handoff, the target's model calls
// go through the run's spending meter too: a target that would loop is
// stopped by the run's token budget, not by its step limit.
func TestHandoffKeepsTheRunsBudget(t *testing.T) {
	info := llm.ModelInfo{Provider: "test", Name: "m", ContextWindow: 100_000, MaxOutputTokens: 100}
	loop := llmtest.New().WithInfo(info)
	for range 50 {
		loop.Add(llmtest.Reply(llmtest.Call("", "tick", `{}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 100}))
	}
	tick := tool.MustFunc("tick", "one more step", func(context.Context, struct{}) (string, error) { return "tock", nil })
	billing, err := agent.New(loop, agent.Config{Name: "billing", Tools: []tool.Tool{tick}, MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	triage, err := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("c0", agent.TransferToolName("billing"), `{}`))).WithInfo(info),
		agent.Config{Name: "triage", Handoffs: []*agent.Agent{billing}, Budget: budget.Limits{Tokens: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := triage.Run(context.Background(), []llm.Message{llm.UserText("refund")}, nil)
	var ee *budget.ExceededError
	if !errors.As(err, &ee) || !errors.Is(err, llm.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want the run's budget error", err)
	}
	if n := loop.Calls(); n == 0 || n >= 20 {
		t.Fatalf("the target made %d calls: want some, stopped by the 2,000-token budget", n)
	}
	if resp == nil || resp.Agent != "billing" || resp.FinishReason != llm.FinishBudget {
		t.Fatalf("response %+v: want billing's, finished by the budget", resp)
	}
}
