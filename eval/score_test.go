package eval

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// TestRouge1 checks ROUGE-1 against rouge-score's published example and
// hand-computed cases.
func TestRouge1(t *testing.T) {
	for _, tc := range []struct {
		name, cand, ref string
		p, r, f         float64
	}{
		// rouge-score's README: scorer.score('The quick brown fox jumps over
		// the lazy dog', 'The quick brown dog jumps on the log.') gives
		// precision 0.75, recall 0.6667, fmeasure 0.7059.
		{"rouge-score's README", "The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog", 0.75, 6.0 / 9, 0.70588},
		{"identical", "Turned off the light.", "turned off the light", 1, 1, 1},
		{"stemming joins forms", "running jumps", "run jumping", 1, 1, 1},
		{"words of three letters are not stemmed", "cats", "cat", 1, 1, 1},
		{"nothing shared", "yes", "no", 0, 0, 0},
		{"empty candidate", "", "something", 0, 0, 0},
		// Counts clip: "the the the" shares "the" once with "the cat".
		{"repeated words clip", "the the the", "the cat", 1.0 / 3, 0.5, 0.4},
		// Non-Latin letters are separators, as in rouge-score.
		{"non-Latin text", "東京は晴れ", "東京は晴れ", 0, 0, 0},
		{"punctuation separates", "Dec-7: 42 items", "dec 7 42 item", 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, r, f := Rouge1(tc.cand, tc.ref)
			if !near(p, tc.p) || !near(r, tc.r) || !near(f, tc.f) {
				t.Errorf("Rouge1(%q, %q) = %.4f %.4f %.4f, want %.4f %.4f %.4f", tc.cand, tc.ref, p, r, f, tc.p, tc.r, tc.f)
			}
		})
	}
}

// TestPorterStem checks the stemmer on the examples of Porter's paper
// (full stems, as NLTK's default mode gives them).
func TestPorterStem(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "tie", "cats": "cat", "agreed": "agre",
		"plastered": "plaster", "motoring": "motor", "sing": "sing", "conflated": "conflat",
		"troubled": "troubl", "sized": "size", "hopping": "hop", "falling": "fall", "hissing": "hiss",
		"fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi", "relational": "relat",
		"conditional": "condit", "rational": "ration", "generalizations": "gener", "oscillators": "oscil",
		"running": "run", "jumps": "jump", "skies": "sky", "dying": "die", "effective": "effect",
		"adjustment": "adjust", "hopeful": "hope", "goodness": "good", "controll": "control",
	} {
		if got := porterStem(in); got != want {
			t.Errorf("porterStem(%q) = %q, want %q", in, got, want)
		}
	}
}

func calls(names ...string) []ToolCall {
	out := make([]ToolCall, len(names))
	for i, n := range names {
		out[i] = ToolCall{Name: n}
	}
	return out
}

func want(names ...string) []Call {
	out := make([]Call, len(names))
	for i, n := range names {
		out[i] = Call{Name: n}
	}
	return out
}

// TestTrajectoryMatchTypes: ADK's documented examples of each match type
// (ToolTrajectoryCriterion.MatchType's docstrings), and the precision,
// recall and F1 beside them.
func TestTrajectoryMatchTypes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		match    MatchType
		want     []Call
		got      []ToolCall
		ok       bool
		p, r, f1 float64
	}{
		{"EXACT: the same calls", Exact, want("T1", "T2", "T3"), calls("T1", "T2", "T3"), true, 1, 1, 1},
		{"EXACT: an extra call fails", Exact, want("T1", "T2", "T3"), calls("T1", "T2", "T3", "T4"), false, 0.75, 1, 6.0 / 7},
		{"EXACT: another order fails", Exact, want("T1", "T2"), calls("T2", "T1"), false, 0.5, 0.5, 0.5},
		{"EXACT: no call expected, none made", Exact, want(), calls(), true, 1, 1, 1},
		{"IN_ORDER: ADK's example 1", InOrder, want("T1", "T2", "T3"), calls("T1", "T1.1", "T2", "T2.1", "T2.2", "T3", "T3.1"), true, 3.0 / 7, 1, 0.6},
		{"IN_ORDER: ADK's example 2 (T4 missing)", InOrder, want("T1", "T2", "T3", "T4"), calls("T1", "T1.1", "T2", "T2.1", "T2.2", "T3", "T3.1"), false, 3.0 / 7, 0.75, 6.0 / 11},
		{"IN_ORDER: T3 before T2", InOrder, want("T1", "T2", "T3"), calls("T1", "T1.1", "T3", "T2", "T2.1", "T2.2", "T3.1"), false, 2.0 / 7, 2.0 / 3, 0.4},
		{"IN_ORDER: nothing expected", InOrder, want(), calls("T1"), true, 0, 1, 0},
		{"ANY_ORDER: ADK's example 1", AnyOrder, want("T1", "T2", "T3"), calls("T2", "T2.1", "T1", "T1.1", "T1.2", "T3", "T3.1"), true, 3.0 / 7, 1, 0.6},
		{"ANY_ORDER: ADK's example 2 (T4 missing)", AnyOrder, want("T1", "T2", "T3", "T4"), calls("T1", "T1.1", "T2", "T2.1", "T2.2", "T3", "T3.1"), false, 3.0 / 7, 0.75, 6.0 / 11},
		{"ANY_ORDER: T3 missing", AnyOrder, want("T1", "T2", "T3"), calls("T1", "T1.1", "T2", "T2.1", "T2.2", "T3.1"), false, 2.0 / 6, 2.0 / 3, 4.0 / 9},
		{"ANY_ORDER: a repeated call needs two", AnyOrder, want("T1", "T1"), calls("T1"), false, 1, 0.5, 2.0 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Trajectory{Calls: tc.want, Match: tc.match}
			in := &Input{Expect: &Expect{Trajectory: tr}, Got: &Observed{Calls: tc.got}}
			s, ok := TrajectoryScorer{}.Score(context.Background(), in)
			if !ok {
				t.Fatal("does not apply")
			}
			if (s.Value == 1) != tc.ok {
				t.Errorf("value %v, want match %v (%s)", s.Value, tc.ok, s.Detail)
			}
			m := s.Metrics
			if !near(m["precision"], tc.p) || !near(m["recall"], tc.r) || !near(m["f1"], tc.f1) {
				t.Errorf("precision/recall/f1 %.4f %.4f %.4f, want %.4f %.4f %.4f", m["precision"], m["recall"], m["f1"], tc.p, tc.r, tc.f1)
			}
		})
	}
}

