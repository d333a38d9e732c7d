package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// TrajectoryScorer scores Expect.Trajectory as ADK's
// tool_trajectory_avg_score does: 1 for a turn whose calls match the
// expected ones by the match type, else 0; a case's value is the mean over
// its turns. Its metrics are the precision, recall and F1 of the calls
// (matched calls over the calls made, over the calls expected), matched
// in order for EXACT and IN_ORDER, in any order for ANY_ORDER. A turn's
// calls include its sub-agents' and those after a handoff, in the order
// they were made.
type TrajectoryScorer struct{}

// Name is "tool_trajectory_avg_score".
func (TrajectoryScorer) Name() string { return ScoreTrajectory }

// Threshold is 1, ADK's default.
func (TrajectoryScorer) Threshold() float64 { return 1 }

// Score matches one turn's calls.
func (TrajectoryScorer) Score(_ context.Context, in *Input) (Score, bool) {
	t := in.Expect.Trajectory
	if t == nil {
		return Score{}, false
	}
	ok, matched := matchTrajectory(t, in.Got.Calls)
	p, r, f := prf(matched, len(in.Got.Calls), len(t.Calls))
	s := Score{Metrics: map[string]float64{"precision": p, "recall": r, "f1": f}}
	if ok {
		s.Value = 1
	} else {
		s.Detail = fmt.Sprintf("%s: want %s, got %s", orExact(t.Match), listCalls(t.Calls), listGot(in.Got.Calls))
	}
	return s, true
}

func orExact(m MatchType) MatchType {
	if m == "" {
		return Exact
	}
	return m
}

// prf returns precision, recall and F1 of matched calls among got made and
// want expected (1 each when both are empty).
func prf(matched, got, want int) (p, r, f float64) {
	p, r = 1, 1
	if got > 0 {
		p = float64(matched) / float64(got)
	} else if want > 0 {
		p = 0
	}
	if want > 0 {
		r = float64(matched) / float64(want)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return
}

// matchTrajectory reports whether got matches t by its match type (ADK's
// rules: EXACT the same calls in order; IN_ORDER the expected calls in
// order with others between; ANY_ORDER each expected call matched by a
// distinct call), and how many calls matched (for precision and recall).
func matchTrajectory(t *Trajectory, got []ToolCall) (ok bool, matched int) {
	m := &matcher{rule: t.Args, want: t.Calls, got: got, wantV: make([]argVal, len(t.Calls)), gotV: make([]argVal, len(got))}
	switch orExact(t.Match) {
	case AnyOrder:
		used := make([]bool, len(got))
		for i := range t.Calls {
			for j := range got {
				if !used[j] && m.eq(i, j) {
					used[j] = true
					matched++
					break
				}
			}
		}
		return matched == len(t.Calls), matched
	case InOrder:
		// ADK's greedy walk: each expected call is the next call that
		// matches it. When it finds them all, they all match (the longest
		// common subsequence is every expected call); else the LCS counts.
		k := 0
		for j := range got {
			if k < len(t.Calls) && m.eq(k, j) {
				k++
			}
		}
		if k == len(t.Calls) {
			return true, k
		}
		return false, m.lcs()
	default:
		if len(got) == len(t.Calls) {
			i := 0
			for i < len(got) && m.eq(i, i) {
				i++
			}
			if i == len(got) {
				return true, i
			}
		}
		return false, m.lcs()
	}
}

// matcher compares expected and made calls by index, decoding each call's
// arguments at most once and comparing equal bytes without decoding.
type matcher struct {
	rule        ArgRule
	want        []Call
	got         []ToolCall
	wantV, gotV []argVal
}

type argVal struct {
	v       any
	ok, set bool
}

func (a *argVal) get(raw json.RawMessage) (any, bool) {
	if !a.set {
		a.v, a.ok = decode(raw)
		a.set = true
	}
	return a.v, a.ok
}

func (m *matcher) eq(i, j int) bool {
	w, g := &m.want[i], &m.got[j]
	if w.Name != g.Name || (w.Agent != "" && w.Agent != g.Agent) {
		return false
	}
	rule := m.rule
	if w.Rule != "" {
		rule = w.Rule
	}
	if rule == ArgsIgnore || bytes.Equal(w.Args, g.Args) && len(w.Args) > 0 {
		return true // equal bytes match by every rule
	}
	wv, okw := m.wantV[i].get(w.Args)
	gv, okg := m.gotV[j].get(g.Args)
	return argsMatch(wv, okw, gv, okg, w.Args, g.Args, rule)
}

// lcs is the length of the longest common subsequence of the expected and
// the made calls.
func (m *matcher) lcs() int {
	prev := make([]int, len(m.got)+1)
	cur := make([]int, len(m.got)+1)
	for i := range m.want {
		for j := range m.got {
			if m.eq(i, j) {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(m.got)]
}

// callMatches reports whether the call g matches the expected call w:
// the same name, the agent when w names one, and the arguments by w's rule,
// else by rule.
func callMatches(w Call, g ToolCall, rule ArgRule) bool {
	if w.Name != g.Name || (w.Agent != "" && w.Agent != g.Agent) {
		return false
	}
	if w.Rule != "" {
		rule = w.Rule
	}
	return matchArgs(w.Args, g.Args, rule)
}

// matchArgs reports whether the arguments got match want by rule. Absent
// arguments are the empty object.
func matchArgs(want, got json.RawMessage, rule ArgRule) bool {
	if rule == ArgsIgnore {
		return true
	}
	w, okw := decode(want)
	g, okg := decode(got)
	return argsMatch(w, okw, g, okg, want, got, rule)
}

func argsMatch(w any, okw bool, g any, okg bool, want, got json.RawMessage, rule ArgRule) bool {
	if rule == ArgsIgnore {
		return true
	}
	if !okw || !okg {
		return bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got))
	}
	switch rule {
	case ArgsKeys:
		wm, ok1 := w.(map[string]any)
		gm, ok2 := g.(map[string]any)
		if !ok1 || !ok2 {
			return reflect.DeepEqual(w, g)
		}
		for k, v := range wm {
			gv, ok := gm[k]
			if !ok || !reflect.DeepEqual(v, gv) {
				return false
			}
		}
		return true
	case ArgsSubset:
		return subset(w, g)
	default:
		return reflect.DeepEqual(w, g)
	}
}

func decode(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	if v == nil {
		return map[string]any{}, true
	}
	return v, true
}

// subset reports whether w is a JSON subset of g: every key of an object
// present with a subset value, arrays of the same length element by
// element, other values equal.
func subset(w, g any) bool {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range wv {
			x, ok := gv[k]
			if !ok || !subset(v, x) {
				return false
			}
		}
		return true
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			return false
		}
		for i := range wv {
			if !subset(wv[i], gv[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(w, g)
	}
}

func listCalls(cs []Call) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = callString(c.Name, c.Args, c.Agent)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func listGot(cs []ToolCall) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = callString(c.Name, c.Args, c.Agent)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func callString(name string, args json.RawMessage, agent string) string {
	s := name
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "{}" {
		var buf bytes.Buffer
		if json.Compact(&buf, a) == nil {
			a = buf.Bytes()
		}
		s += string(clip(string(a), 60))
	}
	if agent != "" {
		s = agent + ":" + s
	}
	return s
}
