package eval

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agcore/agcore/llm"
)

// ReportVersion is the version of the report's JSON form.
const ReportVersion = 1

// Report is the outcome of a Run: one entry per case, in the set's order.
// Its JSON form is documented by [ReportSchemaJSON].
type Report struct {
	Version int          `json:"agcore_eval"`
	Set     string       `json:"set"`
	Repeat  int          `json:"repeat"`
	Started time.Time    `json:"started"`
	Took    Duration     `json:"took"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Usage   llm.Usage    `json:"usage"`
	Cost    float64      `json:"cost_usd"`
	Cases   []CaseReport `json:"cases"`
	// Baseline is the comparison with an earlier report, when one was
	// given (agcore eval --baseline).
	Baseline *Comparison `json:"baseline,omitempty"`
}

// CaseReport is one case's outcome over its runs.
type CaseReport struct {
	ID   string `json:"id"`
	Set  string `json:"set,omitempty"`
	Pass bool   `json:"pass"`
	// PassRate is the share of the case's runs that passed.
	PassRate float64 `json:"pass_rate"`
	// Scores are each scorer's value over the runs: the mean, with the
	// spread (Min, Max, StdDev) when the case ran more than once.
	Scores []ScoreSummary `json:"scores"`
	// Drifted: an offline run's requests differed from the record's.
	Drifted bool `json:"drifted,omitempty"`
	// Error is the first run's error, if a run failed to finish.
	Error string `json:"error,omitempty"`
	// Usage and Cost are the runs' means.
	Usage llm.Usage `json:"usage"`
	Cost  float64   `json:"cost_usd"`
	// CacheShare is the share of input tokens the provider served from
	// its prompt cache, as reported in the usage.
	CacheShare float64     `json:"cache_share"`
	Runs       []RunReport `json:"runs"`
}

// ScoreSummary is one scorer's value for a case over its runs.
type ScoreSummary struct {
	Scorer    string             `json:"scorer"`
	Mean      float64            `json:"mean"`
	Min       float64            `json:"min"`
	Max       float64            `json:"max"`
	StdDev    float64            `json:"stddev"`
	Threshold float64            `json:"threshold"`
	PassRate  float64            `json:"pass_rate"`
	Pass      bool               `json:"pass"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Detail    string             `json:"detail,omitempty"`
}

// RunReport is one run of a case.
type RunReport struct {
	Pass   bool       `json:"pass"`
	Error  string     `json:"error,omitempty"`
	Scores []Score    `json:"scores"`
	Turns  []Observed `json:"turns"`
	// Drift lists how an offline run's requests differed from the
	// record's, one entry per call; nil for a live run.
	Drift []string  `json:"drift,omitempty"`
	Usage llm.Usage `json:"usage"`
	Cost  float64   `json:"cost_usd"`
	Took  Duration  `json:"took"`
}

