package eval

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func seedFiles(f *testing.F, paths ...string) {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse: agcore's set format never panics, and refuses what it
// refuses with a one-line *FormatError; what it reads checks.
func FuzzParse(f *testing.F) {
	seedFiles(f, "testdata/weather.eval.json", "../examples/eval/testdata/notes.eval.json")
	f.Add([]byte(`{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"trajectory":{"calls":[{"name":"f","args":{"a":[1,{"b":null}]}}],"match":"in_order"}}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %T %q", err, err)
			}
			return
		}
		if err := s.Check(); err != nil {
			t.Fatalf("a parsed set does not check: %v", err)
		}
	})
}

// FuzzParseADK: ADK's eval sets and test files never panic; errors are
// one-line *FormatErrors.
func FuzzParseADK(f *testing.F) {
	seedFiles(f, "testdata/adk/home.evalset.json", "testdata/adk/old/dice.test.json")
	f.Add([]byte(`{"eval_set_id":"s","eval_cases":[{"eval_id":"e","conversation":[{"user_content":{"parts":[{"text":"hi"}]},"intermediate_data":{"invocation_events":[{"author":"a","content":{"parts":[{"function_call":{"name":"f"}}]}}]}}]}]}`))
	cfg := &ADKConfig{Thresholds: map[string]float64{ScoreTrajectory: 1, ScoreResponse: 0.8, adkRubric: 0.5}, Match: InOrder, Rubric: []string{"polite"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*ADKConfig{nil, cfg} {
			s, err := ParseADK(data, "set.json", c)
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %T %q", err, err)
				}
				continue
			}
			if err := s.Check(); err != nil {
				t.Fatalf("a parsed set does not check: %v", err)
			}
		}
	})
}

// FuzzParseADKConfig: test_config.json never panics.
func FuzzParseADKConfig(f *testing.F) {
	seedFiles(f, "testdata/adk/test_config.json")
	f.Add([]byte(`{"criteria":{"tool_trajectory_avg_score":{"threshold":1,"matchType":2,"ignore_args":true},"rubric_based_final_response_quality_v1":{"threshold":0.5,"rubrics":[{"rubric_content":{"text_property":"x"}}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseADKConfig(data, "test_config.json")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %T %q", err, err)
			}
			return
		}
		if _, err := validMatch(cfg.Match); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRouge1: any two texts score within [0, 1], F symmetric, a text
// against itself 1 unless it has no token.
func FuzzRouge1(f *testing.F) {
	f.Add("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog")
	f.Add("generalizations oscillators", "Ünïcödé 東京 running")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, r, fm := Rouge1(a, b)
		_, _, fm2 := Rouge1(b, a)
		for _, v := range []float64{p, r, fm} {
			if v < 0 || v > 1 || v != v {
				t.Fatalf("Rouge1(%q, %q) = %v %v %v", a, b, p, r, fm)
			}
		}
		if d := fm - fm2; d > 1e-12 || d < -1e-12 {
			t.Fatalf("F not symmetric: %v %v", fm, fm2)
		}
		if _, _, self := Rouge1(a, a); len(rougeTokens(a, latin(a))) > 0 && self != 1 {
			t.Fatalf("Rouge1(%q, itself) = %v", a, self)
		}
	})
}
