package eval

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
)

// Set is an eval set: cases, with the thresholds of its scorers.
type Set struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Thresholds replace the scorers' default thresholds, by scorer name,
	// for every case of the set (a case's own win).
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	Cases      []Case             `json:"cases"`
	// File is the file the set was read from ("" for one built in code).
	File string `json:"-"`
}

// Case is one scenario: user turns run one after the other in one session.
type Case struct {
	ID string `json:"id"`
	// Set is the ID of the set the case belongs to (filled by the readers
	// and by Run).
	Set   string `json:"-"`
	Turns []Turn `json:"turns"`
	// Initial is the session the case starts from; nil starts empty.
	Initial *Initial `json:"initial,omitempty"`
	// RecordFile is a replay record (relative to the set's file) whose
	// calls answer the case's model calls: the case runs offline.
	RecordFile string `json:"record,omitempty"`
	// Record is the record itself (read from RecordFile, or given).
	Record *replay.Record `json:"-"`
	// Thresholds replace the set's and the scorers' thresholds.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
}

// Initial is a case's starting session.
type Initial struct {
	Messages []llm.Message              `json:"messages,omitempty"`
	State    map[string]json.RawMessage `json:"state,omitempty"`
}

// Turn is one user message and what is expected of the agent's answer to
// it.
type Turn struct {
	Input  string `json:"input"`
	Expect Expect `json:"expect,omitzero"`
}

// Expect is what a turn is scored against; each part set makes its scorer
// apply to the turn.
type Expect struct {
	// Trajectory: the tool calls, in order, of every agent of the turn.
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// Answer: checks on the final answer's text.
	Answer *Answer `json:"answer,omitempty"`
	// Agent: the agent that gives the final answer (after handoffs).
	Agent string `json:"agent,omitempty"`
	// Limits: what the turn may spend.
	Limits *Limits `json:"limits,omitempty"`
	// Rubric: statements an LLM judge checks the answer against.
	Rubric []string `json:"rubric,omitempty"`
	// NoToolErrors: every tool call of the turn succeeds.
	NoToolErrors bool `json:"no_tool_errors,omitempty"`
}

// MatchType says how an expected trajectory matches the calls made: ADK's
// three types.
type MatchType string

// The match types.
const (
	// Exact: the same calls, in the same order, nothing more.
	Exact MatchType = "EXACT"
	// InOrder: the expected calls appear in this order; others may come
	// between them.
	InOrder MatchType = "IN_ORDER"
	// AnyOrder: the expected calls all appear, in any order; others may
	// too.
	AnyOrder MatchType = "ANY_ORDER"
)

// ArgRule says how an expected call's arguments match a call's.
type ArgRule string

// The argument rules.
const (
	// ArgsExact: the same JSON value (key order and number spelling do not
	// matter).
	ArgsExact ArgRule = "exact"
	// ArgsIgnore: any arguments.
	ArgsIgnore ArgRule = "ignore"
	// ArgsKeys: only the keys the expected arguments list are compared,
	// each value exactly; other keys of the call are ignored.
	ArgsKeys ArgRule = "keys"
	// ArgsSubset: the expected arguments are a JSON subset of the call's:
	// objects recursively by the expected keys, arrays element by element.
	ArgsSubset ArgRule = "subset"
)

// Trajectory is an expected tool trajectory.
type Trajectory struct {
	Calls []Call    `json:"calls"`
	Match MatchType `json:"match,omitempty"` // "" is Exact
	Args  ArgRule   `json:"args,omitempty"`  // "" is ArgsExact
}

// Call is an expected tool call.
type Call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// Agent, when set, is the agent that must make the call: a sub-agent
	// (agent.AsTool) for its own calls, the agent handed to after a
	// handoff.
	Agent string `json:"agent,omitempty"`
	// Rule replaces the trajectory's argument rule for this call.
	Rule ArgRule `json:"args_rule,omitempty"`
}

// Answer are checks on a turn's final answer. Each set field is one check;
// the answer scorer's value is the share of checks passed.
type Answer struct {
	Exact    *string  `json:"exact,omitempty"`
	Contains []string `json:"contains,omitempty"`
	Regexp   string   `json:"regexp,omitempty"`
	// Reference is the answer ROUGE-1 compares with (the
	// response_match_score scorer, as ADK computes it).
	Reference *string `json:"reference,omitempty"`
	// Schema: the answer is JSON that validates against this JSON Schema.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Fields: the answer is a JSON object whose fields equal these.
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
}

// Limits bound what one turn spends; zero fields are not checked.
type Limits struct {
	CostUSD float64  `json:"cost_usd,omitempty"`
	Tokens  int      `json:"tokens,omitempty"`  // input + output, sub-agents included
	Steps   int      `json:"steps,omitempty"`   // model calls, sub-agents' included
	Latency Duration `json:"latency,omitempty"` // wall time of the turn
}

