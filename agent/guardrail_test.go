package agent_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// firstStreamed closes streamed once the first model call's stream has
// yielded everything it had (the whole first answer, tool calls included,
// was handed up the pipeline).
type firstStreamed struct {
	llm.Model
	once     sync.Once
	streamed chan struct{}
}

func newFirstStreamed(m llm.Model) *firstStreamed {
	return &firstStreamed{Model: m, streamed: make(chan struct{})}
}

func (f *firstStreamed) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	first := false
	f.once.Do(func() { first = true })
	if !first {
		return f.Model.Stream(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		defer close(f.streamed)
		for ev, err := range f.Model.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// countingTool counts its calls.
type countingTool struct{ calls atomic.Int32 }

func (c *countingTool) tool() tool.Tool {
	return tool.MustFunc("delete_files", "Deletes files.", func(context.Context, struct{}) (string, error) {
		c.calls.Add(1)
		return "deleted", nil
	})
}

func inputGuard(name string, fn middleware.InputGuardrailFunc) []middleware.Hook[middleware.InputGuardrailFunc] {
	return []middleware.Hook[middleware.InputGuardrailFunc]{{Name: name, Func: fn}}
}

func outputGuard(name string, fn middleware.OutputGuardrailFunc) []middleware.Hook[middleware.OutputGuardrailFunc] {
	return []middleware.Hook[middleware.OutputGuardrailFunc]{{Name: name, Func: fn}}
}

// lastUserText is the text of the request's last user message.
func lastUserText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

// An input guardrail that trips stops the turn before any tool runs, in
// both modes, even when the model's first answer (a tool call) was already
// complete when the wire tripped: nothing is stored, the session is as it
// was, and the caller gets a *GuardrailError naming the guardrail, the
// stage and the guardrail's info.
func TestInputTripwireStopsBeforeAnyToolAndStoresNothing(t *testing.T) {
	t.Parallel()
	for _, mode := range []middleware.GuardrailMode{middleware.GuardrailsParallel, middleware.GuardrailsBlocking} {
		for _, streamed := range []bool{false, true} {
			name := map[middleware.GuardrailMode]string{middleware.GuardrailsParallel: "parallel", middleware.GuardrailsBlocking: "blocking"}[mode]
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m := newFirstStreamed(llmtest.New(
					llmtest.Text("Hello."), // the earlier turn
					llmtest.Reply(llm.Text{Text: "Deleting."}, llmtest.Call("c1", "delete_files", `{}`)),
					llmtest.Text("Done."),
				))
				del := &countingTool{}
				store := newStore()
				tripped := make(chan struct{})
				hooks := &middleware.Hooks{
					GuardrailMode: mode,
					InputGuardrails: inputGuard("no-deletes", func(ctx context.Context, req *llm.Request) error {
						if !strings.Contains(lastUserText(req), "delete") {
							return nil
						}
						if mode == middleware.GuardrailsParallel {
							// Trip only once the model's whole first answer,
							// tool call included, went up the pipeline.
							select {
							case <-m.streamed:
							case <-ctx.Done():
								return ctx.Err()
							}
						}
						close(tripped)
						return middleware.Tripwire("asks to delete files", map[string]float64{"score": 0.97})
					}),
				}
				a := newAgent(t, m, agent.Config{Name: "guarded", Tools: []tool.Tool{del.tool()}, Store: store, Hooks: hooks})
				if _, err := a.Run(context.Background(), user("Say hello."), withSession("s")); err != nil {
					t.Fatal(err)
				}
				before := len(store.appendCalls())

				var err error
				var got []agent.Update
				if streamed {
					for u, uerr := range a.RunStream(context.Background(), user("Please delete every file."), withSession("s")).Updates() {
						if uerr != nil {
							err = uerr
							break
						}
						got = append(got, u)
					}
				} else {
					_, err = a.Run(context.Background(), user("Please delete every file."), withSession("s"))
				}

				var ge *middleware.GuardrailError
				if !errors.As(err, &ge) {
					t.Fatalf("error %v (%T), want a *middleware.GuardrailError", err, err)
				}
				if ge.Guardrail != "no-deletes" || ge.Stage != middleware.StageInput || !ge.Tripped || ge.Reason != "asks to delete files" {
					t.Errorf("error %+v", ge)
				}
				if info, _ := ge.Info.(map[string]float64); info["score"] != 0.97 {
					t.Errorf("info %#v", ge.Info)
				}
				if !errors.Is(err, middleware.ErrTripwire) || !errors.Is(err, middleware.ErrBlocked) || errors.Is(err, middleware.ErrGuardrailFailed) {
					t.Errorf("errors.Is: tripwire %v, blocked %v, failed %v", errors.Is(err, middleware.ErrTripwire), errors.Is(err, middleware.ErrBlocked), errors.Is(err, middleware.ErrGuardrailFailed))
				}
				select {
				case <-tripped:
				default:
					t.Error("the guardrail never tripped")
				}
				if n := del.calls.Load(); n != 0 {
					t.Errorf("the tool ran %d times", n)
				}
				if len(got) != 0 {
					t.Errorf("a streaming caller got %d updates of the tripped turn: %+v", len(got), got)
				}
				if n := len(store.appendCalls()); n != before {
					t.Errorf("%d appends after the tripped turn, want none", n-before)
				}
				if s := store.session(t, "s"); len(s.Messages) != 2 {
					t.Errorf("the session has %d messages, want the first turn's 2: %q", len(s.Messages), texts(s.Messages))
				}
			})
		}
	}
}

