package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ADKConfig is ADK's test_config.json: criteria by metric name, each a
// threshold or a criterion object.
type ADKConfig struct {
	// Thresholds by metric name.
	Thresholds map[string]float64
	// Match is tool_trajectory_avg_score's match type (EXACT by default);
	// IgnoreArgs its ignore_args.
	Match      MatchType
	IgnoreArgs bool
	// Rubric is rubric_based_final_response_quality_v1's rubrics' texts.
	Rubric []string
	// File is where the config was read from.
	File string
}

// ADK metric names agcore scores.
const (
	adkRubric = "rubric_based_final_response_quality_v1"
)

// DefaultADKConfig is ADK's default criteria, used for an ADK set with no
// test_config.json: tool_trajectory_avg_score 1.0, response_match_score
// 0.8.
func DefaultADKConfig() *ADKConfig {
	return &ADKConfig{Thresholds: map[string]float64{ScoreTrajectory: 1, ScoreResponse: 0.8}, Match: Exact}
}

// ParseADKConfig reads ADK's test_config.json: {"criteria": {NAME:
// THRESHOLD or {"threshold": T, "match_type": "IN_ORDER", ...}}} (keys in
// snake_case or camelCase, match types by name or number, as ADK accepts
// them). Metrics agcore does not score (ADK's Vertex AI and LLM-judged
// ones other than the rubric) are refused, naming them: a criterion that
// would be skipped silently is worse than none.
func ParseADKConfig(data []byte, file string) (*ADKConfig, error) {
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, decodeError(file, data, err)
	}
	crit, ok := field(raw, "criteria").(map[string]any)
	if !ok {
		return nil, &FormatError{File: file, Field: "criteria", Problem: "missing or not an object"}
	}
	cfg := &ADKConfig{Thresholds: map[string]float64{}, Match: Exact, File: file}
	for _, name := range slices.Sorted(maps.Keys(crit)) {
		at := "criteria." + name
		var obj map[string]any
		switch v := crit[name].(type) {
		case float64:
			cfg.Thresholds[name] = v
		case map[string]any:
			obj = v
			th, ok := field(v, "threshold").(float64)
			if !ok {
				return nil, &FormatError{File: file, Field: at + ".threshold", Problem: "missing or not a number"}
			}
			cfg.Thresholds[name] = th
		default:
			return nil, &FormatError{File: file, Field: at, Problem: "a threshold is a number or a criterion object"}
		}
		switch name {
		case ScoreTrajectory:
			if obj == nil {
				continue
			}
			if mt := field(obj, "match_type"); mt != nil {
				m, err := adkMatch(mt)
				if err != nil {
					return nil, &FormatError{File: file, Field: at + ".match_type", Problem: err.Error()}
				}
				cfg.Match = m
			}
			if ia, ok := field(obj, "ignore_args").(bool); ok {
				cfg.IgnoreArgs = ia
			}
		case ScoreResponse:
		case adkRubric:
			rubrics, _ := field(obj, "rubrics").([]any)
			if len(rubrics) == 0 {
				return nil, &FormatError{File: file, Field: at + ".rubrics", Problem: "missing: the rubric metric needs rubrics"}
			}
			for i, r := range rubrics {
				text := rubricText(r)
				if text == "" {
					return nil, &FormatError{File: file, Field: fmt.Sprintf("%s.rubrics[%d].rubric_content.text_property", at, i), Problem: "missing"}
				}
				cfg.Rubric = append(cfg.Rubric, text)
			}
		default:
			return nil, &FormatError{File: file, Field: at, Problem: "agcore eval does not score this ADK metric (it scores tool_trajectory_avg_score, response_match_score and rubric_based_final_response_quality_v1)"}
		}
	}
	return cfg, nil
}

func adkMatch(v any) (MatchType, error) {
	switch x := v.(type) {
	case float64:
		switch x {
		case 0:
			return Exact, nil
		case 1:
			return InOrder, nil
		case 2:
			return AnyOrder, nil
		}
		return "", fmt.Errorf("%v is not a match type (0 EXACT, 1 IN_ORDER, 2 ANY_ORDER)", x)
	case string:
		return validMatch(MatchType(x))
	}
	return "", fmt.Errorf("a match type is a name (EXACT, IN_ORDER, ANY_ORDER) or a number")
}