// summarize gathers a case's runs.
func summarize(set *Set, c *Case, runs []RunReport, o *Options) CaseReport {
	cr := CaseReport{ID: c.ID, Set: c.Set, Runs: runs}
	if cr.Set == "" {
		cr.Set = set.ID
	}
	passed := 0
	var in, cached int
	for _, r := range runs {
		if r.Pass {
			passed++
		}
		if r.Error != "" && cr.Error == "" {
			cr.Error = r.Error
		}
		if len(r.Drift) > 0 {
			cr.Drifted = true
		}
		cr.Usage.Add(r.Usage)
		cr.Cost += r.Cost
		in += r.Usage.InputTokens
		cached += r.Usage.CachedInputTokens
	}
	n := len(runs)
	cr.Usage = llm.Usage{InputTokens: cr.Usage.InputTokens / n, OutputTokens: cr.Usage.OutputTokens / n, CachedInputTokens: cr.Usage.CachedInputTokens / n, CacheCreationTokens: cr.Usage.CacheCreationTokens / n, ReasoningTokens: cr.Usage.ReasoningTokens / n}
	cr.Cost /= float64(n)
	if in > 0 {
		cr.CacheShare = round(float64(cached) / float64(in))
	}
	cr.PassRate = round(float64(passed) / float64(n))
	cr.Pass = cr.PassRate+eps >= o.MinPassRate
	// Scores by scorer, in the order they first appear.
	var names []string
	byName := map[string][]Score{}
	for _, r := range runs {
		for _, s := range r.Scores {
			if _, ok := byName[s.Scorer]; !ok {
				names = append(names, s.Scorer)
			}
			byName[s.Scorer] = append(byName[s.Scorer], s)
		}
	}
	cr.Scores = make([]ScoreSummary, 0, len(names))
	for _, name := range names {
		ss := byName[name]
		sum := ScoreSummary{Scorer: name, Min: math.Inf(1), Max: math.Inf(-1), Threshold: ss[0].Threshold}
		var vals []float64
		p := 0
		for _, s := range ss {
			vals = append(vals, s.Value)
			sum.Mean += s.Value
			sum.Min = min(sum.Min, s.Value)
			sum.Max = max(sum.Max, s.Value)
			if s.Pass {
				p++
			} else if sum.Detail == "" {
				sum.Detail = s.Detail
			}
			if len(ss) == 1 {
				sum.Metrics = s.Metrics // one run: its metrics as they are
				continue
			}
			for k, v := range s.Metrics {
				if sum.Metrics == nil {
					sum.Metrics = map[string]float64{}
				}
				sum.Metrics[k] += v / float64(len(ss))
			}
		}
		sum.Mean = round(sum.Mean / float64(len(ss)))
		for _, v := range vals {
			sum.StdDev += (v - sum.Mean) * (v - sum.Mean)
		}
		sum.StdDev = round(math.Sqrt(sum.StdDev / float64(len(vals))))
		sum.PassRate = round(float64(p) / float64(len(ss)))
		sum.Pass = sum.PassRate+eps >= o.MinPassRate
		for k, v := range sum.Metrics {
			sum.Metrics[k] = round(v)
		}
		cr.Scores = append(cr.Scores, sum)
	}
	return cr
}

// total fills the report's totals from its cases.
func (r *Report) total() {
	r.Version = ReportVersion
	r.Passed, r.Failed = 0, 0
	r.Usage, r.Cost = llm.Usage{}, 0
	for _, c := range r.Cases {
		if c.Pass {
			r.Passed++
		} else {
			r.Failed++
		}
		for _, run := range c.Runs {
			r.Usage.Add(run.Usage)
			r.Cost += run.Cost
		}
	}
}

// Merge returns one report of the cases of several (the sets' ids joined).
func Merge(reports ...*Report) *Report {
	out := &Report{Version: ReportVersion}
	var ids []string
	for _, r := range reports {
		if r == nil {
			continue
		}
		ids = append(ids, r.Set)
		if out.Started.IsZero() || r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		out.Took += r.Took
		out.Repeat = max(out.Repeat, r.Repeat)
		out.Cases = append(out.Cases, r.Cases...)
	}
	out.Set = strings.Join(ids, ",")
	out.total()
	return out
}

// OK reports whether every case passed.
func (r *Report) OK() bool { return r.Failed == 0 }

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by WriteJSON; a file that is not one
// is a *FormatError.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &FormatError{File: path, Problem: err.Error()}
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &FormatError{File: path, Problem: jsonProblem(err)}
	}
	if r.Version != ReportVersion {
		return nil, &FormatError{File: path, Field: "agcore_eval", Problem: fmt.Sprintf("not an eval report of version %d", ReportVersion)}
	}
	return &r, nil
}