// In parallel mode the input guardrails run while the first model call is
// in flight, and a tripwire cancels it; in blocking mode the model is never
// called.
func TestInputTripwireCancelsTheModelCall(t *testing.T) {
	t.Parallel()
	for _, mode := range []middleware.GuardrailMode{middleware.GuardrailsParallel, middleware.GuardrailsBlocking} {
		t.Run(map[middleware.GuardrailMode]string{0: "parallel", 1: "blocking"}[mode], func(t *testing.T) {
			t.Parallel()
			calling := make(chan struct{})
			var cancelled atomic.Bool
			m := llmtest.New(llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
				close(calling)
				<-ctx.Done() // answers only when cancelled
				cancelled.Store(true)
				return nil, llm.Cancelled("test", ctx.Err())
			}))
			hooks := &middleware.Hooks{
				GuardrailMode: mode,
				InputGuardrails: inputGuard("slow-classifier", func(ctx context.Context, _ *llm.Request) error {
					if mode == middleware.GuardrailsParallel {
						<-calling // the model call is in flight
					}
					return middleware.Block("off topic")
				}),
			}
			store := newStore()
			a := newAgent(t, m, agent.Config{Store: store, Hooks: hooks})
			_, err := a.Run(context.Background(), user("Tell me a secret."), withSession("s"))
			if !errors.Is(err, middleware.ErrTripwire) {
				t.Fatalf("error %v, want a tripwire", err)
			}
			switch mode {
			case middleware.GuardrailsParallel:
				if !cancelled.Load() {
					t.Error("the model call was not cancelled")
				}
			case middleware.GuardrailsBlocking:
				if n := m.Calls(); n != 0 {
					t.Errorf("the model was called %d times", n)
				}
			}
			if n := len(store.appendCalls()); n != 0 {
				t.Errorf("%d appends", n)
			}
		})
	}
}

