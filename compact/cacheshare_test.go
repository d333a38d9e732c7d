package compact_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/internal/testkit/cacheshare"
)

// replayAll runs every strategy of the comparison on a session of turns
// turns, in the order of cacheshare.Strategies.
func replayAll(tb testing.TB, turns int) map[string]cacheshare.Result {
	tb.Helper()
	out := map[string]cacheshare.Result{}
	for _, s := range cacheshare.Strategies() {
		res, err := cacheshare.Run(context.Background(), s.Name, s.New(), turns)
		if err != nil {
			tb.Fatalf("%s, %d turns: %v", s.Name, turns, err)
		}
		out[s.Name] = res
	}
	return out
}

// BenchmarkCacheShare replays the synthetic tool-heavy session of package
// internal/testkit/cacheshare (24,000-token window, 4,096 reserved for output)
// with each strategy, side by side, and reports the cache-eligible share
// of the input tokens, the compactions (requests that did not extend the
// previous one), the mean fraction of turns kept and the largest request.
// The figures are deterministic; the timings only say what a replay costs.
//
//	go test ./compact -run '^$' -bench CacheShare
//	go run ./examples/cacheshare        # the same figures as a table
func BenchmarkCacheShare(b *testing.B) {
	for _, turns := range []int{30, 200} {
		for _, s := range cacheshare.Strategies() {
			b.Run(fmt.Sprintf("%s/turns=%d", s.Name, turns), func(b *testing.B) {
				var res cacheshare.Result
				for b.Loop() {
					var err error
					res, err = cacheshare.Run(context.Background(), s.Name, s.New(), turns)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res.Share(), "share")
				b.ReportMetric(float64(res.Compactions), "compactions")
				b.ReportMetric(res.Kept, "kept")
				b.ReportMetric(float64(res.MaxTokens), "max-tokens")
				b.ReportMetric(float64(res.Budget), "budget")
			})
		}
	}
}

// TestCacheShare checks the replay's invariants for every bounded strategy
// (no request over the budget, every tool call paired with its result,
// system prompt and tool definitions byte-identical in every request) and
// that the default strategy is cache-friendly: at 30 turns at least 90% of
// the input tokens are in a prefix shared with the previous request, and
// at 200 turns it shares at least as much as the naive baselines and the
// previous default while
// keeping at least as much of the conversation. The figures are
// deterministic (a synthetic session, the estimator); the thresholds leave
// a margin so that small changes to the estimator do not break the test.
func TestCacheShare(t *testing.T) {
	t.Parallel()
	const def = "default"
	lengths := []int{30, 200}
	if compact.RaceEnabled || testing.Short() {
		lengths = lengths[:1]
		t.Log("the 200-turn replay runs without -race and -short (.ci/run runs it so)")
	}
	for _, turns := range lengths {
		res := replayAll(t, turns)
		for name, r := range res {
			if name == cacheshare.Unbounded {
				continue
			}
			for _, v := range r.Violations {
				t.Errorf("%s, %d turns: %s", name, turns, v)
			}
			if r.MaxTokens > r.Budget {
				t.Errorf("%s, %d turns: largest request %d over the budget %d", name, turns, r.MaxTokens, r.Budget)
			}
			if r.Compressed == 0 {
				t.Errorf("%s, %d turns: nothing was compressed; the session is too small to test anything", name, turns)
			}
		}
		d := res[def]
		t.Logf("%d turns: default share %.3f, %d compactions, kept %.3f, max %d/%d",
			turns, d.Share(), d.Compactions, d.Kept, d.MaxTokens, d.Budget)
		if turns == 30 && d.Share() < 0.90 {
			t.Errorf("30 turns: default share %.3f, want at least 0.90", d.Share())
		}
		if up := res[cacheshare.Unbounded]; d.Share() > up.Share() {
			t.Errorf("%d turns: default share %.3f above the append-only bound %.3f: the measure is broken", turns, d.Share(), up.Share())
		}
		for _, base := range []string{"naive drop-oldest-turns", "naive in Incremental", "previous default"} {
			b := res[base]
			if d.Share() < b.Share() {
				t.Errorf("%d turns: default share %.3f below %s's %.3f", turns, d.Share(), base, b.Share())
			}
			if d.Kept < b.Kept {
				t.Errorf("%d turns: default keeps %.3f of the turns, less than %s's %.3f", turns, d.Kept, base, b.Kept)
			}
		}
	}
}
