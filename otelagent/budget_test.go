package otelagent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/tool"
)

// A run a spending limit stopped: its invoke_agent span names the limit
// (error.type budget_exceeded, agcore.budget.exceeded) and what is left of
// it; the call that was not sent has no chat span.
func TestBudgetOnTheRunSpan(t *testing.T) {
	r := newRecorded(t, otelagent.Config{Clock: &stepClock{}})
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "lookup", `{"q":"paris"}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 10}),
		llmtest.Text("never sent"),
	).WithInfo(priced)
	a := newAgent(t, model, agent.Config{Name: "weather", Tools: []tool.Tool{echoTool{"lookup"}}, Telemetry: r.tel,
		Budget: budget.Limits{Tokens: 500}})
	_, err := a.Run(context.Background(), []llm.Message{llm.UserText("Weather in Paris?")}, &agent.RunOptions{MaxTokens: 300})
	if !errors.Is(err, llm.ErrBudgetExceeded) {
		t.Fatalf("run: %v, want the budget's refusal", err)
	}
	spans := r.ended()
	if n := len(find(spans, "chat gpt-test")); n != 1 || model.Calls() != 1 {
		t.Errorf("%d chat spans for %d calls, want 1", n, model.Calls())
	}
	run := one(t, spans, "invoke_agent weather")
	failed(t, run, "budget_exceeded")
	wantAttrs(t, run, map[string]string{
		otelagent.AttrBudgetExceeded:                 "run.tokens",
		otelagent.AttrBudgetRemaining + "run.tokens": "390",
	})
}