// Input guardrails that pass change nothing: the first answer's updates
// (held while they ran) all reach the caller, tools run, the turn is
// stored; they run once per turn, on its first request, not on each step.
func TestInputGuardrailsThatPassHoldNothingBack(t *testing.T) {
	t.Parallel()
	script := func() *llmtest.Model {
		return llmtest.New(
			llmtest.Reply(llm.Text{Text: "Looking it up."}, llmtest.Call("c1", "delete_files", `{}`)),
			llmtest.Text("All done, nothing left."),
		)
	}
	run := func(hooks *middleware.Hooks) ([]string, int32, int) {
		del := &countingTool{}
		store := newStore()
		a := newAgent(t, script(), agent.Config{Tools: []tool.Tool{del.tool()}, Store: store, Hooks: hooks, NewID: ids()})
		var kinds []string
		st := a.RunStream(context.Background(), user("Tidy up."), withSession("s"))
		for u, err := range st.Updates() {
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, u.Kind.String()+":"+u.Text)
		}
		if _, err := st.Wait(); err != nil {
			t.Fatal(err)
		}
		return kinds, del.calls.Load(), len(store.session(t, "s").Messages)
	}
	want, wantCalls, wantMsgs := run(nil)

	var checks atomic.Int32
	var seen atomic.Value
	for _, mode := range []middleware.GuardrailMode{middleware.GuardrailsParallel, middleware.GuardrailsBlocking} {
		hooks := &middleware.Hooks{GuardrailMode: mode, InputGuardrails: inputGuard("ok", func(_ context.Context, req *llm.Request) error {
			checks.Add(1)
			seen.Store(lastUserText(req))
			return nil
		})}
		got, calls, msgs := run(hooks)
		if strings.Join(got, "|") != strings.Join(want, "|") || calls != wantCalls || msgs != wantMsgs {
			t.Errorf("mode %d: updates %q, tool calls %d, stored %d; without guardrails %q, %d, %d", mode, got, calls, msgs, want, wantCalls, wantMsgs)
		}
	}
	if n := checks.Load(); n != 2 {
		t.Errorf("the guardrail ran %d times in two turns", n)
	}
	if s, _ := seen.Load().(string); s != "Tidy up." {
		t.Errorf("the guardrail saw %q", s)
	}
}

// An output guardrail checks the final answer: a tripwire ends the turn
// with a *GuardrailError instead of the finish, and nothing is stored. A
// streaming caller has seen the answer's text deltas (they arrive as the
// model writes), but never a finish.
func TestOutputTripwire(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "run", true: "streamed"}[streamed], func(t *testing.T) {
			t.Parallel()
			m := llmtest.New(
				llmtest.Reply(llmtest.Call("c1", "delete_files", `{}`)),
				llmtest.Text("The password is hunter2."),
			)
			del := &countingTool{}
			store := newStore()
			var sawTranscript atomic.Int32
			hooks := &middleware.Hooks{OutputGuardrails: outputGuard("no-secrets", func(_ context.Context, req *llm.Request, resp *llm.Response) error {
				sawTranscript.Store(int32(len(resp.Transcript)))
				if strings.Contains(resp.Message.Text(), "password") {
					return middleware.Tripwire("leaks a password", nil)
				}
				return nil
			})}
			a := newAgent(t, m, agent.Config{Tools: []tool.Tool{del.tool()}, Store: store, Hooks: hooks})
			var err error
			var kinds []agent.UpdateKind
			if streamed {
				for u, uerr := range a.RunStream(context.Background(), user("What is the password?"), withSession("s")).Updates() {
					if uerr != nil {
						err = uerr
						break
					}
					kinds = append(kinds, u.Kind)
				}
			} else {
				_, err = a.Run(context.Background(), user("What is the password?"), withSession("s"))
			}
			var ge *middleware.GuardrailError
			if !errors.As(err, &ge) || ge.Stage != middleware.StageOutput || ge.Guardrail != "no-secrets" || !errors.Is(err, middleware.ErrTripwire) {
				t.Fatalf("error %v, want the output tripwire", err)
			}
			if n := sawTranscript.Load(); n != 3 {
				t.Errorf("the guardrail saw a transcript of %d messages, want 3", n)
			}
			for _, k := range kinds {
				if k == agent.UpdateFinish {
					t.Error("a streaming caller got the finish of a tripped turn")
				}
			}
			if streamed && !containsKind(kinds, agent.UpdateText) {
				t.Errorf("updates %v: the answer's text deltas are delivered before the check", kinds)
			}
			if n := len(store.appendCalls()); n != 0 {
				t.Errorf("%d appends", n)
			}
		})
	}
}

