package middleware

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/llm"
)

// Retry defaults, used for zero RetryConfig fields.
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxTotalDelay = 2 * time.Minute
	DefaultJitter        = 0.2
)

// RetryConfig configures [Retry]. The zero value retries with the defaults
// above.
type RetryConfig struct {
	// MaxAttempts is the most calls made, the first included; 0 means
	// DefaultMaxAttempts, 1 means no retry (for example when a durable
	// orchestrator retries model calls itself).
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles for each
	// following one, up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxTotalDelay caps the sum of the waits of one call: a retry that
	// would go past it is not made and the last error is returned.
	MaxTotalDelay time.Duration
	// Jitter is the fraction of each backoff delay taken off at random, to
	// spread clients out: 0.2 waits between 80% and 100% of the delay, 1 is
	// "full jitter". 0 means DefaultJitter; negative means none.
	Jitter float64
	// ShouldRetry decides whether an error is worth another attempt; nil
	// means [ShouldRetry].
	ShouldRetry func(error) bool
	// OnRetry, if set, is told about each retry before its wait.
	OnRetry func(ctx context.Context, attempt int, delay time.Duration, err error)
	// Clock sleeps between attempts; nil means clock.System.
	Clock clock.Clock
	// Rand returns a number in [0, 1) for the jitter; nil means math/rand/v2.
	Rand func() float64
}

// ShouldRetry reports whether a failed model call may succeed if sent again:
// rate limits, overload, server errors, network errors, idle timeouts and
// malformed answers are retried (see llm.ErrorKind.Retryable); auth,
// invalid-request, context-length, blocked and cancelled errors never are.
func ShouldRetry(err error) bool {
	return err != nil && llm.IsRetryable(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// Retry returns middleware that re-sends a failed model call (see
// RetryConfig). The wait before retry n is BaseDelay·2^(n-1), capped at
// MaxDelay and jittered; when the error carries a Retry-After
// (llm.RetryAfterOf) that wait is used instead. The returned error is the
// last attempt's, unchanged.
//
// A stream is retried only while nothing but its message-start and usage
// events has arrived: those are held back until the first content event, so
// the caller sees either one clean stream or an error, never the start of a
// failed stream followed by a retry. A failure after content has reached the
// caller ends the stream with that error.
//
// Retry belongs inside the tool loop, around each model call: wrapped
// around [FunctionInvocation] it would run the turn's tools again on every
// attempt, so Retry panics when next is a tool loop.
func Retry(cfg RetryConfig) Middleware {
	return func(next llm.Model) llm.Model {
		if _, loop := next.(interface{ runsTools() }); loop {
			panic("middleware: Retry wraps a tool loop, which would run its tools again on each attempt; put Retry inside FunctionInvocation")
		}
		if cfg.MaxAttempts == 1 {
			return next
		}
		return &retry{next: next, cfg: cfg, clock: clock.Or(cfg.Clock)}
	}
}

type retry struct {
	next  llm.Model
	cfg   RetryConfig
	clock clock.Clock
}

func (r *retry) Info() llm.ModelInfo { return r.next.Info() }

// delay returns the wait before retry number attempt (1 for the first
// retry) with no Retry-After and no jitter.
func (c RetryConfig) delay(attempt int) time.Duration {
	base, maxD := c.BaseDelay, c.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxD <= 0 {
		maxD = DefaultMaxDelay
	}
	d := base
	for i := 1; i < attempt && d < maxD; i++ {
		d *= 2
	}
	return min(d, maxD)
}

// wait returns the wait before retry attempt after err, and whether the
// retry may be made within the limits.
func (r *retry) wait(attempt int, total time.Duration, err error) (time.Duration, bool) {
	should := r.cfg.ShouldRetry
	if should == nil {
		should = ShouldRetry
	}
	maxAttempts := r.cfg.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if attempt >= maxAttempts || !should(err) {
		return 0, false
	}
	d := llm.RetryAfterOf(err)
	if d <= 0 {
		d = r.cfg.delay(attempt)
		j := r.cfg.Jitter
		if j == 0 {
			j = DefaultJitter
		}
		if j > 0 {
			rnd := rand.Float64
			if r.cfg.Rand != nil {
				rnd = r.cfg.Rand
			}
			d -= time.Duration(float64(d) * min(j, 1) * rnd())
		}
	}
	maxTotal := r.cfg.MaxTotalDelay
	if maxTotal <= 0 {
		maxTotal = DefaultMaxTotalDelay
	}
	if total+d > maxTotal {
		return 0, false
	}
	return d, true
}

// sleep waits d before retry attempt; it returns a cancelled error if ctx
// ends first.
func (r *retry) sleep(ctx context.Context, attempt int, d time.Duration, err error) error {
	if r.cfg.OnRetry != nil {
		r.cfg.OnRetry(ctx, attempt, d, err)
	}
	if serr := r.clock.Sleep(ctx, d); serr != nil {
		return llm.Cancelled("", serr)
	}
	return nil
}

func (r *retry) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(r.wrap(ctx, req, llm.Next{Model: r.next, Blocking: true}))
}

func (r *retry) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return r.wrap(ctx, req, llm.Next{Model: r.next})
}

// wrap is the retry loop, for both calls: an attempt whose content has
// not begun (nothing but its start and usage arrived) is retried; once
// content was delivered, an error is final.
func (r *retry) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		var total time.Duration
		for attempt := 1; ; attempt++ {
			var held []llm.Event
			committed := false
			var failed error
			for ev, err := range next.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !committed {
					if ev.Type == llm.EventMessageStart || ev.Type == llm.EventUsage {
						held = append(held, ev)
						continue
					}
					committed = true
					for _, h := range held {
						if !yield(h, nil) {
							return
						}
					}
					held = nil
				}
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				for _, h := range held { // a stream with no content at all
					if !yield(h, nil) {
						return
					}
				}
				return
			}
			d, ok := r.wait(attempt, total, failed)
			if committed || !ok || ctx.Err() != nil {
				yield(llm.Event{}, failed)
				return
			}
			if serr := r.sleep(ctx, attempt, d, failed); serr != nil {
				yield(llm.Event{}, serr)
				return
			}
			total += d
		}
	}
}
