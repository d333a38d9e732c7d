package evaltest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/eval/evaltest"
	"github.com/agcore/agcore/llmtest"
)

// TestRunMakesSubtests: each case of the set is a subtest of its own.
func TestRunMakesSubtests(t *testing.T) {
	a, err := agent.New(llmtest.New(llmtest.Text("Paris"), llmtest.Text("Rome")), agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	set := &eval.Set{ID: "capitals", Cases: []eval.Case{
		{ID: "france", Turns: []eval.Turn{{Input: "Capital of France?", Expect: eval.Expect{Answer: &eval.Answer{Contains: []string{"Paris"}}}}}},
		{ID: "italy", Turns: []eval.Turn{{Input: "Capital of Italy?", Expect: eval.Expect{Answer: &eval.Answer{Regexp: "^(Rome|Paris)$"}}}}},
	}}
	var ran []string
	rep := evaltest.Run(t, a, set, &eval.Options{Concurrency: 1, OnCase: func(c eval.CaseReport) { ran = append(ran, c.ID) }})
	if rep.Passed != 2 || len(ran) != 2 {
		t.Errorf("passed %d, ran %v", rep.Passed, ran)
	}
}

// recorder keeps what Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) Error(a ...any)            { r.errs = append(r.errs, fmt.Sprint(a...)) }

// TestCheckReportsFailures: a failing case fails its subtest with each
// failing scorer and the reason; a passing one does not.
func TestCheckReportsFailures(t *testing.T) {
	r := &recorder{TB: t}
	evaltest.Check(r, eval.CaseReport{ID: "x", Pass: false, Scores: []eval.ScoreSummary{
		{Scorer: "answer", Mean: 0.5, Threshold: 1, Detail: `answer does not contain "Paris"`},
		{Scorer: "agent", Mean: 1, Threshold: 1, Pass: true},
	}})
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], `answer 0.500 < 1.000: answer does not contain "Paris"`) {
		t.Errorf("errors %q", r.errs)
	}
	r = &recorder{TB: t}
	evaltest.Check(r, eval.CaseReport{ID: "y", Pass: true, Scores: []eval.ScoreSummary{{Scorer: "agent", Mean: 1, Threshold: 1, Pass: true}}})
	if len(r.errs) != 0 {
		t.Errorf("a passing case reported %q", r.errs)
	}
	r = &recorder{TB: t}
	evaltest.Check(r, eval.CaseReport{ID: "z", Error: "model down"})
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "model down") {
		t.Errorf("errors %q", r.errs)
	}
}
