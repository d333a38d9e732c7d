package middleware

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/agcore/agcore/llm"
)

// Guardrail functions: the two guardrail events of [Hooks]. Each returns
// nil to let the turn go on, or [Block] or [Tripwire] to trip the wire:
// the turn stops with a *[GuardrailError] and nothing of it is stored. Any
// other error, a panic or a timeout is the guardrail failing, and unlike
// the other hooks a guardrail fails closed: the turn stops too, with a
// *GuardrailError that says the guardrail failed (not a tripwire). A
// guardrail must not change what it is given.
type (
	// InputGuardrailFunc checks a turn's input: req is the turn's first
	// model request as the tool loop sends it (instructions, history,
	// the caller's new messages last), before the budget policy.
	InputGuardrailFunc func(ctx context.Context, req *llm.Request) error
	// OutputGuardrailFunc checks a turn's final answer: req is the turn's
	// first model request, resp the tool loop's final response (its
	// Message is the answer; its Transcript every assistant message and
	// tool result of the turn).
	OutputGuardrailFunc func(ctx context.Context, req *llm.Request, resp *llm.Response) error
)

// GuardrailMode says when a turn's input guardrails run.
type GuardrailMode uint8

const (
	// GuardrailsParallel, the zero value, runs the input guardrails
	// alongside the turn's first model call: the call's output is held
	// back until every input guardrail has passed, and a tripwire cancels
	// the call. The first answer costs no extra latency; a tripped turn
	// pays for the part of a model call it cancelled.
	GuardrailsParallel GuardrailMode = iota
	// GuardrailsBlocking runs the input guardrails before the first model
	// call: a tripped turn never calls the model.
	GuardrailsBlocking
)

// GuardrailStage says which guardrails a *GuardrailError comes from.
type GuardrailStage string

// The guardrail stages.
const (
	StageInput  GuardrailStage = "input"
	StageOutput GuardrailStage = "output"
)

// ErrTripwire matches, in errors.Is, every *[GuardrailError] whose
// guardrail tripped the wire (returned [Block] or [Tripwire]). A failed
// guardrail's error does not match it.
var ErrTripwire = errors.New("middleware: guardrail tripwire triggered")

// ErrGuardrailFailed matches, in errors.Is, every *[GuardrailError] whose
// guardrail failed (an error other than a verdict, a panic, a timeout).
var ErrGuardrailFailed = errors.New("middleware: guardrail failed")

// GuardrailError stops a turn: a guardrail tripped the wire, or failed.
// It is not retryable. errors.Is matches [ErrTripwire] (and [ErrBlocked])
// for a tripwire, [ErrGuardrailFailed] for a failure; Unwrap returns the
// failure.
type GuardrailError struct {
	Guardrail string         // the guardrail's name
	Stage     GuardrailStage // StageInput or StageOutput
	Tripped   bool           // the wire tripped; false: the guardrail failed (Err)
	Reason    string         // the tripwire's reason
	Info      any            // what the guardrail gave [Tripwire] (nil for [Block])
	Err       error          // the failure, when not Tripped
}

// Error names the stage, the guardrail and the reason or failure.
func (e *GuardrailError) Error() string {
	if e.Tripped {
		return fmt.Sprintf("%s guardrail %q tripped: %s", e.Stage, e.Guardrail, e.Reason)
	}
	return fmt.Sprintf("%s guardrail %q failed: %v", e.Stage, e.Guardrail, e.Err)
}

// Is reports whether target is ErrTripwire or ErrBlocked (a tripwire), or
// ErrGuardrailFailed (a failure).
func (e *GuardrailError) Is(target error) bool {
	if e.Tripped {
		return target == ErrTripwire || target == ErrBlocked
	}
	return target == ErrGuardrailFailed
}

// Unwrap returns the guardrail's failure (nil for a tripwire).
func (e *GuardrailError) Unwrap() error { return e.Err }

// Tripwire returns the error a guardrail returns to trip the wire with
// info, which the *[GuardrailError] carries to the caller (what the check
// found: a classifier's score, the matched rule). Block(reason) is
// Tripwire(reason, nil).
func Tripwire(reason string, info any) error {
	return &hookVerdict{reason: reason, info: info}
}

// inline reports whether the input guardrails run before the first model
// call, on the caller's goroutine: GuardrailsBlocking, or hooks without a
// timeout (Timeout < 0), which start no goroutine.
func (h *Hooks) inline() bool { return h.GuardrailMode == GuardrailsBlocking || h.Timeout < 0 }

// hasInputGuardrails reports whether h has input guardrails (a nil h has
// none).
func (h *Hooks) hasInputGuardrails() bool { return h != nil && len(h.InputGuardrails) > 0 }

// HasOutputGuardrails reports whether h has output guardrails (a nil h has
// none).
func (h *Hooks) HasOutputGuardrails() bool { return h != nil && len(h.OutputGuardrails) > 0 }

// runInputGuardrails runs the input guardrails on req, in order, each
// within the hook Timeout; it returns the first *GuardrailError, or nil
// when all passed. When ctx ends first it returns ctx's error.
func (h *Hooks) runInputGuardrails(ctx context.Context, req *llm.Request) error {
	for _, g := range h.InputGuardrails {
		if err := h.guard(ctx, StageInput, g.Name, func(ctx context.Context) error { return g.Func(ctx, req) }); err != nil {
			return err
		}
	}
	return nil
}

