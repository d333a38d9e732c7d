package cli

import (
	"context"
	"errors"
	"iter"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agcore/agcore/llm"
)

// scripted is a model whose attempts follow a script: attempt i is silent
// for silences[i] (forever when negative), then sends one text event when
// events[i], and then fails with a network error.
type scripted struct {
	silences []time.Duration
	events   []bool
	calls    int
}

func (m *scripted) Info() llm.ModelInfo { return llm.ModelInfo{} }

func (m *scripted) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("not used")
}

func (m *scripted) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	i := m.calls
	m.calls++
	return func(yield func(llm.Event, error) bool) {
		wait := func(d time.Duration) bool {
			if d < 0 {
				<-ctx.Done()
				return false
			}
			select {
			case <-ctx.Done():
				return false
			case <-time.After(d):
				return true
			}
		}
		if !wait(m.silences[i]) {
			yield(llm.Event{}, llm.Cancelled("test", ctx.Err()))
			return
		}
		if m.events[i] {
			if !yield(llm.Event{Type: llm.EventTextDelta, Delta: "x"}, nil) {
				return
			}
			if !wait(-1) {
				yield(llm.Event{}, llm.Cancelled("test", ctx.Err()))
				return
			}
		}
		yield(llm.Event{}, &llm.Error{Kind: llm.KindNetwork, Provider: "test", Message: "connection reset"})
	}
}

// drain runs one attempt and returns its error and how long it took.
func drain(q *quietGuard) (error, time.Duration) {
	start := time.Now()
	var err error
	for _, e := range q.Stream(context.Background(), &llm.Request{}) {
		if e != nil {
			err = e
		}
	}
	return err, time.Since(start)
}

func TestQuietGuardCountsSilenceAcrossAttempts(t *testing.T) {
	const idle = 2 * time.Second
	t.Run("a silent server is reported after the idle timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQuietGuard(&scripted{silences: []time.Duration{-1}, events: []bool{false}}, idle, "http://x/v1")
			err, took := drain(q)
			if !errors.Is(err, errNoResponse) || llm.KindOf(err) != llm.KindIdleTimeout || took != idle {
				t.Errorf("err %v after %s", err, took)
			}
			if want := "no response from http://x/v1 in 2 s"; err.(*llm.Error).Message != want {
				t.Errorf("message %q, want %q", err.(*llm.Error).Message, want)
			}
			if shouldRetry(err) {
				t.Error("the exhausted budget would be retried")
			}
		})
	})
	t.Run("a retry gets only what is left", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQuietGuard(&scripted{silences: []time.Duration{1500 * time.Millisecond, -1}, events: []bool{false, false}}, idle, "u")
			err, took := drain(q)
			if llm.KindOf(err) != llm.KindNetwork || took != 1500*time.Millisecond || !shouldRetry(err) {
				t.Fatalf("first attempt: %v after %s", err, took)
			}
			err, took = drain(q)
			if !errors.Is(err, errNoResponse) || took != 500*time.Millisecond {
				t.Errorf("second attempt: %v after %s, want no response after 500ms", err, took)
			}
		})
	})
	t.Run("an event refills the budget, and so does a new turn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := &scripted{silences: []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond}, events: []bool{true, false, false}}
			q := newQuietGuard(m, idle, "u")
			if err, took := drain(q); !errors.Is(err, errNoResponse) || took != 1500*time.Millisecond+idle {
				t.Errorf("after an event: %v after %s", err, took)
			}
			q.reset()
			if err, took := drain(q); llm.KindOf(err) != llm.KindNetwork || took != 1500*time.Millisecond {
				t.Errorf("after reset: %v after %s", err, took)
			}
		})
	})
}
