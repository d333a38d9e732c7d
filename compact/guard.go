package compact

import (
	"context"
	"iter"

	"github.com/agcore/agcore/llm"
)

// Guard returns a model middleware that applies p ([Policy.Fit]) to every
// request it passes on, with the wrapped model's Info (or p.Info). Its type
// is assignable to middleware.Middleware. A request within the budget goes
// on unchanged (the same pointer); a request over it goes on as a
// compressed copy; a request that cannot fit the context window is not
// sent, and the call fails with a KindContextLength *llm.Error. In a stream,
// that error is the only item.
//
// The agent ([agent.New]) puts it in place itself. Composing by hand, put
// it inside the tool loop and outside retries:
//
//	model := middleware.Chain(adapter,
//		middleware.FunctionInvocation(loop), // each step is a model call...
//		compact.Guard(policy),               // ...checked here
//		hooks.Middleware(),
//		middleware.Retry(retry),             // retries resend the compressed request
//	)
//
// so that each step of a turn is checked (a tool-heavy turn grows by an
// assistant message and its tool results at every step) and a retried call
// is not compressed again. What the tool loop records, and the agent
// persists, is the full transcript: only what is sent shrinks.
//
// The default strategy ([Incremental]) keeps what it remembers in the
// [State] a request's context carries (the agent gives each run one), or
// else per conversation (told apart by the messages up to the first user
// message), and extends a previous result only when its next input starts
// with exactly the previous input, so one guard serves any number of
// conversations, concurrently.
func Guard(p *Policy) func(llm.Model) llm.Model {
	if p == nil {
		p = &Policy{}
	}
	return func(next llm.Model) llm.Model { return &guard{p: p, next: next} }
}

type guard struct {
	p    *Policy
	next llm.Model
}

// Info returns the wrapped model's Info.
func (g *guard) Info() llm.ModelInfo { return g.next.Info() }

// Generate sends req, compressed when it is over the budget.
func (g *guard) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(g.wrap(ctx, req, llm.Next{Model: g.next, Blocking: true}))
}

// Stream sends req, compressed when it is over the budget. Compression
// happens when ranging starts; its error is the stream's only item.
func (g *guard) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return g.wrap(ctx, req, llm.Next{Model: g.next})
}

// wrap is the guard, for both calls: req compressed, then passed on.
func (g *guard) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r, err := g.p.Fit(ctx, req, g.next.Info())
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range next.Stream(ctx, r) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
