package budget_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// BenchmarkCheck measures the budget check alone on one model call of a
// session of about n messages: the same call through compact.Guard with
// and without a meter inside it (the request as the budget policy has just
// counted it), alternately in one loop, so both see the same machine. The
// model answers at once, so the difference is the check's own cost:
// "check-ns/call", beside "floor-ns/call" (the policy's count and the
// call without the meter). Agent's BenchmarkBudgetCheck puts it against a
// whole turn.
//
// Nothing here asserts a timing.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			msgs := []llm.Message{llm.SystemText("You are terse.")}
			for i := range n / 2 {
				msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d about the file session/prefix.go and its tests", i)),
					llm.AssistantText(fmt.Sprintf("answer %d: the prefix hashes are kept per message and compared on load", i)))
			}
			req := &llm.Request{Messages: msgs, MaxTokens: 1000}
			info := llm.ModelInfo{Name: "m", Provider: "test", ContextWindow: 1 << 30, MaxOutputTokens: 1000, Price: &llm.Price{Input: 1, Output: 2}}
			floorPolicy, meterPolicy := &compact.Policy{}, &compact.Policy{}
			floor := compact.Guard(floorPolicy)(instant{info})
			meter := &budget.Meter{Run: budget.Limits{Tokens: 1 << 50, CostUSD: 1e12}, Policy: meterPolicy}
			metered := compact.Guard(meterPolicy)(meter.Middleware()(instant{info}))
			ctx := context.Background()
			var floorTime, meterTime time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, err := floor.Generate(ctx, req); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := metered.Generate(ctx, req); err != nil {
					b.Fatal(err)
				}
				floorTime += t1.Sub(t0)
				meterTime += time.Since(t1)
			}
			f, m := float64(floorTime)/float64(b.N), float64(meterTime)/float64(b.N)
			b.ReportMetric(f, "floor-ns/call")
			b.ReportMetric(m-f, "check-ns/call")
		})
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