// RunOutputGuardrails runs the output guardrails on a turn's final
// response, in order, each within the hook Timeout; it returns the first
// *GuardrailError, or nil when all passed. When ctx ends first it returns
// ctx's error.
func (h *Hooks) RunOutputGuardrails(ctx context.Context, req *llm.Request, resp *llm.Response) error {
	for _, g := range h.OutputGuardrails {
		if err := h.guard(ctx, StageOutput, g.Name, func(ctx context.Context) error { return g.Func(ctx, req, resp) }); err != nil {
			return err
		}
	}
	return nil
}

// guard runs one guardrail and turns its outcome into the error that
// stops the turn.
func (h *Hooks) guard(ctx context.Context, stage GuardrailStage, name string, fn func(context.Context) error) error {
	err := h.call(ctx, fn)
	if err == nil {
		return nil
	}
	var v *hookVerdict
	if errors.As(err, &v) { // Block, Tripwire (or Deny)
		return &GuardrailError{Guardrail: name, Stage: stage, Tripped: true, Reason: v.reason, Info: v.info}
	}
	if cerr := ctx.Err(); cerr != nil { // the turn ended: not the guardrail's failure
		return cerr
	}
	h.logger().WarnContext(ctx, "guardrail failed; the turn stops", "stage", string(stage), "guardrail", name, "error", err.Error())
	return &GuardrailError{Guardrail: name, Stage: stage, Err: err}
}

// InputGate returns the model middleware that runs the input guardrails
// on the first model call it sees, as [Hooks.GuardrailMode] says: before
// the call, or alongside it with the call's output held back until every
// guardrail has passed (a tripwire cancels the call). Later calls pass
// through. The first call fails with the *GuardrailError of a guardrail
// that tripped or failed.
//
// A gate is for one turn: make one per turn and put it right under the
// tool loop, so that the first answer's tool calls reach the loop only
// after the guardrails passed. agent.New's agents and conversation.Cycle
// do this themselves.
// Without input guardrails the middleware returns the model unchanged.
func (h *Hooks) InputGate() Middleware {
	return func(next llm.Model) llm.Model {
		if !h.hasInputGuardrails() {
			return next
		}
		return &gate{next: next, h: h}
	}
}

type gate struct {
	next llm.Model
	h    *Hooks
	used atomic.Bool // the first call went through
}

func (g *gate) Info() llm.ModelInfo { return g.next.Info() }

// start runs the input guardrails on req beside the model call: the
// returned channel gets their verdict, and a verdict other than nil
// cancels the call's context, mctx. stop cancels and waits for them.
func (g *gate) start(ctx context.Context, req *llm.Request) (mctx context.Context, verdict <-chan error, stop func()) {
	mctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := g.h.runInputGuardrails(mctx, req)
		if err != nil {
			cancel() // a tripwire: the model call stops now
		}
		ch <- err
	}()
	return mctx, ch, func() { cancel(); <-done }
}

// outcome is the first call's error once the guardrails' verdict v is
// known: a guardrail's error wins over the model's (a cancelled call is
// the tripwire's doing), the model's wins over a cancellation.
func outcome(v, modelErr error) error {
	var ge *GuardrailError
	if errors.As(v, &ge) || modelErr == nil {
		return v
	}
	return modelErr
}

func (g *gate) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(g.wrap(ctx, req, llm.Next{Model: g.next, Blocking: true}))
}

func (g *gate) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return g.wrap(ctx, req, llm.Next{Model: g.next})
}

// wrap is the gate, for both calls (the first only; later ones pass
// straight on): inline guardrails before the call; parallel ones beside
// it, its output held until their verdict.
func (g *gate) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	if g.used.Swap(true) {
		return next.Stream(ctx, req)
	}
	if g.h.inline() {
		return func(yield func(llm.Event, error) bool) {
			if err := g.h.runInputGuardrails(ctx, req); err != nil {
				yield(llm.Event{}, err)
				return
			}
			for ev, err := range next.Stream(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
		}
	}
	return func(yield func(llm.Event, error) bool) {
		mctx, verdict, stop := g.start(ctx, req)
		defer stop()
		type item struct {
			ev  llm.Event
			err error
		}
		var held []item // the call's output while the guardrails run
		passed := false
		flush := func() bool {
			passed = true
			for _, it := range held {
				if !yield(it.ev, it.err) {
					return false
				}
			}
			held = nil
			return true
		}
		var modelErr error
		for ev, err := range next.Stream(mctx, req) {
			if err != nil {
				modelErr = err
			}
			if passed {
				if !yield(ev, err) {
					return
				}
				continue
			}
			held = append(held, item{ev, err})
			select {
			case v := <-verdict:
				if v != nil {
					yield(llm.Event{}, outcome(v, modelErr))
					return
				}
				if !flush() {
					return
				}
			default:
			}
		}
		if passed {
			return
		}
		if v := <-verdict; v != nil {
			yield(llm.Event{}, outcome(v, modelErr))
			return
		}
		flush()
	}
}
