package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// AnswerScorer checks the final answer against Expect.Answer's exact text,
// substrings, regular expression, JSON Schema and JSON fields; its value is
// the share of those checks passed (ROUGE is [ResponseScorer]'s).
type AnswerScorer struct{}

// Name is "answer".
func (AnswerScorer) Name() string { return ScoreAnswer }

// Threshold is 1.
func (AnswerScorer) Threshold() float64 { return 1 }

// Score runs the checks.
func (AnswerScorer) Score(_ context.Context, in *Input) (Score, bool) {
	a := in.Expect.Answer
	if a == nil {
		return Score{}, false
	}
	got := in.Got.Answer
	n, passed := 0, 0
	var why []string
	check := func(ok bool, msg func() string) {
		n++
		if ok {
			passed++
		} else {
			why = append(why, msg())
		}
	}
	if a.Exact != nil {
		check(strings.TrimSpace(got) == strings.TrimSpace(*a.Exact), func() string { return fmt.Sprintf("answer %q is not %q", clip(got, 80), clip(*a.Exact, 80)) })
	}
	for _, s := range a.Contains {
		check(strings.Contains(got, s), func() string { return fmt.Sprintf("answer does not contain %q", s) })
	}
	if a.Regexp != "" {
		re, err := compileRegexp(a.Regexp)
		check(err == nil && re.MatchString(got), func() string { return fmt.Sprintf("answer does not match /%s/", a.Regexp) })
	}
	if len(a.Schema) > 0 || len(a.Fields) > 0 {
		v, err := answerJSON(got)
		if len(a.Schema) > 0 {
			switch rs, serr := compileSchema(a.Schema); {
			case err != nil:
				check(false, func() string { return "answer is not JSON: " + err.Error() })
			case serr != nil:
				check(false, func() string { return "schema: " + serr.Error() })
			default:
				verr := rs.Validate(v)
				check(verr == nil, func() string { return "answer does not validate: " + verr.Error() })
			}
		}
		if len(a.Fields) > 0 {
			obj, _ := v.(map[string]any)
			for k, raw := range a.Fields {
				var want any
				_ = json.Unmarshal(raw, &want)
				gv, ok := obj[k]
				check(err == nil && ok && reflect.DeepEqual(gv, want), func() string { return fmt.Sprintf("field %s is %s, want %s", k, jsonString(gv, ok), string(raw)) })
			}
		}
	}
	if n == 0 {
		return Score{}, false
	}
	return Score{Value: float64(passed) / float64(n), Detail: strings.Join(why, "; ")}, true
}

func jsonString(v any, ok bool) string {
	if !ok {
		return "missing"
	}
	b, _ := json.Marshal(v)
	return clip(string(b), 60)
}

// answerJSON decodes an answer as JSON: the whole text, else the text of
// a ``` fenced block.
func answerJSON(s string) (any, error) {
	s = strings.TrimSpace(s)
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return v, nil
	}
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			if json.Unmarshal([]byte(rest[:j]), &v) == nil {
				return v, nil
			}
		}
	}
	return nil, err
}

var (
	reCache     sync.Map // string → *regexp.Regexp
	schemaCache sync.Map // string → *jsonschema.Resolved
)

func compileRegexp(s string) (*regexp.Regexp, error) {
	if v, ok := reCache.Load(s); ok {
		return v.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, err
	}
	reCache.Store(s, re)
	return re, nil
}

func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	key := string(raw)
	if v, ok := schemaCache.Load(key); ok {
		return v.(*jsonschema.Resolved), nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	schemaCache.Store(key, rs)
	return rs, nil
}

// ResponseScorer scores Answer.Reference as ADK's response_match_score:
// the ROUGE-1 F-measure of the answer against the reference ([Rouge1]).
type ResponseScorer struct{}

// Name is "response_match_score".
func (ResponseScorer) Name() string { return ScoreResponse }

// Threshold is 0.8, ADK's default.
func (ResponseScorer) Threshold() float64 { return 0.8 }

// Score is the F-measure.
func (ResponseScorer) Score(_ context.Context, in *Input) (Score, bool) {
	a := in.Expect.Answer
	if a == nil || a.Reference == nil {
		return Score{}, false
	}
	p, r, f := Rouge1(in.Got.Answer, *a.Reference)
	s := Score{Value: f, Metrics: map[string]float64{"precision": p, "recall": r}}
	if f < 1 {
		s.Detail = fmt.Sprintf("ROUGE-1 %.3f: %q against %q", f, clip(in.Got.Answer, 60), clip(*a.Reference, 60))
	}
	return s, true
}