func rubricText(r any) string {
	m, ok := r.(map[string]any)
	if !ok {
		return ""
	}
	c, ok := field(m, "rubric_content").(map[string]any)
	if !ok {
		return ""
	}
	s, _ := field(c, "text_property").(string)
	return s
}

// field returns m's member named snake, or its camelCase form (ADK's
// models accept both).
func field(m map[string]any, snake string) any {
	if m == nil {
		return nil
	}
	if v, ok := m[snake]; ok {
		return v
	}
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return m[strings.Join(parts, "")]
}

// ParseADK reads an ADK eval set (*.evalset.json: eval_set_id, eval_cases
// of eval_id, conversation of invocations with user_content,
// final_response and intermediate_data: tool_uses, or invocation_events
// whose authors mark the agent of each call; session_input.state) or ADK's
// older test file (*.test.json: a list of {query, expected_tool_use:
// [{tool_name, tool_input}], reference}, one case of as many turns), and
// sets the expectations cfg's criteria score, for every invocation, as ADK
// scores them: the trajectory (tool_uses, empty meaning no call) with the
// criterion's match type, the final response as the ROUGE-1 reference,
// the rubric. cfg nil means DefaultADKConfig.
func ParseADK(data []byte, file string, cfg *ADKConfig) (*Set, error) {
	if cfg == nil {
		cfg = DefaultADKConfig()
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, decodeError(file, data, err)
	}
	s := &Set{File: file, Thresholds: maps.Clone(cfg.Thresholds)}
	if cfg.Rubric != nil {
		if _, ok := s.Thresholds[adkRubric]; ok {
			s.Thresholds[ScoreRubric] = s.Thresholds[adkRubric]
			delete(s.Thresholds, adkRubric)
		}
	}
	switch v := raw.(type) {
	case []any:
		s.ID = setID(file)
		c := Case{ID: s.ID, Set: s.ID}
		for i, q := range v {
			at := fmt.Sprintf("[%d]", i)
			m, ok := q.(map[string]any)
			if !ok {
				return nil, &FormatError{File: file, Field: at, Problem: "a query is an object"}
			}
			query, ok := m["query"].(string)
			if !ok {
				return nil, &FormatError{File: file, Field: at + ".query", Problem: "missing or not a string"}
			}
			var calls []Call
			uses, _ := m["expected_tool_use"].([]any)
			for k, u := range uses {
				um, _ := u.(map[string]any)
				name, _ := um["tool_name"].(string)
				if name == "" {
					return nil, &FormatError{File: file, Field: fmt.Sprintf("%s.expected_tool_use[%d].tool_name", at, k), Problem: "missing"}
				}
				args, _ := json.Marshal(um["tool_input"])
				calls = append(calls, Call{Name: name, Args: args})
			}
			ref, _ := m["reference"].(string)
			c.Turns = append(c.Turns, Turn{Input: query, Expect: expectOf(cfg, calls, &ref, nil)})
		}
		s.Cases = []Case{c}
	case map[string]any:
		s.ID, _ = field(v, "eval_set_id").(string)
		if s.ID == "" {
			s.ID = setID(file)
		}
		s.Name, _ = field(v, "name").(string)
		s.Description, _ = field(v, "description").(string)
		cases, ok := field(v, "eval_cases").([]any)
		if !ok {
			return nil, &FormatError{File: file, Field: "eval_cases", Problem: "missing or not a list"}
		}
		for i, rc := range cases {
			at := fmt.Sprintf("eval_cases[%d]", i)
			cm, ok := rc.(map[string]any)
			if !ok {
				return nil, &FormatError{File: file, Field: at, Problem: "an eval case is an object"}
			}
			c, err := adkCase(cm, cfg, file, at)
			if err != nil {
				return nil, err
			}
			c.Set = s.ID
			s.Cases = append(s.Cases, c)
		}
	default:
		return nil, &FormatError{File: file, Problem: "an ADK eval set is an object or a list"}
	}
	if len(s.Cases) == 0 || len(s.Cases[0].Turns) == 0 {
		return nil, &FormatError{File: file, Field: "eval_cases", Problem: "no eval case: nothing would pass or fail (ADK refuses it too)"}
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return s, nil
}

func adkCase(cm map[string]any, cfg *ADKConfig, file, at string) (Case, error) {
	var c Case
	c.ID, _ = field(cm, "eval_id").(string)
	if c.ID == "" {
		return c, &FormatError{File: file, Field: at + ".eval_id", Problem: "missing"}
	}
	conv, ok := field(cm, "conversation").([]any)
	if !ok {
		if field(cm, "conversation_scenario") != nil {
			return c, &FormatError{File: file, Field: at + ".conversation_scenario", Problem: "agcore eval runs static conversations only (no user simulator)"}
		}
		return c, &FormatError{File: file, Field: at + ".conversation", Problem: "missing or not a list"}
	}
	caseRubric := rubricsOf(field(cm, "rubrics"))
	if si, ok := field(cm, "session_input").(map[string]any); ok {
		if st, ok := field(si, "state").(map[string]any); ok && len(st) > 0 {
			c.Initial = &Initial{State: map[string]json.RawMessage{}}
			for k, v := range st {
				b, _ := json.Marshal(v)
				c.Initial.State[k] = b
			}
		}
	}
	for j, ri := range conv {
		iat := fmt.Sprintf("%s.conversation[%d]", at, j)
		inv, ok := ri.(map[string]any)
		if !ok {
			return c, &FormatError{File: file, Field: iat, Problem: "an invocation is an object"}
		}
		uc, ok := field(inv, "user_content").(map[string]any)
		if !ok {
			return c, &FormatError{File: file, Field: iat + ".user_content", Problem: "missing or not a Content object"}
		}
		input := contentText(uc)
		var ref *string
		if fr, ok := field(inv, "final_response").(map[string]any); ok {
			t := contentText(fr)
			ref = &t
		} else {
			empty := ""
			ref = &empty // ADK scores a missing final response as empty text
		}
		calls, err := adkCalls(field(inv, "intermediate_data"), file, iat+".intermediate_data")
		if err != nil {
			return c, err
		}
		rubric := append(append(slices.Clone(cfg.Rubric), caseRubric...), rubricsOf(field(inv, "rubrics"))...)
		c.Turns = append(c.Turns, Turn{Input: input, Expect: expectOf(cfg, calls, ref, rubric)})
	}
	return c, nil
}

func rubricsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, r := range list {
		if t := rubricText(r); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// expectOf is an invocation's expectation under cfg's criteria.
func expectOf(cfg *ADKConfig, calls []Call, ref *string, rubric []string) Expect {
	var e Expect
	if _, ok := cfg.Thresholds[ScoreTrajectory]; ok {
		rule := ArgsExact
		if cfg.IgnoreArgs {
			rule = ArgsIgnore
		}
		if calls == nil {
			calls = []Call{}
		}
		e.Trajectory = &Trajectory{Calls: calls, Match: cfg.Match, Args: rule}
	}
	if _, ok := cfg.Thresholds[ScoreResponse]; ok && ref != nil {
		e.Answer = &Answer{Reference: ref}
	}
	if _, ok := cfg.Thresholds[adkRubric]; ok && len(rubric) > 0 {
		e.Rubric = rubric
	}
	return e
}

// adkCalls reads intermediate_data: tool_uses ({name, args}), or
// invocation_events whose content parts carry function_call, each marked
// with its event's author.
func adkCalls(v any, file, at string) ([]Call, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	var calls []Call
	if uses, ok := field(m, "tool_uses").([]any); ok {
		for k, u := range uses {
			um, _ := u.(map[string]any)
			name, _ := um["name"].(string)
			if name == "" {
				return nil, &FormatError{File: file, Field: fmt.Sprintf("%s.tool_uses[%d].name", at, k), Problem: "missing"}
			}
			calls = append(calls, Call{Name: name, Args: argsOf(um["args"])})
		}
		return calls, nil
	}
	events, _ := field(m, "invocation_events").([]any)
	for _, e := range events {
		em, _ := e.(map[string]any)
		author, _ := em["author"].(string)
		content, _ := em["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			fc, ok := field(pm, "function_call").(map[string]any)
			if !ok {
				continue
			}
			name, _ := fc["name"].(string)
			calls = append(calls, Call{Name: name, Args: argsOf(fc["args"]), Agent: author})
		}
	}
	return calls, nil
}

func argsOf(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// contentText is a genai Content's text: its parts' texts joined by
// newlines, as ADK reads them.
func contentText(c map[string]any) string {
	parts, _ := c["parts"].([]any)
	var texts []string
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		if t, ok := pm["text"].(string); ok && t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n")
}
