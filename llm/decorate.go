package llm

import (
	"context"
	"iter"
)

// Next is the model a decorator passes a call on to. Blocking reports
// whether the caller asked for a blocking call (Generate): Stream then
// makes a blocking call below and yields its answer as one EventComplete
// (or its error), so a decorator written once as a stream never turns a
// blocking call into a streaming one under it, and a blocking call costs
// no events nobody watches. A decorator reads the answer from the
// EventComplete either way; one whose behaviour differs between the two
// calls (what it logs; whether a verdict reached after the answer can
// still refuse it) reads Blocking.
type Next struct {
	Model    Model
	Blocking bool
}

// Stream passes req on: n.Model.Stream, or, when the call is blocking,
// n.Model.Generate's answer as the stream's one EventComplete.
func (n Next) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	if !n.Blocking {
		return n.Model.Stream(ctx, req)
	}
	return func(yield func(Event, error) bool) {
		resp, err := n.Model.Generate(ctx, req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		yield(Event{Type: EventComplete, Response: resp}, nil)
	}
}

// Wrap is a model decorator written once: given a call and the model
// below, the stream it yields. It serves both of [Model]'s calls:
// [Wrap.Stream] gives it the streaming call below, [Wrap.Generate] the
// blocking one (Next.Blocking) and returns the Response of the
// EventComplete it yields ([Collect]). A decorator type on the hot path
// calls its wrap method directly, as Wrap's methods do
// (x.wrap(ctx, req, llm.Next{Model: x.next})), which costs no closure.
type Wrap func(ctx context.Context, req *Request, next Next) iter.Seq2[Event, error]

// Stream runs the streaming call through w.
func (w Wrap) Stream(ctx context.Context, req *Request, next Model) iter.Seq2[Event, error] {
	return w(ctx, req, Next{Model: next})
}

// Generate runs the blocking call through w.
func (w Wrap) Generate(ctx context.Context, req *Request, next Model) (*Response, error) {
	return Collect(w(ctx, req, Next{Model: next, Blocking: true}))
}

// Decorate returns the model that sends both calls through w to next,
// and describes itself as next does (Info).
func Decorate(next Model, w Wrap) Model { return &decorated{next: next, w: w} }

type decorated struct {
	next Model
	w    Wrap
}

func (d *decorated) Info() ModelInfo { return d.next.Info() }

func (d *decorated) Generate(ctx context.Context, req *Request) (*Response, error) {
	return d.w.Generate(ctx, req, d.next)
}

func (d *decorated) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return d.w.Stream(ctx, req, d.next)
}
