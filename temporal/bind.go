package agtemporal

// The agent's seams bound to workflow primitives. agent.New's agent runs
// inside the workflow unchanged; everything in it that would start a
// goroutine, read the clock or make a random id goes through one of these
// seams, and each is bound here to what the workflow may use instead.

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"
)

// wfKey carries, in a context.Context the agent passes down, the
// workflow.Context of the coroutine the code runs on: an activity started
// from a coroutine must be started and awaited with that coroutine's
// context.
type wfKey struct{}

// bind returns ctx carrying w.
func bind(ctx context.Context, w workflow.Context) context.Context {
	return context.WithValue(ctx, wfKey{}, w)
}

// wf returns the workflow.Context ctx carries. Code of the agent that
// reaches a proxy always carries one (the driver binds the run's context,
// and wfRunner each coroutine's); a context without one is a bug of the
// binding, not of the caller.
func wf(ctx context.Context) workflow.Context {
	w, ok := ctx.Value(wfKey{}).(workflow.Context)
	if !ok {
		panic("agtemporal: a workflow seam was called with a context that carries no workflow context")
	}
	return w
}

// wfClock is the agent's clock (agent.Config.Clock) in a workflow: the
// workflow's time, which replays identically, and its durable timers.
type wfClock struct{ root workflow.Context }

func (c wfClock) Now() time.Time { return workflow.Now(c.root) }

func (c wfClock) Sleep(ctx context.Context, d time.Duration) error {
	return workflow.Sleep(wf(ctx), d)
}

// wfRunner runs a batch of tool calls (agent.Config.Runner) as workflow
// coroutines, at most limit at once; each call's context carries its own
// coroutine's workflow.Context. Only one coroutine runs at a time, so the
// shared index needs no lock.
type wfRunner struct{}

func (wfRunner) Run(ctx context.Context, n, limit int, do func(ctx context.Context, i int)) {
	if n == 1 || limit <= 1 {
		for i := range n {
			do(ctx, i)
		}
		return
	}
	w := wf(ctx)
	next := 0
	wg := workflow.NewWaitGroup(w)
	for range min(limit, n) {
		wg.Add(1)
		workflow.Go(w, func(c workflow.Context) {
			defer wg.Done()
			cc := bind(ctx, c)
			for next < n {
				i := next
				next++
				do(cc, i)
			}
		})
	}
	wg.Wait(w)
}

// wfIDs makes the run ids of a turn's runs (agent.Config.NewID): the
// turn's id for the first run, then the turn's id and a count. The runs
// start in the same order on every replay, so the ids replay too.
type wfIDs struct {
	turn string
	n    int
}

func (g *wfIDs) next() string {
	g.n++
	if g.n == 1 {
		return g.turn
	}
	return fmt.Sprintf("%s-%d", g.turn, g.n)
}
