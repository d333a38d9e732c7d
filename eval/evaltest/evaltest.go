package evaltest

import (
	"fmt"
	"testing"

	"github.com/agcore/agcore/eval"
)

// Run runs set against target (eval.Run) and makes each case a subtest of
// t named after it, which fails when the case fails, with each failing
// scorer's value, threshold and reason, and logs every score. It returns
// the report; a set that does not check fails t at once.
func Run(t *testing.T, target eval.Target, set *eval.Set, opts *eval.Options) *eval.Report {
	t.Helper()
	rep, err := eval.Run(t.Context(), target, set, opts)
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	for _, c := range rep.Cases {
		t.Run(c.ID, func(t *testing.T) { Check(t, c) })
	}
	return rep
}

// RunFile reads the set in path (eval.Load: agcore's format or ADK's,
// with the test_config.json beside an ADK file) and runs it as Run does.
func RunFile(t *testing.T, target eval.Target, path string, opts *eval.Options) *eval.Report {
	t.Helper()
	set, err := eval.Load(path, nil)
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	return Run(t, target, set, opts)
}

// Check fails t when the case failed, one error per failing scorer (or the
// run's error), and logs each score.
func Check(t testing.TB, c eval.CaseReport) {
	t.Helper()
	for _, s := range c.Scores {
		t.Logf("%s: %.3f (threshold %.3f, pass rate %.2f)", s.Scorer, s.Mean, s.Threshold, s.PassRate)
	}
	if c.Pass {
		return
	}
	if c.Error != "" {
		t.Errorf("the case did not run to its end: %s", c.Error)
	}
	failed := false
	for _, s := range c.Scores {
		if !s.Pass {
			failed = true
			t.Errorf("%s %.3f < %.3f: %s", s.Scorer, s.Mean, s.Threshold, s.Detail)
		}
	}
	if !failed && c.Error == "" {
		t.Error(fmt.Sprintf("passed %.0f%% of its runs", c.PassRate*100))
	}
}
