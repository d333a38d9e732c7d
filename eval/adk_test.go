package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// anyTool takes any object and answers "ok".
type anyTool string

func (n anyTool) Name() string                { return string(n) }
func (n anyTool) Description() string         { return string(n) }
func (n anyTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (n anyTool) Invoke(context.Context, json.RawMessage) (string, error) {
	return "ok", nil
}

// scripted answers by the last user message: the Nth answer after it
// (counting the assistant messages since, less skip) is script[input][N].
func scripted(skip int, script map[string][]llm.Message) llm.Model {
	m := llmtest.New()
	for range 64 {
		m.Add(llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			last, n := "", 0
			for _, msg := range req.Messages {
				switch msg.Role {
				case llm.RoleUser:
					last, n = msg.Text(), 0
				case llm.RoleAssistant:
					n++
				}
			}
			steps := script[last]
			if n-skip < 0 || n-skip >= len(steps) {
				return &llm.Response{Message: llm.AssistantText("(no script)")}, nil
			}
			return &llm.Response{Message: steps[n-skip]}, nil
		}))
	}
	return m
}

func calling(text string, uses ...llm.ToolUse) llm.Message {
	msg := llm.Message{Role: llm.RoleAssistant}
	if text != "" {
		msg.Content = append(msg.Content, llm.Text{Text: text})
	}
	for _, u := range uses {
		msg.Content = append(msg.Content, u)
	}
	return msg
}

