// Package clock is the source of time agcore reads and sleeps through:
// backoff between retries, durations in logs and telemetry, the time
// stamped on stored turns. The default is [System]; tests inject a fake
// clock and a durable orchestrator a replayable one (agent.Config.Clock,
// middleware.RetryConfig.Clock, middleware.LogConfig.Clock,
// otelagent.Config.Clock).
//
// This package imports only the standard library; it must never import
// another agcore package.
package clock

import (
	"context"
	"time"
)

// Clock is a source of time.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// System is the real clock.
var System Clock = system{}

// Or returns c, or System when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return System
	}
	return c
}

type system struct{}

func (system) Now() time.Time { return time.Now() }

func (system) Sleep(ctx context.Context, d time.Duration) error {
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
