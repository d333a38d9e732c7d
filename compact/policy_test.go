package compact_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// The circuit breaker: after MaxFailures failures in a row the strategy is
// not called; a success in between resets the count.
func TestPolicyCircuitBreaker(t *testing.T) {
	t.Parallel()
	long := toolSession(12, 200)
	budget := compact.Estimator{}.CountMessages(long) / 3
	ctx := context.Background()
	// fail decides, call by call, whether the strategy fails.
	run := func(p *compact.Policy, fail []bool) (calls int) {
		i := 0
		p.Strategy = &strategyFunc{fn: func(ctx context.Context, msgs []llm.Message, b int, c compact.TokenCounter) ([]llm.Message, error) {
			calls++
			f := fail[i]
			i++
			if f {
				return nil, errStrategy
			}
			return compact.Truncate{KeepLast: 2, Step: 1}.Compress(ctx, msgs, b, c)
		}}
		for range fail {
			if _, err := p.Fit(ctx, &llm.Request{Messages: long}, llm.ModelInfo{}); err != nil {
				t.Fatal(err)
			}
		}
		return calls
	}
	tests := []struct {
		name      string
		max       int
		fail      []bool
		wantCalls int
		wantOpen  bool
	}{
		{"default: three failures open it", 0, []bool{true, true, true, true, true}, 3, true},
		{"two failures keep it closed", 0, []bool{true, true, false}, 3, false},
		{"a success resets the count", 0, []bool{true, true, false, true, true, false}, 6, false},
		{"without the reset a fourth failure would open it", 0, []bool{true, true, false, true, true, true, true}, 6, true},
		{"MaxFailures 1", 1, []bool{true, false, false}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &compact.Policy{Counter: compact.Estimator{}, Budget: budget, MaxFailures: tt.max, Logger: quiet()}
			if got := run(p, tt.fail); got != tt.wantCalls {
				t.Errorf("strategy called %d times, want %d", got, tt.wantCalls)
			}
			if p.Open() != tt.wantOpen {
				t.Errorf("Open() = %v, want %v (failures %d)", p.Open(), tt.wantOpen, p.Failures())
			}
			p.Reset()
			if p.Open() || p.Failures() != 0 {
				t.Error("Reset did not close the breaker")
			}
		})
	}
}

// TestPolicyThresholdIsOverTheBudget: a request of exactly the budget fits
// and is sent as it is; one token more compresses.
func TestPolicyThresholdIsOverTheBudget(t *testing.T) {
	t.Parallel()
	msgs := toolSession(6, 200)
	n := compact.Estimator{}.CountMessages(msgs)
	for _, tc := range []struct {
		budget       int
		wantCompress bool
	}{{n, false}, {n + 1, false}, {n - 1, true}} {
		calls := 0
		p := &compact.Policy{Counter: compact.Estimator{}, Budget: tc.budget, Logger: quiet(),
			Strategy: &strategyFunc{fn: func(ctx context.Context, msgs []llm.Message, b int, c compact.TokenCounter) ([]llm.Message, error) {
				calls++
				return compact.Truncate{KeepLast: 2, Step: 1}.Compress(ctx, msgs, b, c)
			}}}
		if _, err := p.Fit(context.Background(), &llm.Request{Messages: msgs}, llm.ModelInfo{}); err != nil {
			t.Fatal(err)
		}
		if got := calls > 0; got != tc.wantCompress {
			t.Errorf("%d tokens, budget %d: compressed %v, want %v", n, tc.budget, got, tc.wantCompress)
		}
	}
}

// An open breaker still refuses what cannot fit the window.
func TestPolicyOpenBreakerRefusesOverTheWindow(t *testing.T) {
	t.Parallel()
	long := toolSession(12, 200)
	n := compact.Estimator{}.CountMessages(long)
	p := &compact.Policy{Counter: compact.Estimator{}, Budget: n / 3, Info: llm.ModelInfo{ContextWindow: n - 1}, MaxFailures: 1, Logger: quiet(),
		Strategy: &strategyFunc{fn: func(context.Context, []llm.Message, int, compact.TokenCounter) ([]llm.Message, error) {
			return nil, errStrategy
		}}}
	for i := range 3 {
		_, err := p.Fit(context.Background(), &llm.Request{Messages: long}, llm.ModelInfo{})
		if !errors.Is(err, llm.ErrContextLength) {
			t.Fatalf("call %d: %v, want KindContextLength", i, err)
		}
	}
	if p.Strategy.(*strategyFunc).count() != 1 {
		t.Error("the open breaker let the strategy run")
	}
}

// A strategy that drops the user's newest message failed, whatever it says.
func TestPolicyNeverDropsTheNewestUserMessage(t *testing.T) {
	t.Parallel()
	long := append(toolSession(12, 200), llm.UserText("and now the question"))
	n := compact.Estimator{}.CountMessages(long)
	dropLast := &strategyFunc{fn: func(_ context.Context, msgs []llm.Message, _ int, _ compact.TokenCounter) ([]llm.Message, error) {
		return append([]llm.Message(nil), msgs[:2]...), nil
	}}
	for _, tc := range []struct {
		name    string
		window  int
		wantErr bool
	}{
		{"within the window: the original goes out", n + 10, false},
		{"over the window: refused", n - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &compact.Policy{Strategy: dropLast, Counter: compact.Estimator{}, Budget: n / 3, Info: llm.ModelInfo{ContextWindow: tc.window}, Logger: quiet()}
			req := &llm.Request{Messages: long}
			got, err := p.Fit(context.Background(), req, llm.ModelInfo{})
			if tc.wantErr {
				if !errors.Is(err, llm.ErrContextLength) || !errors.Is(err, compact.ErrCannotFit) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || got != req {
				t.Fatalf("Fit = %v, %v; want the original request", got, err)
			}
			if p.Failures() != 1 {
				t.Errorf("failures = %d, want 1", p.Failures())
			}
		})
	}
	// The default strategy keeps it.
	p := &compact.Policy{Counter: compact.Estimator{}, Budget: n / 3}
	got, err := p.Fit(context.Background(), &llm.Request{Messages: long}, llm.ModelInfo{})
	if err != nil || got.Messages[len(got.Messages)-1].Text() != "and now the question" {
		t.Fatalf("default strategy: %v, last message %v", err, got.Messages[len(got.Messages)-1])
	}
}

// Off never compresses and never refuses: the provider decides.
func TestPolicyOff(t *testing.T) {
	t.Parallel()
	long := toolSession(12, 200)
	n := compact.Estimator{}.CountMessages(long)
	req := &llm.Request{Messages: long}
	p := &compact.Policy{Strategy: compact.Off, Budget: n / 3, Logger: quiet()}
	if got, err := p.Fit(context.Background(), req, llm.ModelInfo{ContextWindow: n + 10}); err != nil || got != req {
		t.Errorf("within the window: %v, %v", got, err)
	}
	if got, err := p.Fit(context.Background(), req, llm.ModelInfo{ContextWindow: n - 1}); err != nil || got != req {
		t.Errorf("over the window: %v, %v", got, err)
	}
	if p.Failures() != 0 {
		t.Error("Off counts as a failing strategy")
	}
}