func homeAgent(t *testing.T) *agent.Agent {
	weatherModel := scripted(1, map[string][]llm.Message{
		"Weather in Paris?": {calling("", llmtest.Call("w1", "get_weather", `{"city":"Paris"}`)), llm.AssistantText("It is sunny in Paris.")},
	})
	weather, err := agent.New(weatherModel, agent.Config{Name: "weather", Tools: []tool.Tool{anyTool("get_weather")}, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	triageModel := scripted(0, map[string][]llm.Message{
		"Turn off the bedroom light": {
			calling("", llmtest.Call("a1", "get_status", `{"device":"bedroom_light"}`)),
			calling("", llmtest.Call("a2", "set_device_status", `{"status":"off","device":"bedroom_light"}`)),
			llm.AssistantText("I turned the bedroom light off."),
		},
		"And the kitchen?": {
			calling("", llmtest.Call("a3", "set_device_status", `{"device":"kitchen_light","status":"off"}`)),
			llm.AssistantText("The kitchen light is off now."),
		},
		"Weather in Paris?": {calling("", llmtest.Call("h1", "transfer_to_weather", `{}`))},
		"hi":                {llm.AssistantText("Hello! How can I help you?")},
		"Roll a 6 sided die": {
			calling("", llmtest.Call("d1", "roll_die", `{"sides":6}`)),
			llm.AssistantText("You rolled a 4."),
		},
	})
	triage, err := agent.New(triageModel, agent.Config{Name: "triage", Handoffs: []*agent.Agent{weather}, Retry: middleware.RetryConfig{MaxAttempts: 1},
		Tools: []tool.Tool{anyTool("get_status"), anyTool("set_device_status"), anyTool("roll_die")}})
	if err != nil {
		t.Fatal(err)
	}
	return triage
}

// TestADKEvalSet reads an ADK eval set with its test_config.json (the
// trajectory criterion in its object form, IN_ORDER) and scores it as ADK
// would, by hand:
//
// lights_off, invocation 1: get_status then set_device_status matches the
// expected set_device_status IN_ORDER (1); ROUGE-1 of "I turned the
// bedroom light off." against "I have turned off the bedroom light.": 6
// shared tokens (turned → turn), precision 6/6, recall 6/7, F 12/13.
// Invocation 2 lacks the expected get_status (0); its answer is the
// reference (1). Trajectory 0.5 < 1: fails; response (12/13 + 1)/2 =
// 0.9615 ≥ 0.8.
//
// weather (invocation_events, each call marked with its author): the
// handoff and the weather agent's call match (1); "It is sunny in Paris."
// against "Sunny in Paris.": 3 shared of 5 and 3, F 0.75 < 0.8: fails.
func TestADKEvalSet(t *testing.T) {
	set, err := eval.Load("testdata/adk/home.evalset.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if set.ID != "home" || len(set.Cases) != 2 || set.Thresholds[eval.ScoreTrajectory] != 1 || set.Thresholds[eval.ScoreResponse] != 0.8 {
		t.Fatalf("set %+v", set)
	}
	w := set.Cases[1].Turns[0].Expect.Trajectory
	if w.Match != eval.InOrder || w.Calls[0].Agent != "triage" || w.Calls[1].Agent != "weather" {
		t.Fatalf("weather's trajectory %+v", w)
	}
	if string(set.Cases[0].Initial.State["home"]) != `"flat 3"` {
		t.Errorf("session_input.state: %+v", set.Cases[0].Initial)
	}
	rep, err := eval.Run(t.Context(), homeAgent(t), set, &eval.Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{
		"lights_off": {eval.ScoreTrajectory: 0.5, eval.ScoreResponse: (12.0/13 + 1) / 2},
		"weather":    {eval.ScoreTrajectory: 1, eval.ScoreResponse: 0.75},
	}
	for _, c := range rep.Cases {
		if c.Error != "" {
			t.Fatalf("%s: %s", c.ID, c.Error)
		}
		for _, s := range c.Scores {
			if w, ok := want[c.ID][s.Scorer]; !ok || !near(s.Mean, w) {
				t.Errorf("%s %s = %.4f, want %.4f (%s)", c.ID, s.Scorer, s.Mean, w, s.Detail)
			}
		}
		if c.Pass {
			t.Errorf("%s passed", c.ID)
		}
	}
	if rep.Passed != 0 || rep.Failed != 2 {
		t.Errorf("passed %d failed %d", rep.Passed, rep.Failed)
	}
}

// TestADKOldTestFile: the older *.test.json list is one case of as many
// turns, scored with ADK's default criteria when no test_config.json is
// beside it (EXACT, 1.0; ROUGE 0.8). "Hello! How can I help you?" against
// "Hello! How can I help?": F 10/11; the second turn is exact.
func TestADKOldTestFile(t *testing.T) {
	set, err := eval.Load("testdata/adk/old/dice.test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if set.ID != "dice" || len(set.Cases) != 1 || len(set.Cases[0].Turns) != 2 {
		t.Fatalf("set %+v", set)
	}
	rep, err := eval.Run(t.Context(), homeAgent(t), set, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if !c.Pass {
		t.Fatalf("failed: %+v %s", c.Scores, c.Error)
	}
	for _, s := range c.Scores {
		w := map[string]float64{eval.ScoreTrajectory: 1, eval.ScoreResponse: (10.0/11 + 1) / 2}[s.Scorer]
		if !near(s.Mean, w) {
			t.Errorf("%s = %.4f, want %.4f", s.Scorer, s.Mean, w)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-4 && b-a < 1e-4 }

// TestADKConfig: the forms of test_config.json ADK accepts, and what agcore
// refuses in one line naming the field.
func TestADKConfig(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		match      eval.MatchType
		ignore     bool
		err        string
	}{
		{"thresholds", `{"criteria":{"tool_trajectory_avg_score":1.0,"response_match_score":0.5}}`, eval.Exact, false, ""},
		{"object form, snake_case", `{"criteria":{"tool_trajectory_avg_score":{"threshold":0.9,"match_type":"ANY_ORDER","ignore_args":true}}}`, eval.AnyOrder, true, ""},
		{"match type spelled loosely, as ADK coerces it", `{"criteria":{"tool_trajectory_avg_score":{"threshold":1,"match_type":" in-order "}}}`, eval.InOrder, false, ""},
		{"object form, camelCase, by number", `{"criteria":{"tool_trajectory_avg_score":{"threshold":0.9,"matchType":1}}}`, eval.InOrder, false, ""},
		{"rubrics", `{"criteria":{"rubric_based_final_response_quality_v1":{"threshold":0.8,"rubrics":[{"rubricId":"p","rubricContent":{"textProperty":"Be polite."}}]}}}`, eval.Exact, false, ""},
		{"an unknown match type", `{"criteria":{"tool_trajectory_avg_score":{"threshold":1,"match_type":"SOME"}}}`, "", false, `test_config.json: criteria.tool_trajectory_avg_score.match_type: "SOME" is not a match type`},
		{"a metric agcore does not score", `{"criteria":{"safety_v1":0.8}}`, "", false, "test_config.json: criteria.safety_v1: agcore eval does not score"},
		{"no criteria", `{}`, "", false, "test_config.json: criteria: missing"},
		{"a threshold that is not a number", `{"criteria":{"response_match_score":"high"}}`, "", false, "criteria.response_match_score: a threshold is a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := eval.ParseADKConfig([]byte(tc.json), "test_config.json")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want %q in one line", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Match != tc.match || cfg.IgnoreArgs != tc.ignore {
				t.Errorf("match %s ignore %v", cfg.Match, cfg.IgnoreArgs)
			}
		})
	}
}
