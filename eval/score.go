package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Scorer scores one aspect of a turn. Score returns ok false when the
// scorer does not apply to the turn (its expectation is not set); a case
// is scored by the mean of its turns' values, against the threshold.
// Implementations must be safe for concurrent use.
type Scorer interface {
	// Name is the scorer's name in reports and thresholds.
	Name() string
	// Threshold is the value a case must reach unless the set, the case or
	// the options give another.
	Threshold() float64
	// Score scores one turn.
	Score(ctx context.Context, in *Input) (s Score, ok bool)
}

// Input is what a scorer sees of a turn.
type Input struct {
	Case   *Case
	Turn   int // from 0
	Expect *Expect
	Got    *Observed
	// Drift lists the case run's drift from its record (offline runs
	// only; nil when live, empty when none).
	Drift []string
}

// Score is a scorer's value for a turn, or for a case (the mean over its
// turns), with the threshold it is held to.
type Score struct {
	Scorer    string  `json:"scorer"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Pass      bool    `json:"pass"`
	// Detail says what did not match, for a failing turn.
	Detail string `json:"detail,omitempty"`
	// Metrics are other figures of the same scorer (the trajectory's
	// precision, recall and f1), means over the turns.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Scorer names of the built-in scorers.
const (
	ScoreTrajectory = "tool_trajectory_avg_score" // ADK's name
	ScoreResponse   = "response_match_score"      // ADK's name: ROUGE-1 F-measure
	ScoreAnswer     = "answer"
	ScoreAgent      = "agent"
	ScoreLimits     = "limits"
	ScoreToolErrors = "no_tool_errors"
	ScoreRubric     = "rubric"
	ScoreDrift      = "no_drift"
)

// Default returns the built-in scorers: trajectory (threshold 1),
// response match (0.8, ADK's default), answer, agent, limits, no tool
// errors, no drift (1 each), and, with a judge, the rubric (1).
func Default(judge *Judge) []Scorer {
	s := []Scorer{TrajectoryScorer{}, ResponseScorer{}, AnswerScorer{}, AgentScorer{}, LimitsScorer{}, ToolErrorScorer{}, DriftScorer{}}
	if judge != nil {
		s = append(s, judge)
	}
	return s
}

// eps absorbs float noise in threshold comparisons (a mean of thirds).
const eps = 1e-9

// score scores a case run with every scorer, in their order.
func score(ctx context.Context, set *Set, c *Case, run *RunReport, o *Options) []Score {
	out := make([]Score, 0, len(o.Scorers))
	ins := make([]Input, len(c.Turns))
	for i := range ins {
		ins[i] = Input{Case: c, Turn: i, Expect: &c.Turns[i].Expect, Drift: run.Drift}
		if i < len(run.Turns) {
			ins[i].Got = &run.Turns[i]
		} else {
			// A turn that never ran (an earlier one failed) counts as 0.
			ins[i].Got = &Observed{Input: c.Turns[i].Input, Error: "not run"}
		}
	}
	for _, sc := range o.Scorers {
		name := sc.Name()
		th := threshold(name, sc.Threshold(), set, c, o)
		var sum float64
		n := 0
		var metrics map[string]float64
		var details []string
		for i := range run.Turns {
			s, ok := sc.Score(ctx, &ins[i])
			if !ok {
				continue
			}
			n++
			sum += s.Value
			switch {
			case metrics == nil:
				metrics = s.Metrics // the scorer's own: a case of one turn adds nothing
			default:
				for k, v := range s.Metrics {
					metrics[k] += v
				}
			}
			if s.Detail != "" && s.Value+eps < th {
				if len(c.Turns) > 1 {
					s.Detail = fmt.Sprintf("turn %d: %s", i+1, s.Detail)
				}
				details = append(details, s.Detail)
			}
		}
		for i := len(run.Turns); i < len(c.Turns); i++ {
			if _, ok := sc.Score(ctx, &ins[i]); ok {
				n++ // a turn that never ran counts, as 0
			}
		}
		if n == 0 {
			continue
		}
		s := Score{Scorer: name, Value: sum / float64(n), Threshold: th, Detail: strings.Join(details, "; ")}
		for k, v := range metrics {
			metrics[k] = round(v / float64(n))
		}
		s.Metrics = metrics
		s.Value = round(s.Value)
		s.Pass = s.Value+eps >= th
		out = append(out, s)
	}
	return out
}

func round(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// threshold is name's threshold for c: the options', the case's, the
// set's, else the scorer's own.
func threshold(name string, def float64, set *Set, c *Case, o *Options) float64 {
	for _, m := range []map[string]float64{o.Thresholds, c.Thresholds, set.Thresholds} {
		if v, ok := m[name]; ok {
			return v
		}
	}
	return def
}

// AgentScorer checks the agent that gave the final answer (Expect.Agent).
type AgentScorer struct{}

// Name is "agent".
func (AgentScorer) Name() string { return ScoreAgent }

// Threshold is 1.
func (AgentScorer) Threshold() float64 { return 1 }

// Score is 1 when the answering agent is the expected one.
func (AgentScorer) Score(_ context.Context, in *Input) (Score, bool) {
	if in.Expect.Agent == "" {
		return Score{}, false
	}
	if in.Got.Agent == in.Expect.Agent {
		return Score{Value: 1}, true
	}
	return Score{Detail: fmt.Sprintf("answered by %q, want %q", in.Got.Agent, in.Expect.Agent)}, true
}

// LimitsScorer checks Expect.Limits: its value is the share of the set
// limits the turn kept.
type LimitsScorer struct{}

// Name is "limits".
func (LimitsScorer) Name() string { return ScoreLimits }

// Threshold is 1.
func (LimitsScorer) Threshold() float64 { return 1 }

// Score is the share of the limits kept.
func (LimitsScorer) Score(_ context.Context, in *Input) (Score, bool) {
	l := in.Expect.Limits
	if l == nil {
		return Score{}, false
	}
	g := in.Got
	n, kept := 0, 0
	var over []string
	check := func(set bool, ok bool, what func() string) {
		if !set {
			return
		}
		n++
		if ok {
			kept++
		} else {
			over = append(over, what())
		}
	}
	check(l.CostUSD > 0, g.Cost <= l.CostUSD, func() string { return fmt.Sprintf("cost $%.6f over $%.6f", g.Cost, l.CostUSD) })
	check(l.Tokens > 0, g.Usage.Total() <= l.Tokens, func() string { return fmt.Sprintf("%d tokens over %d", g.Usage.Total(), l.Tokens) })
	check(l.Steps > 0, g.Steps <= l.Steps, func() string { return fmt.Sprintf("%d steps over %d", g.Steps, l.Steps) })
	check(l.Latency > 0, g.Took <= l.Latency, func() string { return fmt.Sprintf("took %s over %s", dur(g.Took), dur(l.Latency)) })
	if n == 0 {
		return Score{}, false
	}
	return Score{Value: float64(kept) / float64(n), Detail: strings.Join(over, ", ")}, true
}

// ToolErrorScorer checks Expect.NoToolErrors: 1 when no tool call of the
// turn (sub-agents' included) returned an error.
type ToolErrorScorer struct{}

// Name is "no_tool_errors".
func (ToolErrorScorer) Name() string { return ScoreToolErrors }

// Threshold is 1.
func (ToolErrorScorer) Threshold() float64 { return 1 }

// Score is 0 when a call failed.
func (ToolErrorScorer) Score(_ context.Context, in *Input) (Score, bool) {
	if !in.Expect.NoToolErrors {
		return Score{}, false
	}
	var failed []string
	for _, c := range in.Got.Calls {
		if c.IsError {
			failed = append(failed, fmt.Sprintf("%s: %s", c.Name, clip(c.Output, 80)))
		}
	}
	if len(failed) == 0 {
		return Score{Value: 1}, true
	}
	return Score{Detail: "tool errors: " + strings.Join(failed, "; ")}, true
}

// DriftScorer applies to offline runs (a case with a record): 1 when every
// request matched the recorded one, 0 when one drifted (a changed prompt,
// tool, parameter...). Give it threshold 0 to report drift without failing.
type DriftScorer struct{}

// Name is "no_drift".
func (DriftScorer) Name() string { return ScoreDrift }

// Threshold is 1.
func (DriftScorer) Threshold() float64 { return 1 }

// Score is 0 for a run that drifted (scored on its first turn only).
func (DriftScorer) Score(_ context.Context, in *Input) (Score, bool) {
	if in.Drift == nil || in.Turn > 0 {
		return Score{}, false
	}
	if len(in.Drift) == 0 {
		return Score{Value: 1}, true
	}
	return Score{Detail: "drift: " + clip(strings.ReplaceAll(strings.Join(in.Drift, "; "), "\n", "; "), 300)}, true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
