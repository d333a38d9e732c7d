package budget_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// BenchmarkCheck measures the budget check alone on one model call of a
// session of about n messages (the request as the budget policy has just
// counted it: compact.Guard, then the meter), against a floor of the same
// call without the meter, in the same run: "check-ns/op" is the
// difference. The model answers at once, so the figure is the
// check's own cost; agent's BenchmarkBudgetCheck puts it against a whole
// turn.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 1000} {
		msgs := []llm.Message{llm.SystemText("You are terse.")}
		for i := range n / 2 {
			msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d about the file session/prefix.go and its tests", i)),
				llm.AssistantText(fmt.Sprintf("answer %d: the prefix hashes are kept per message and compared on load", i)))
		}
		req := &llm.Request{Messages: msgs, MaxTokens: 1000}
		info := llm.ModelInfo{Name: "m", Provider: "test", ContextWindow: 1 << 30, MaxOutputTokens: 1000, Price: &llm.Price{Input: 1, Output: 2}}
		run := func(b *testing.B, withMeter bool) {
			policy := &compact.Policy{}
			var next llm.Model = instant{info}
			if withMeter {
				meter := &budget.Meter{Run: budget.Limits{Tokens: 1 << 50, CostUSD: 1e12}, Policy: policy}
				next = meter.Middleware()(next)
			}
			guarded := compact.Guard(policy)(next)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := guarded.Generate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("messages=%d/floor", n), func(b *testing.B) { run(b, false) })
		b.Run(fmt.Sprintf("messages=%d/meter", n), func(b *testing.B) { run(b, true) })
	}
}

// instant answers every request at once with the same response.
type instant struct{ info llm.ModelInfo }

var answer = &llm.Response{Message: llm.AssistantText("ok"), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 10, OutputTokens: 1}}

func (m instant) Info() llm.ModelInfo { return m.info }

func (m instant) Generate(context.Context, *llm.Request) (*llm.Response, error) { return answer, nil }

func (m instant) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		yield(llm.Event{Type: llm.EventComplete, Response: answer}, nil)
	}
}
