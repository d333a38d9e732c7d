package middleware

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

func kindErr(k llm.ErrorKind) error { return &llm.Error{Kind: k, Provider: "test", Message: "failed"} }

func noJitter(c *fakeClock) RetryConfig {
	return RetryConfig{Clock: c, Jitter: -1, BaseDelay: time.Second, MaxDelay: 8 * time.Second}
}

func TestRetryRetriesOnlyTransientErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err   error
		retry bool
	}{
		{kindErr(llm.KindRateLimited), true},
		{kindErr(llm.KindOverloaded), true},
		{kindErr(llm.KindServer), true},
		{kindErr(llm.KindNetwork), true},
		{kindErr(llm.KindIdleTimeout), true},
		{kindErr(llm.KindAuth), false},
		{kindErr(llm.KindInvalidRequest), false},
		{kindErr(llm.KindContextLength), false},
		{&BlockedError{Event: "PreRequest"}, false},
		{llm.Cancelled("test", context.Canceled), false},
		{context.DeadlineExceeded, false},
		{errors.New("some plain error"), false},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			name := fmt.Sprintf("%s retried=%v/%s", llm.KindOf(tt.err), tt.retry, modeName(stream))
			t.Run(name, func(t *testing.T) {
				steps := []llmtest.Step{llmtest.Fail(tt.err)}
				if tt.retry {
					steps = append(steps, llmtest.Text("ok"))
				}
				m := llmtest.New(steps...).Verify(t)
				clock := newFakeClock()
				r := runTurn(context.Background(), Retry(noJitter(clock))(m), user("x"), stream)
				if tt.retry {
					if r.err != nil || r.resp.Message.Text() != "ok" || len(clock.Sleeps()) != 1 {
						t.Errorf("resp %v err %v sleeps %v", r.resp, r.err, clock.Sleeps())
					}
					return
				}
				if !errors.Is(r.err, tt.err) || m.Calls() != 1 || len(clock.Sleeps()) != 0 {
					t.Errorf("err %v after %d calls; want the error unretried", r.err, m.Calls())
				}
			})
		}
	}
}

func TestRetryLimits(t *testing.T) {
	t.Parallel()
	rate := kindErr(llm.KindServer)
	fails := func(n int) []llmtest.Step {
		s := make([]llmtest.Step, n)
		for i := range s {
			s[i] = llmtest.Fail(rate)
		}
		return s
	}
	tests := []struct {
		name       string
		cfg        func(c *fakeClock) RetryConfig
		steps      []llmtest.Step
		wantCalls  int
		wantSleeps []time.Duration
		wantOK     bool
	}{
		{
			name:       "backoff doubles from the base delay up to the max delay",
			cfg:        func(c *fakeClock) RetryConfig { r := noJitter(c); r.MaxAttempts = 6; return r },
			steps:      fails(6),
			wantCalls:  6,
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second},
		},
		{
			name:       "the default is four attempts",
			cfg:        noJitter,
			steps:      fails(4),
			wantCalls:  4,
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:       "MaxAttempts 1 never retries",
			cfg:        func(c *fakeClock) RetryConfig { r := noJitter(c); r.MaxAttempts = 1; return r },
			steps:      fails(1),
			wantCalls:  1,
			wantSleeps: nil,
		},
		{
			name: "a retry past the max total delay is not made",
			cfg: func(c *fakeClock) RetryConfig {
				r := noJitter(c)
				r.MaxAttempts = 10
				r.MaxTotalDelay = 5 * time.Second
				return r
			},
			steps:      fails(3),
			wantCalls:  3,
			wantSleeps: []time.Duration{time.Second, 2 * time.Second}, // the next, 4s, would make 7s
		},
		{
			name: "Retry-After is honoured instead of the backoff",
			cfg:  noJitter,
			steps: []llmtest.Step{
				llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, RetryAfter: 7 * time.Second}),
				llmtest.Text("ok"),
			},
			wantCalls:  2,
			wantSleeps: []time.Duration{7 * time.Second},
			wantOK:     true,
		},
		{
			name: "a Retry-After past the max total delay gives up",
			cfg:  noJitter,
			steps: []llmtest.Step{
				llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, RetryAfter: time.Hour}),
			},
			wantCalls:  1,
			wantSleeps: nil,
		},
		{
			name: "jitter takes up to its fraction off the delay",
			cfg: func(c *fakeClock) RetryConfig {
				r := noJitter(c)
				r.Jitter, r.Rand = 0.5, func() float64 { return 0.5 }
				return r
			},
			steps:      []llmtest.Step{llmtest.Fail(rate), llmtest.Fail(rate), llmtest.Text("ok")},
			wantCalls:  3,
			wantSleeps: []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond},
			wantOK:     true,
		},
		{
			name: "ShouldRetry replaces the default decision",
			cfg: func(c *fakeClock) RetryConfig {
				r := noJitter(c)
				r.ShouldRetry = func(err error) bool { return errors.Is(err, llm.ErrAuth) }
				return r
			},
			steps:      []llmtest.Step{llmtest.Fail(kindErr(llm.KindAuth)), llmtest.Text("ok")},
			wantCalls:  2,
			wantSleeps: []time.Duration{time.Second},
			wantOK:     true,
		},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			t.Run(tt.name+"/"+modeName(stream), func(t *testing.T) {
				m := llmtest.New(tt.steps...).Verify(t)
				clock := newFakeClock()
				r := runTurn(context.Background(), Retry(tt.cfg(clock))(m), user("x"), stream)
				if (r.err == nil) != tt.wantOK || m.Calls() != tt.wantCalls || !reflect.DeepEqual(clock.Sleeps(), tt.wantSleeps) {
					t.Errorf("err %v, %d calls, sleeps %v; want ok=%v, %d calls, sleeps %v",
						r.err, m.Calls(), clock.Sleeps(), tt.wantOK, tt.wantCalls, tt.wantSleeps)
				}
				if !tt.wantOK && r.err != nil && llm.KindOf(r.err) == llm.KindUnknown {
					t.Errorf("the last error lost its kind: %v", r.err)
				}
			})
		}
	}
}

