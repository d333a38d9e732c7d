package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session/memstore"
)

// BenchmarkGuardrails measures what guardrails add to a turn (memstore,
// the replay model, which costs next to nothing, so the figures are the
// framework's own): guardrails=none is the floor, input=parallel and
// input=blocking one trivial input guardrail, both one input and one
// output guardrail. Each sub-benchmark reports ns/op; compare them with
// the floor of the same run (the parallel gate costs a goroutine and a
// channel per turn, the checks themselves are the user's).
func BenchmarkGuardrails(b *testing.B) {
	pass := func(_ context.Context, req *llm.Request) error {
		if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "forbidden") {
			return middleware.Block("forbidden")
		}
		return nil
	}
	passOut := func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
		if strings.Contains(resp.Message.Text(), "forbidden") {
			return middleware.Block("forbidden")
		}
		return nil
	}
	in := []middleware.Hook[middleware.InputGuardrailFunc]{{Name: "in", Func: pass}}
	out := []middleware.Hook[middleware.OutputGuardrailFunc]{{Name: "out", Func: passOut}}
	cases := []struct {
		name  string
		hooks *middleware.Hooks
	}{
		{"guardrails=none", nil},
		{"input=parallel", &middleware.Hooks{InputGuardrails: in}},
		{"input=blocking", &middleware.Hooks{InputGuardrails: in, GuardrailMode: middleware.GuardrailsBlocking}},
		{"input+output", &middleware.Hooks{InputGuardrails: in, OutputGuardrails: out}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			a := newAgent(b, newReplayModel(), agent.Config{Name: "bench", Instructions: "Answer briefly.", Store: memstore.New(), Hooks: c.hooks})
			ctx := context.Background()
			msgs := []llm.Message{llm.UserText("What is the capital of France, and why is it famous?")}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				resp, err := a.Run(ctx, msgs, &agent.RunOptions{SessionID: fmt.Sprintf("s%d", i/turnsPerSession)})
				if err != nil {
					b.Fatal(err)
				}
				if err := resp.PersistErr(); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
