package middleware

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

func inputGuardrail(fn InputGuardrailFunc) []Hook[InputGuardrailFunc] {
	return []Hook[InputGuardrailFunc]{{Name: "g", Func: fn}}
}

// The gate runs the input guardrails on the first call only, for Generate
// as for Stream, in both modes; a tripwire cancels a Generate in flight.
func TestInputGate(t *testing.T) {
	t.Parallel()
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	for _, mode := range []GuardrailMode{GuardrailsParallel, GuardrailsBlocking} {
		for _, streamed := range []bool{false, true} {
			call := func(m llm.Model) (*llm.Response, error) {
				if !streamed {
					return m.Generate(context.Background(), req)
				}
				var final *llm.Response
				for ev, err := range m.Stream(context.Background(), req) {
					if err != nil {
						return nil, err
					}
					if ev.Type == llm.EventComplete {
						final = ev.Response
					}
				}
				return final, nil
			}
			name := map[GuardrailMode]string{GuardrailsParallel: "parallel", GuardrailsBlocking: "blocking"}[mode]
			if streamed {
				name += "/stream"
			}
			t.Run(name+"/passes, first call only", func(t *testing.T) {
				t.Parallel()
				var runs atomic.Int32
				h := &Hooks{GuardrailMode: mode, InputGuardrails: inputGuardrail(func(context.Context, *llm.Request) error {
					runs.Add(1)
					return nil
				})}
				m := h.InputGate()(llmtest.New(llmtest.Text("one"), llmtest.Text("two")))
				for _, want := range []string{"one", "two"} {
					resp, err := call(m)
					if err != nil || resp.Message.Text() != want {
						t.Fatalf("%v %v, want %q", resp, err, want)
					}
				}
				if n := runs.Load(); n != 1 {
					t.Errorf("the guardrail ran %d times", n)
				}
			})
			t.Run(name+"/tripwire", func(t *testing.T) {
				t.Parallel()
				started := make(chan struct{})
				model := llmtest.New(llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
					close(started)
					<-ctx.Done()
					return nil, llm.Cancelled("test", ctx.Err())
				}))
				h := &Hooks{GuardrailMode: mode, InputGuardrails: inputGuardrail(func(context.Context, *llm.Request) error {
					if mode == GuardrailsParallel {
						<-started
					}
					return Deny("any verdict trips")
				})}
				_, err := call(h.InputGate()(model))
				var ge *GuardrailError
				if !errors.As(err, &ge) || !ge.Tripped || ge.Stage != StageInput || !errors.Is(err, ErrTripwire) {
					t.Fatalf("error %v", err)
				}
				if wantCalls := map[GuardrailMode]int{GuardrailsParallel: 1, GuardrailsBlocking: 0}[mode]; model.Calls() != wantCalls {
					t.Errorf("%d model calls, want %d", model.Calls(), wantCalls)
				}
			})
		}
	}
}

// Without input guardrails the gate is not there at all.
func TestInputGateWithoutGuardrails(t *testing.T) {
	t.Parallel()
	m := llmtest.New()
	for _, h := range []*Hooks{nil, {}, {OutputGuardrails: []Hook[OutputGuardrailFunc]{{Name: "o"}}}} {
		if got := h.InputGate()(m); got != llm.Model(m) {
			t.Errorf("%+v: the model is wrapped in %T", h, got)
		}
	}
}

// In parallel mode a tripwire that comes after the model call already
// answered still wins: the answer is dropped, for Generate as for Stream
// (its output is held until the verdict).
func TestInputTripwireAfterTheAnswer(t *testing.T) {
	t.Parallel()
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streamed], func(t *testing.T) {
			t.Parallel()
			answered := make(chan struct{})
			model := llmtest.New(llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
				defer close(answered)
				return &llm.Response{Message: llm.AssistantText("too early"), FinishReason: llm.FinishStop}, nil
			}))
			h := &Hooks{GuardrailMode: GuardrailsParallel, InputGuardrails: inputGuardrail(func(context.Context, *llm.Request) error {
				<-answered // the model has answered: the verdict comes after
				return Tripwire("late", nil)
			})}
			m := h.InputGate()(model)
			var resp *llm.Response
			var err error
			if streamed {
				for ev, e := range m.Stream(t.Context(), req) {
					if e != nil {
						err = e
						break
					}
					if ev.Type == llm.EventComplete || ev.Type == llm.EventTextDelta {
						t.Fatalf("the call's output (%v) passed before the guardrails' verdict", ev.Type)
					}
				}
			} else {
				resp, err = m.Generate(t.Context(), req)
			}
			var ge *GuardrailError
			if resp != nil || !errors.As(err, &ge) || !ge.Tripped || ge.Reason != "late" {
				t.Fatalf("response %v, error %v; want no response and the tripwire", resp, err)
			}
		})
	}
}
