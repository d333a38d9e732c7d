package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agcore/agcore/llm"
)

// BenchmarkInvoke measures a batch of no-op calls: the invoker's own cost
// per batch (lookup, goroutines, results).
func BenchmarkInvoke(b *testing.B) {
	noop := &fnTool{name: "noop", fn: func(context.Context, json.RawMessage) (string, error) { return "ok", nil }}
	tools := []Tool{noop}
	for _, n := range []int{1, 4, 16} {
		calls := make([]llm.ToolUse, n)
		for i := range calls {
			calls[i] = call(fmt.Sprint("c", i), "noop", `{}`)
		}
		b.Run(fmt.Sprint(n, "calls"), func(b *testing.B) {
			inv := &Invoker{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inv.Invoke(context.Background(), func(n string) (Tool, bool) { return Find(tools, n) }, calls); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFuncToolInvoke measures a typed tool's validation, decoding and
// encoding around a no-op function.
func BenchmarkFuncToolInvoke(b *testing.B) {
	w := MustFunc("get_weather", "", weather)
	args := json.RawMessage(`{"city":"Paris","unit":"celsius","days":3}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Invoke(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}
