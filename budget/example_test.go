package budget_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// An agent whose model would call tools for ever, under a limit of 30,000
// tokens a run. Each call reports 10,100 tokens, far more input than the
// estimator counts in the tiny request: after the first call the meter
// scales its counts by what the provider reported, so the worst case of
// the third call (over 10,000 tokens) does not fit the 9,800 left, and it
// is not sent. The turn keeps what it did.
func Example() {
	info := llm.ModelInfo{Provider: "test", Name: "loop", ContextWindow: 100_000, MaxOutputTokens: 100,
		Price: &llm.Price{Input: 1, Output: 10}}
	model := llmtest.New().WithInfo(info)
	for i := range 10 {
		model.Add(llmtest.Reply(llmtest.Call(fmt.Sprint("call_", i), "tick", map[string]any{})).
			WithUsage(llm.Usage{InputTokens: 10_000, OutputTokens: 100}))
	}
	tick := tool.MustFunc("tick", "one more step", func(context.Context, struct{}) (string, error) { return "tock", nil })
	a, err := agent.New(model, agent.Config{Tools: []tool.Tool{tick}, Budget: budget.Limits{Tokens: 30_000}})
	if err != nil {
		panic(err)
	}
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText("loop")}, nil)
	var ee *budget.ExceededError
	fmt.Println(errors.Is(err, llm.ErrBudgetExceeded), errors.As(err, &ee) && ee.Kind == budget.KindTokens)
	fmt.Println(model.Calls(), "calls sent;", resp.FinishReason, "after", resp.Usage.Total(), "tokens")
	fmt.Println(*resp.Budget.Run.Tokens, "tokens left")
	// Output:
	// true true
	// 2 calls sent; budget after 20200 tokens
	// 9800 tokens left
}