// WriteTable writes the cases × scorers table: each scorer's mean (✓ when
// it passed, ✗ when not, - when it did not apply), then the tokens, cost
// and cache share, and a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	var names []string
	for _, c := range r.Cases {
		for _, s := range c.Scores {
			if !slices.Contains(names, s.Scorer) {
				names = append(names, s.Scorer)
			}
		}
	}
	// The built-in scorers in Default's order, then the others as they
	// came.
	order := []string{ScoreTrajectory, ScoreResponse, ScoreAnswer, ScoreAgent, ScoreLimits, ScoreToolErrors, ScoreDrift, ScoreRubric}
	rank := func(n string) int {
		if i := slices.Index(order, n); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "CASE\tRESULT")
	for _, n := range names {
		fmt.Fprintf(tw, "\t%s", shortName(n))
	}
	fmt.Fprint(tw, "\tTOKENS\tCOST\tCACHE\n")
	for _, c := range r.Cases {
		res := "pass"
		if !c.Pass {
			res = "FAIL"
		}
		if r.Repeat > 1 {
			res += fmt.Sprintf(" %.0f%%", c.PassRate*100)
		}
		if c.Drifted {
			res += " drift"
		}
		fmt.Fprintf(tw, "%s\t%s", c.ID, res)
		for _, n := range names {
			i := slices.IndexFunc(c.Scores, func(s ScoreSummary) bool { return s.Scorer == n })
			if i < 0 {
				fmt.Fprint(tw, "\t-")
				continue
			}
			s := c.Scores[i]
			mark := "✓"
			if !s.Pass {
				mark = "✗"
			}
			cell := fmt.Sprintf("%s %.2f", mark, s.Mean)
			if r.Repeat > 1 && s.Min != s.Max {
				cell += fmt.Sprintf(" ±%.2f", s.StdDev)
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintf(tw, "\t%d\t$%.4f\t%.0f%%\n", c.Usage.Total(), c.Cost, c.CacheShare*100)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Cases {
		if c.Pass {
			continue
		}
		if c.Error != "" {
			fmt.Fprintf(w, "%s: error: %s\n", c.ID, c.Error)
		}
		for _, s := range c.Scores {
			if !s.Pass && s.Detail != "" {
				fmt.Fprintf(w, "%s: %s %.2f < %.2f: %s\n", c.ID, s.Scorer, s.Mean, s.Threshold, s.Detail)
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d cases passed (%d tokens, $%.4f, %s)\n", r.Passed, r.Passed+r.Failed, r.Usage.Total(), r.Cost, dur(r.Took))
	return err
}

func shortName(n string) string {
	switch n {
	case ScoreTrajectory:
		return "TRAJECTORY"
	case ScoreResponse:
		return "ROUGE1"
	}
	return strings.ToUpper(n)
}

func dur(d Duration) string {
	return time.Duration(d).Round(time.Millisecond).String()
}

// WriteJUnit writes the report as JUnit XML: one testsuite per set, one
// testcase per case, a failure (each failing scorer, one a line) for a
// case that failed, an error for one that could not run.
func (r *Report) WriteJUnit(w io.Writer) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Error     *failure `xml:"error,omitempty"`
		Out       string   `xml:"system-out,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []*suite `xml:"testsuite"`
	}
	out := suites{}
	bySet := map[string]*suite{}
	for _, c := range r.Cases {
		s := bySet[c.Set]
		if s == nil {
			s = &suite{Name: c.Set}
			bySet[c.Set] = s
			out.Suites = append(out.Suites, s)
		}
		var took Duration
		for _, run := range c.Runs {
			took += run.Took
		}
		tc := testcase{Name: c.ID, Classname: c.Set, Time: fmt.Sprintf("%.3f", time.Duration(took).Seconds())}
		var lines []string
		for _, sc := range c.Scores {
			lines = append(lines, fmt.Sprintf("%s: %.3f (threshold %.3f, pass rate %.2f)", sc.Scorer, sc.Mean, sc.Threshold, sc.PassRate))
		}
		tc.Out = strings.Join(lines, "\n")
		switch {
		case c.Pass:
		case c.Error != "":
			tc.Error = &failure{Message: c.Error, Type: "error", Text: c.Error}
			s.Errors++
			out.Errors++
		default:
			var msgs, text []string
			for _, sc := range c.Scores {
				if !sc.Pass {
					msgs = append(msgs, fmt.Sprintf("%s %.2f < %.2f", sc.Scorer, sc.Mean, sc.Threshold))
					text = append(text, fmt.Sprintf("%s: %s", sc.Scorer, sc.Detail))
				}
			}
			if len(msgs) == 0 {
				msgs = append(msgs, fmt.Sprintf("pass rate %.2f", c.PassRate))
			}
			tc.Failure = &failure{Message: strings.Join(msgs, ", "), Type: "eval", Text: strings.Join(text, "\n")}
			s.Failures++
			out.Failures++
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, tc)
	}
	for _, s := range out.Suites {
		var t float64
		for _, c := range s.Cases {
			var v float64
			fmt.Sscan(c.Time, &v)
			t += v
		}
		s.Time = fmt.Sprintf("%.3f", t)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Change is a case or score that moved between two reports.
type Change struct {
	Case   string  `json:"case"`
	Scorer string  `json:"scorer,omitempty"` // "" for the case's result
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// What says it in words: "passed → failed", "0.80 → 0.40", "new".
	What string `json:"what"`
}

// Comparison is the difference between a baseline report and a new one.
type Comparison struct {
	Regressions  []Change `json:"regressions"`
	Improvements []Change `json:"improvements"`
	// New are cases the baseline does not have; Gone, cases it had that
	// the new report does not.
	New  []string `json:"new,omitempty"`
	Gone []string `json:"gone,omitempty"`
}

// Compare lists what got worse and what got better from base to now, by
// case (set and id): a case that passed and fails is a regression (and the
// reverse an improvement), as is a scorer's mean that fell (or rose).
func Compare(base, now *Report) Comparison {
	key := func(c CaseReport) string { return c.Set + "\x00" + c.ID }
	old := map[string]CaseReport{}
	for _, c := range base.Cases {
		old[key(c)] = c
	}
	var cmp Comparison
	seen := map[string]bool{}
	for _, c := range now.Cases {
		k := key(c)
		seen[k] = true
		b, ok := old[k]
		if !ok {
			cmp.New = append(cmp.New, c.ID)
			continue
		}
		if b.Pass != c.Pass || b.PassRate != c.PassRate {
			ch := Change{Case: c.ID, Before: b.PassRate, After: c.PassRate, What: fmt.Sprintf("pass rate %.2f → %.2f", b.PassRate, c.PassRate)}
			if b.Pass != c.Pass {
				ch.What = map[bool]string{true: "failed → passed", false: "passed → failed"}[c.Pass]
			}
			if c.PassRate < b.PassRate {
				cmp.Regressions = append(cmp.Regressions, ch)
			} else {
				cmp.Improvements = append(cmp.Improvements, ch)
			}
		}
		for _, s := range c.Scores {
			i := slices.IndexFunc(b.Scores, func(x ScoreSummary) bool { return x.Scorer == s.Scorer })
			if i < 0 {
				continue
			}
			bs := b.Scores[i]
			if math.Abs(bs.Mean-s.Mean) < 1e-6 {
				continue
			}
			ch := Change{Case: c.ID, Scorer: s.Scorer, Before: bs.Mean, After: s.Mean, What: fmt.Sprintf("%s %.2f → %.2f", s.Scorer, bs.Mean, s.Mean)}
			if s.Mean < bs.Mean {
				cmp.Regressions = append(cmp.Regressions, ch)
			} else {
				cmp.Improvements = append(cmp.Improvements, ch)
			}
		}
	}
	for _, c := range base.Cases {
		if !seen[key(c)] {
			cmp.Gone = append(cmp.Gone, c.ID)
		}
	}
	return cmp
}

// Write writes the comparison, one change a line.
func (c Comparison) Write(w io.Writer) {
	for _, x := range c.Regressions {
		fmt.Fprintf(w, "regression: %s: %s\n", x.Case, x.What)
	}
	for _, x := range c.Improvements {
		fmt.Fprintf(w, "improvement: %s: %s\n", x.Case, x.What)
	}
	for _, id := range c.New {
		fmt.Fprintf(w, "new: %s\n", id)
	}
	for _, id := range c.Gone {
		fmt.Fprintf(w, "gone: %s\n", id)
	}
	fmt.Fprintf(w, "against the baseline: %d regressions, %d improvements\n", len(c.Regressions), len(c.Improvements))
}

// jsonProblem makes a decoding error one line, with the field when known.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: %s is not a %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}
