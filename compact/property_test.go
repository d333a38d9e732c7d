package compact

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/agcore/agcore/llm"
)

// TestStrategiesKeepInvariantsOnRandomHistories is the property every
// strategy promises: on random tool-heavy histories of 1 to 500 messages
// (parallel calls, error results, thinking blocks) and random budgets, the
// result fits the budget or the error is ErrCannotFit (or, for
// summarization, one of its stop errors); the result validates (so every
// tool call still has its result, in order); the last assistant message
// with tool calls is kept whole, thinking blocks included; and the input is
// never modified.
func TestStrategiesKeepInvariantsOnRandomHistories(t *testing.T) {
	t.Parallel()
	strategies := []struct {
		name string
		new  func() Strategy
	}{
		{"microcompact", func() Strategy { return Microcompact{MinFree: -1, KeepRecent: 4, Step: 1} }},
		{"microcompact-defaults", func() Strategy { return Microcompact{} }},
		{"truncate", func() Strategy { return Truncate{KeepLast: 2} }},
		{"truncate-exact", func() Strategy { return Truncate{Step: 1} }},
		{"summarize", func() Strategy { return &Summarize{Model: &fakeModel{}, KeepLast: 2} }},
		{"pipeline", func() Strategy { return DefaultPipeline(&fakeModel{}) }},
		{"pipeline-no-model", func() Strategy { return DefaultPipeline(nil) }},
		{"incremental", func() Strategy { return NewIncremental(DefaultPipeline(&fakeModel{})) }},
	}
	counters := []struct {
		name       string
		c          TokenCounter
		iterations int
	}{{"estimator", Estimator{}, 150}}
	for _, s := range strategies {
		for _, cn := range counters {
			t.Run(s.name+"/"+cn.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, uint64(len(s.name)*31+len(cn.name))))
				iterations := cn.iterations
				if testing.Short() || raceEnabled {
					iterations = 10 // .ci/run also runs it whole without -race
				}
				outcomes := map[string]int{}
				for it := range iterations {
					n := 1 + r.IntN(500)
					if it%4 == 0 {
						n = 1 + r.IntN(20)
					}
					msgs := history(r, n)
					if err := Validate(msgs); err != nil {
						t.Fatalf("generated history is invalid: %v", err)
					}
					total := cn.c.CountMessages(msgs)
					budget := max(1, int(float64(total)*(0.05+r.Float64())))
					outcomes[checkStrategy(t, s.new(), msgs, budget, cn.c)]++
				}
				t.Logf("outcomes: %v", outcomes)
			})
		}
	}
}

// checkStrategy checks the invariants and returns the outcome: "fits",
// "unchanged" (already within the budget) or the error.
func checkStrategy(t *testing.T, s Strategy, msgs []llm.Message, budget int, counter TokenCounter) string {
	t.Helper()
	outcome := "fits"
	if counter.CountMessages(msgs) <= budget {
		outcome = "unchanged"
	}
	before := deepCopy(msgs)
	out, err := s.Compress(context.Background(), msgs, budget, counter)
	mustUnchanged(t, before, msgs)
	if err != nil {
		outcome = "cannot fit"
		if !errors.Is(err, ErrCannotFit) && !errors.Is(err, ErrThrashing) && !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("unexpected error: %v", err)
		}
		var cf *CannotFitError
		if errors.As(err, &cf) && out != nil && cf.Tokens != counter.CountMessages(out) {
			t.Fatalf("CannotFitError says %d tokens, the result has %d", cf.Tokens, counter.CountMessages(out))
		}
	} else if got := counter.CountMessages(out); got > budget {
		t.Fatalf("no error but %d tokens exceed the budget of %d", got, budget)
	}
	if out == nil {
		t.Fatal("no messages returned")
	}
	if err := Validate(out); err != nil {
		t.Fatalf("output does not validate: %v", err)
	}
	if last, ok := lastExchangeMessage(msgs); ok && !contains(out, last) {
		t.Fatal("the last assistant message with tool calls (and its thinking) was not kept")
	}
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem && !contains(out[:1], msgs[0]) {
		t.Fatal("the system message was not kept first")
	}
	return outcome
}