func TestStreamRetryOnlyBeforeContent(t *testing.T) {
	t.Parallel()
	net := kindErr(llm.KindNetwork)
	tests := []struct {
		name      string
		first     llmtest.Step
		wantCalls int
		wantOK    bool
	}{
		{"a failure before any event is retried", llmtest.Text("lost").FailAfter(0, net), 2, true},
		{"a failure after only the message start is retried", llmtest.Text("lost").FailAfter(1, net), 2, true},
		{"a failure after a content event is not retried", llmtest.Text("lost answer").FailAfter(3, net), 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := []llmtest.Step{tt.first}
			if tt.wantOK {
				steps = append(steps, llmtest.Text("fresh"))
			}
			m := llmtest.New(steps...).Verify(t)
			r := runTurn(context.Background(), Retry(noJitter(newFakeClock()))(m), user("x"), true)
			if (r.err == nil) != tt.wantOK || m.Calls() != tt.wantCalls {
				t.Fatalf("err %v after %d calls", r.err, m.Calls())
			}
			if !tt.wantOK {
				if !errors.Is(r.err, llm.ErrNetwork) {
					t.Errorf("err = %v", r.err)
				}
				return
			}
			// The caller saw one clean stream: it assembles without error.
			var asm llm.Assembler
			starts := 0
			for _, ev := range r.events {
				if ev.Type == llm.EventMessageStart {
					starts++
				}
				if err := asm.Add(ev); err != nil {
					t.Fatal(err)
				}
			}
			got, err := asm.Finish()
			if err != nil {
				t.Fatalf("assembling: %v (%d message starts)", err, starts) // got is nil
			}
			if got.Message.Text() != "fresh" || starts != 1 {
				t.Errorf("assembled %q from %d message starts", got.Message.Text(), starts)
			}
		})
	}
}

func TestRetryWaitStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	for _, stream := range modes() {
		t.Run(modeName(stream), func(t *testing.T) {
			m := llmtest.New(llmtest.Fail(kindErr(llm.KindOverloaded))).Verify(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := time.Now()
			cfg := RetryConfig{BaseDelay: time.Hour, MaxTotalDelay: 2 * time.Hour,
				OnRetry: func(context.Context, int, time.Duration, error) {
					go func() { time.Sleep(5 * time.Millisecond); cancel() }() // during the real hour-long wait
				}}
			r := runTurn(ctx, Retry(cfg)(m), user("x"), stream)
			if !errors.Is(r.err, llm.ErrCancelled) || !errors.Is(r.err, context.Canceled) {
				t.Errorf("err = %v", r.err)
			}
			if time.Since(start) > time.Second || m.Calls() != 1 {
				t.Errorf("took %v and %d calls", time.Since(start), m.Calls())
			}
		})
	}
}

func TestOnRetryIsToldAboutEachRetry(t *testing.T) {
	t.Parallel()
	var got []string
	cfg := noJitter(newFakeClock())
	cfg.OnRetry = func(_ context.Context, attempt int, d time.Duration, err error) {
		got = append(got, fmt.Sprintf("%d:%s:%s", attempt, d, llm.KindOf(err)))
	}
	m := llmtest.New(llmtest.Fail(kindErr(llm.KindServer)), llmtest.Fail(kindErr(llm.KindNetwork)), llmtest.Text("ok")).Verify(t)
	if _, err := Retry(cfg)(m).Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"1:1s:server", "2:2s:network"}; !reflect.DeepEqual(got, want) {
		t.Errorf("OnRetry saw %v, want %v", got, want)
	}
}