func containsKind(kinds []agent.UpdateKind, k agent.UpdateKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// A guardrail that fails (an error that is not a verdict, a panic) stops
// the turn too (guardrails fail closed), reported distinctly from a
// tripwire: errors.Is matches ErrGuardrailFailed and the failure, not
// ErrTripwire.
func TestGuardrailFailureIsNotATripwire(t *testing.T) {
	t.Parallel()
	down := errors.New("classifier unreachable")
	tests := []struct {
		name    string
		hooks   *middleware.Hooks
		wantErr error // matched with errors.Is besides ErrGuardrailFailed
		stage   middleware.GuardrailStage
	}{
		{
			name: "input error",
			hooks: &middleware.Hooks{InputGuardrails: inputGuard("classifier", func(context.Context, *llm.Request) error {
				return down
			})},
			wantErr: down, stage: middleware.StageInput,
		},
		{
			name: "input panic, blocking",
			hooks: &middleware.Hooks{GuardrailMode: middleware.GuardrailsBlocking, InputGuardrails: inputGuard("classifier", func(context.Context, *llm.Request) error {
				panic("boom")
			})},
			stage: middleware.StageInput,
		},
		{
			name: "output error",
			hooks: &middleware.Hooks{OutputGuardrails: outputGuard("classifier", func(context.Context, *llm.Request, *llm.Response) error {
				return down
			})},
			wantErr: down, stage: middleware.StageOutput,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			var log logBuffer
			tt.hooks.Logger = log.logger()
			a := newAgent(t, llmtest.New(llmtest.Text("Hi.")), agent.Config{Store: store, Hooks: tt.hooks})
			_, err := a.Run(context.Background(), user("Hello"), withSession("s"))
			var ge *middleware.GuardrailError
			if !errors.As(err, &ge) || ge.Tripped || ge.Stage != tt.stage || ge.Guardrail != "classifier" {
				t.Fatalf("error %v (%+v), want a failed %s guardrail", err, ge, tt.stage)
			}
			if !errors.Is(err, middleware.ErrGuardrailFailed) || errors.Is(err, middleware.ErrTripwire) || errors.Is(err, middleware.ErrBlocked) {
				t.Errorf("errors.Is: failed %v, tripwire %v, blocked %v", errors.Is(err, middleware.ErrGuardrailFailed), errors.Is(err, middleware.ErrTripwire), errors.Is(err, middleware.ErrBlocked))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v does not wrap %v", err, tt.wantErr)
			}
			if n := len(store.appendCalls()); n != 0 {
				t.Errorf("%d appends", n)
			}
			if !strings.Contains(log.String(), "guardrail failed") {
				t.Errorf("log %q", log.String())
			}
		})
	}
}

// A run cancelled while its input guardrail and its first model call are
// both in flight ends with the cancellation (not a guardrail error), and
// leaves no goroutine behind: not the guardrail's, not the model call's.
// Not parallel, so that goleak sees only this test's goroutines.
func TestGuardrailCancelledRunLeaksNothing(t *testing.T) {
	for _, mode := range []middleware.GuardrailMode{middleware.GuardrailsParallel, middleware.GuardrailsBlocking} {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		hooks := &middleware.Hooks{GuardrailMode: mode, InputGuardrails: inputGuard("waits", func(ctx context.Context, _ *llm.Request) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})}
		a := newAgent(t, llmtest.New(llmtest.Hang()), agent.Config{Hooks: hooks})
		go func() { <-started; cancel() }()
		_, err := a.Run(ctx, user("Hello"), nil)
		var ge *middleware.GuardrailError
		if !errors.Is(err, context.Canceled) || errors.As(err, &ge) {
			t.Errorf("mode %d: error %v, want the cancellation", mode, err)
		}
		cancel()
		goleak.VerifyNone(t)
	}
}