// Duration is a time.Duration written in JSON as Go writes it ("1.5s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a string ("2s") or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a duration is a string like \"2s\" or a number of seconds")
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

// validMatch returns m's canonical form ("in-order" is IN_ORDER, as ADK
// reads it), or an error.
func validMatch(m MatchType) (MatchType, error) {
	// ADK's coercion: trimmed, upper case, "-" and " " as "_".
	norm := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToUpper(strings.TrimSpace(string(m))))
	switch MatchType(norm) {
	case "", Exact:
		return Exact, nil
	case InOrder:
		return InOrder, nil
	case AnyOrder:
		return AnyOrder, nil
	}
	return "", fmt.Errorf("%q is not a match type (EXACT, IN_ORDER, ANY_ORDER)", string(m))
}

func validRule(r ArgRule) (ArgRule, error) {
	switch r {
	case "", ArgsExact:
		return ArgsExact, nil
	case ArgsIgnore, ArgsKeys, ArgsSubset:
		return r, nil
	}
	return "", fmt.Errorf("%q is not an argument rule (exact, ignore, keys, subset)", string(r))
}

// Check reports the first thing wrong with the set, naming the field
// (cases[2].turns[0].expect.trajectory.match): a set without cases, a
// case without an id or
// turns, two cases with one id, a match type or argument rule that does
// not exist, arguments or a schema that are not JSON, a regular expression
// that does not compile.
func (s *Set) Check() error {
	if len(s.Cases) == 0 {
		return &FormatError{File: s.File, Field: "cases", Problem: "the set has no case: nothing would pass or fail"}
	}
	seen := map[string]bool{}
	for i := range s.Cases {
		c := &s.Cases[i]
		at := fmt.Sprintf("cases[%d]", i)
		if c.ID == "" {
			return &FormatError{File: s.File, Field: at + ".id", Problem: "missing"}
		}
		if seen[c.ID] {
			return &FormatError{File: s.File, Field: at + ".id", Problem: fmt.Sprintf("%q is the id of an earlier case", c.ID)}
		}
		seen[c.ID] = true
		if len(c.Turns) == 0 {
			return &FormatError{File: s.File, Field: at + ".turns", Problem: "a case needs at least one turn"}
		}
		for j := range c.Turns {
			if err := checkExpect(&c.Turns[j].Expect); err != nil {
				err.File = s.File
				err.Field = fmt.Sprintf("%s.turns[%d].expect.%s", at, j, err.Field)
				return err
			}
		}
	}
	return nil
}

func checkExpect(e *Expect) *FormatError {
	if t := e.Trajectory; t != nil {
		var err error
		if t.Match, err = validMatch(t.Match); err != nil {
			return &FormatError{Field: "trajectory.match", Problem: err.Error()}
		}
		if t.Args, err = validRule(t.Args); err != nil {
			return &FormatError{Field: "trajectory.args", Problem: err.Error()}
		}
		for k := range t.Calls {
			c := &t.Calls[k]
			if c.Name == "" {
				return &FormatError{Field: fmt.Sprintf("trajectory.calls[%d].name", k), Problem: "missing"}
			}
			if len(c.Args) > 0 && !json.Valid(c.Args) {
				return &FormatError{Field: fmt.Sprintf("trajectory.calls[%d].args", k), Problem: "not JSON"}
			}
			if c.Rule != "" {
				if c.Rule, err = validRule(c.Rule); err != nil {
					return &FormatError{Field: fmt.Sprintf("trajectory.calls[%d].args_rule", k), Problem: err.Error()}
				}
			}
		}
	}
	if a := e.Answer; a != nil {
		if a.Regexp != "" {
			if _, err := compileRegexp(a.Regexp); err != nil {
				return &FormatError{Field: "answer.regexp", Problem: err.Error()}
			}
		}
		if len(a.Schema) > 0 {
			if _, err := compileSchema(a.Schema); err != nil {
				return &FormatError{Field: "answer.schema", Problem: err.Error()}
			}
		}
	}
	if l := e.Limits; l != nil && (l.CostUSD < 0 || l.Tokens < 0 || l.Steps < 0 || l.Latency < 0) {
		return &FormatError{Field: "limits", Problem: "a limit cannot be negative"}
	}
	return nil
}

// FormatError is a set, config or report that cannot be read: the file,
// the field (a JSON path) and what is wrong, in one line.
type FormatError struct {
	File    string
	Field   string
	Problem string
}

// Error is "FILE: FIELD: PROBLEM".
func (e *FormatError) Error() string {
	var sb strings.Builder
	if e.File != "" {
		sb.WriteString(e.File)
		sb.WriteString(": ")
	}
	if e.Field != "" {
		sb.WriteString(oneLine(e.Field)) // a field's path holds the file's own keys
		sb.WriteString(": ")
	}
	sb.WriteString(oneLine(e.Problem))
	return sb.String()
}

// oneLine replaces the control characters of s (line breaks among them)
// with spaces: an error is one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