func TestArgumentRules(t *testing.T) {
	got := `{"city":"Paris","units":"metric","when":{"day":"mon","hour":9},"tags":["a","b"],"n":1.0}`
	for _, tc := range []struct {
		name string
		want string
		rule ArgRule
		ok   bool
	}{
		{"exact: same value, keys reordered, 1 == 1.0", `{"n":1,"tags":["a","b"],"when":{"hour":9,"day":"mon"},"units":"metric","city":"Paris"}`, ArgsExact, true},
		{"exact: a missing key fails", `{"city":"Paris"}`, ArgsExact, false},
		{"ignore: anything", `{"city":"Rome"}`, ArgsIgnore, true},
		{"keys: only the listed keys", `{"city":"Paris","units":"metric"}`, ArgsKeys, true},
		{"keys: a listed key's value differs", `{"city":"Rome"}`, ArgsKeys, false},
		{"keys: values compare whole", `{"when":{"day":"mon"}}`, ArgsKeys, false},
		{"subset: nested objects by their keys", `{"when":{"day":"mon"}}`, ArgsSubset, true},
		{"subset: arrays element by element", `{"tags":["a","b"]}`, ArgsSubset, true},
		{"subset: a shorter array fails", `{"tags":["a"]}`, ArgsSubset, false},
		{"subset: a nested value differs", `{"when":{"hour":10}}`, ArgsSubset, false},
		{"exact: absent arguments are {}", ``, ArgsExact, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok := matchArgs(json.RawMessage(tc.want), json.RawMessage(got), tc.rule); ok != tc.ok {
				t.Errorf("matchArgs = %v, want %v", ok, tc.ok)
			}
		})
	}
	if !matchArgs(nil, json.RawMessage(`{}`), ArgsExact) {
		t.Error("absent arguments do not match {}")
	}
	// The call's own rule wins over the trajectory's; the agent must match.
	w := Call{Name: "get", Args: json.RawMessage(`{"city":"Paris"}`), Rule: ArgsKeys, Agent: "weather"}
	g := ToolCall{Name: "get", Args: json.RawMessage(got), Agent: "weather"}
	if !callMatches(w, g, ArgsExact) {
		t.Error("the call's rule did not win")
	}
	g.Agent = "triage"
	if callMatches(w, g, ArgsExact) {
		t.Error("a call by another agent matched")
	}
}

func str(s string) *string { return &s }

