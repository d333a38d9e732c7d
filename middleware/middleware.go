package middleware

import (
	"context"
	"time"

	"github.com/agcore/agcore/llm"
)

// Middleware decorates a model. It must return a model whose methods are
// safe for concurrent use if next's are.
type Middleware func(next llm.Model) llm.Model

// Chain wraps m in mws so that mws[0] is the outermost: a call goes through
// mws[0], then mws[1], ..., then m. Nil middlewares are skipped.
func Chain(m llm.Model, mws ...Middleware) llm.Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}

// Clock is the source of time for backoff, timeouts and durations. The
// default is [SystemClock]; tests inject a fake one, and a durable
// orchestrator a replayable one.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func clockOr(c Clock) Clock {
	if c == nil {
		return SystemClock
	}
	return c
}
