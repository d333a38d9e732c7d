package cli

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"time"

	"github.com/agcore/agcore/llm"
)

// errNoResponse is the cause of a model call that the server left silent
// for the whole idle budget.
var errNoResponse = errors.New("no response")

// quietGuard counts a model's silence against one idle budget shared by the
// attempts of a call: a dead server is reported once it has been silent
// for the idle timeout in all, not once per retry. Any event from the
// server refills the budget; the time the caller spends with an event (a
// tool running) is not silence. It wraps the provider adapter, below the
// retry middleware, so each attempt is one Stream call here.
type quietGuard struct {
	next llm.Model
	idle time.Duration
	url  string // where requests go, for the message

	mu   sync.Mutex
	left time.Duration
}

func newQuietGuard(next llm.Model, idle time.Duration, url string) *quietGuard {
	return &quietGuard{next: next, idle: idle, url: url, left: idle}
}

// Info implements llm.Model.
func (q *quietGuard) Info() llm.ModelInfo { return q.next.Info() }

// reset refills the budget: a new turn starts with all of it.
func (q *quietGuard) reset() {
	q.mu.Lock()
	q.left = q.idle
	q.mu.Unlock()
}

func (q *quietGuard) budget() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.left
}

// spend takes d of silence off the budget.
func (q *quietGuard) spend(d time.Duration) {
	q.mu.Lock()
	q.left = max(q.left-d, 0)
	q.mu.Unlock()
}

// noResponse is the error of a call whose budget ran out.
func (q *quietGuard) noResponse(err error) error {
	q.mu.Lock()
	q.left = 0
	q.mu.Unlock()
	provider := ""
	var le *llm.Error
	if errors.As(err, &le) {
		provider = le.Provider
	}
	return &llm.Error{
		Kind:     llm.KindIdleTimeout,
		Provider: provider,
		Message:  fmt.Sprintf("no response from %s in %s s", q.url, strconv.FormatFloat(q.idle.Seconds(), 'f', -1, 64)),
		Err:      errNoResponse,
	}
}

// silent reports whether a failed call ended for lack of data: the guard's
// own timer, or the adapter's idle timeout (which can only fire after at
// least as much silence as the budget holds).
func silent(ctx context.Context, err error) bool {
	return errors.Is(context.Cause(ctx), errNoResponse) || llm.KindOf(err) == llm.KindIdleTimeout
}

// Generate implements llm.Model: the whole wait is silence.
func (q *quietGuard) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(q.budget(), func() { cancel(errNoResponse) })
	start := time.Now()
	resp, err := q.next.Generate(ctx, req)
	timer.Stop()
	switch {
	case err == nil:
		q.reset()
		return resp, nil
	case silent(ctx, err):
		return nil, q.noResponse(err)
	}
	q.spend(time.Since(start))
	return nil, err
}

// Stream implements llm.Model.
func (q *quietGuard) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		timer := time.AfterFunc(q.budget(), func() { cancel(errNoResponse) })
		defer timer.Stop()
		start := time.Now()
		for ev, err := range q.next.Stream(ctx, req) {
			if err != nil {
				timer.Stop()
				if silent(ctx, err) {
					err = q.noResponse(err)
				} else {
					q.spend(time.Since(start))
				}
				yield(llm.Event{}, err)
				return
			}
			if !timer.Stop() { // the budget ran out as the event came
				yield(llm.Event{}, q.noResponse(err))
				return
			}
			q.reset()
			if !yield(ev, nil) {
				return
			}
			timer.Reset(q.idle)
			start = time.Now()
		}
	}
}