func TestAnswerScorer(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"total":{"type":"number"},"currency":{"type":"string"}},"required":["total","currency"]}`)
	for _, tc := range []struct {
		name   string
		answer string
		want   Answer
		value  float64
	}{
		{"exact, spaces trimmed", " 42 \n", Answer{Exact: str("42")}, 1},
		{"exact differs", "43", Answer{Exact: str("42")}, 0},
		{"contains both of two", "Paris is sunny", Answer{Contains: []string{"Paris", "sunny"}}, 1},
		{"contains one of two", "Paris is rainy", Answer{Contains: []string{"Paris", "sunny"}}, 0.5},
		{"regexp", "Order #1234 shipped", Answer{Regexp: `#\d{4}\b`}, 1},
		{"schema and fields", `{"total": 12.5, "currency": "EUR"}`, Answer{Schema: schema, Fields: map[string]json.RawMessage{"currency": json.RawMessage(`"EUR"`)}}, 1},
		{"schema in a fenced block", "Here:\n```json\n{\"total\": 1, \"currency\": \"USD\"}\n```", Answer{Schema: schema}, 1},
		{"schema refuses, field differs", `{"total": "12"}`, Answer{Schema: schema, Fields: map[string]json.RawMessage{"total": json.RawMessage(`12`)}}, 0},
		{"not JSON", `twelve euros`, Answer{Schema: schema}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := AnswerScorer{}.Score(context.Background(), &Input{Expect: &Expect{Answer: &tc.want}, Got: &Observed{Answer: tc.answer}})
			if !ok || !near(s.Value, tc.value) {
				t.Errorf("value %v (applies %v), want %v: %s", s.Value, ok, tc.value, s.Detail)
			}
			if s.Value < 1 && s.Detail == "" {
				t.Error("a failing check says nothing")
			}
		})
	}
	if _, ok := (AnswerScorer{}).Score(context.Background(), &Input{Expect: &Expect{Answer: &Answer{Reference: str("x")}}, Got: &Observed{}}); ok {
		t.Error("the answer scorer applies to a reference alone (ROUGE's)")
	}
}

func TestAgentLimitsToolErrorsDrift(t *testing.T) {
	ctx := context.Background()
	got := &Observed{Agent: "billing", Usage: llm.Usage{InputTokens: 900, OutputTokens: 200}, Cost: 0.002, Steps: 3, Took: Duration(2 * time.Second),
		Calls: []ToolCall{{Name: "a"}, {Name: "b", IsError: true, Output: "no such file"}}}
	check := func(name string, sc Scorer, e Expect, want float64, applies bool) {
		t.Helper()
		s, ok := sc.Score(ctx, &Input{Expect: &e, Got: got})
		if ok != applies || (ok && !near(s.Value, want)) {
			t.Errorf("%s: value %v applies %v, want %v %v (%s)", name, s.Value, ok, want, applies, s.Detail)
		}
	}
	check("agent matches", AgentScorer{}, Expect{Agent: "billing"}, 1, true)
	check("agent differs", AgentScorer{}, Expect{Agent: "triage"}, 0, true)
	check("agent not expected", AgentScorer{}, Expect{}, 0, false)
	check("limits kept", LimitsScorer{}, Expect{Limits: &Limits{CostUSD: 0.01, Tokens: 1100, Steps: 3, Latency: Duration(3 * time.Second)}}, 1, true)
	check("two of four limits crossed", LimitsScorer{}, Expect{Limits: &Limits{CostUSD: 0.001, Tokens: 1000, Steps: 3, Latency: Duration(3 * time.Second)}}, 0.5, true)
	check("tool error", ToolErrorScorer{}, Expect{NoToolErrors: true}, 0, true)
	check("tool errors not checked", ToolErrorScorer{}, Expect{}, 0, false)
	s, ok := DriftScorer{}.Score(ctx, &Input{Expect: &Expect{}, Got: got, Drift: []string{"call 1: system prompt changed"}})
	if !ok || s.Value != 0 || !strings.Contains(s.Detail, "system prompt") {
		t.Errorf("drift: %v %v %q", s.Value, ok, s.Detail)
	}
	if _, ok := (DriftScorer{}).Score(ctx, &Input{Expect: &Expect{}, Got: got}); ok {
		t.Error("drift applies to a live run")
	}
}

// TestCaseScoreIsMeanOverTurns: a case's value is the mean of its turns'
// (ADK's average), held to the threshold; thresholds come from the
// options, then the case, then the set, then the scorer.
func TestCaseScoreIsMeanOverTurns(t *testing.T) {
	c := &Case{ID: "c", Turns: []Turn{
		{Expect: Expect{Trajectory: &Trajectory{Calls: want("a")}}},
		{Expect: Expect{Trajectory: &Trajectory{Calls: want("b")}}},
	}}
	run := &RunReport{Turns: []Observed{{Calls: calls("a")}, {Calls: calls("x")}}}
	set := &Set{Thresholds: map[string]float64{ScoreTrajectory: 0.5}}
	scores := score(context.Background(), set, c, run, &Options{Scorers: []Scorer{TrajectoryScorer{}}})
	if len(scores) != 1 || scores[0].Value != 0.5 || !scores[0].Pass || scores[0].Threshold != 0.5 {
		t.Fatalf("scores %+v", scores)
	}
	c.Thresholds = map[string]float64{ScoreTrajectory: 0.6}
	scores = score(context.Background(), set, c, run, &Options{Scorers: []Scorer{TrajectoryScorer{}}})
	if scores[0].Pass {
		t.Errorf("the case's threshold 0.6 did not win: %+v", scores[0])
	}
	if !strings.Contains(scores[0].Detail, "turn 2") {
		t.Errorf("detail %q does not name the turn", scores[0].Detail)
	}
}
