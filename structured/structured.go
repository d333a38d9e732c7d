package structured

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// Mode is how the answer is asked for.
type Mode uint8

// Modes. The zero value, Auto, picks from the model's
// llm.ModelInfo.Structured.
const (
	// Auto: Native when the model's Info says its API has a native mode
	// (llm.StructuredSchema or llm.StructuredStrict), else Tool.
	Auto Mode = iota
	// Native: Request.ResponseFormat json_schema: OpenAI's strict
	// response_format and text.format (with the schema made
	// strict-compatible), Anthropic's output_config.format, Gemini's
	// responseJsonSchema, a compatible server's json_schema.
	Native
	// Tool: a generated tool (ToolName) whose arguments are the answer,
	// offered alongside the agent's tools; the model must call a tool on
	// its first step, and a valid call ends the turn.
	Tool
	// Prompted: no native mode and no tool: the schema is put in the last
	// user message and the answer is read from the text (a Markdown fence
	// around it is tolerated).
	Prompted
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Native:
		return "native"
	case Tool:
		return "tool"
	case Prompted:
		return "prompted"
	}
	return "auto"
}

// ToolName is the name of the forced answer tool (Mode Tool).
const ToolName = "final_answer"

// DefaultRepairs is how many repair turns a run gets when Options.Repairs
// is 0: one.
const DefaultRepairs = 1

// Options adjust a typed run. The zero value (or nil) is usable: Auto mode,
// the schema of T, one repair turn.
type Options struct {
	// Run are the agent's run options (session, tools, instructions, ...);
	// ResponseFormat and ToolChoice are set by the typed run.
	Run *agent.RunOptions
	// Mode picks how the answer is asked for; Auto by default.
	Mode Mode
	// Name names the schema (response_format's name); default the Go
	// type's name.
	Name string
	// Description is the forced answer tool's description (Mode Tool).
	Description string
	// ToolName names the forced answer tool (Mode Tool); default ToolName.
	ToolName string
	// Schema, when set, is the JSON Schema sent and validated instead of
	// the one made from T (an object schema; T must decode it:
	// json.RawMessage, map[string]any or a matching struct).
	Schema json.RawMessage
	// Repairs bounds the repair turns: after an answer that is not JSON or
	// does not validate, the model is told what failed and answers again,
	// at most Repairs times. 0 means DefaultRepairs; negative means none.
	Repairs int
	// OnUpdate, when set, receives every update of the agent's runs (text,
	// tool calls and results, usage, finish), as they arrive.
	OnUpdate func(agent.Update)
}

// Run runs one turn of a and returns its answer decoded into T. The
// schema comes from T (github.com/google/jsonschema-go's rules, as for
// typed tools: json tags, omitempty fields optional, agcore's enum tag) or
// from Options.Schema. Tools run first, as in any turn; the schema applies
// to the final answer. The answer is validated once against the schema
// that was sent; an answer that is not JSON or does not validate gets the
// model a repair turn (Options.Repairs) telling it what failed. The error
// is a *[Error] when no valid answer came (errors.Is with ErrParse,
// ErrSchema, ErrRefusal, ErrTruncated, ErrNoAnswer), else the run's.
//
// The Response is the last run's, with Usage and CostUSD summed over
// every run (repairs included). With a session (RunOptions.SessionID with
// a store, or RunOptions.Session), each repair turn is stored as a turn of
// its own after the one it repairs.
func Run[T any](ctx context.Context, a *agent.Agent, msgs []llm.Message, opts *Options) (T, *agent.Response, error) {
	var zero T
	c, err := newCall[T](a, msgs, opts)
	if err != nil {
		return zero, nil, err
	}
	for {
		resp, err := c.run(ctx, nil)
		if err != nil {
			return zero, resp, err
		}
		raw, aerr := c.answer(resp)
		if aerr == nil {
			var v T
			if v, aerr = decode[T](raw, c.attempts); aerr == nil {
				return v, c.total(resp), nil
			}
		}
		if !c.retry(resp, aerr) {
			return zero, c.total(resp), aerr
		}
	}
}

// call is one typed run: its schema, mode and the state of its attempts.
type call struct {
	a        *agent.Agent
	c        *compiled
	f        *form // the form sent and validated against
	mode     Mode
	strict   bool
	opts     Options
	run0     agent.RunOptions
	msgs     []llm.Message
	runOpts  *agent.RunOptions
	repairs  int
	attempts int
	answerer *answerTool
	sum      llm.Usage
	cost     float64
	known    bool
	runs     int
}

func newCall[T any](a *agent.Agent, msgs []llm.Message, opts *Options) (*call, error) {
	if a == nil {
		return nil, agent.ErrNoModel
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := compile(reflect.TypeFor[T](), o.Schema, o.Name, tool.SchemaFor[T])
	if err != nil {
		return nil, err
	}
	k := &call{a: a, c: c, opts: o, repairs: o.Repairs, msgs: msgs}
	if k.repairs == 0 {
		k.repairs = DefaultRepairs
	} else if k.repairs < 0 {
		k.repairs = 0
	}
	if o.Run != nil {
		k.run0 = *o.Run
	}
	native := a.Info().Structured
	k.mode = o.Mode
	if k.mode == Auto {
		k.mode = Tool
		if native != llm.StructuredNone {
			k.mode = Native
		}
	}
	k.f = &c.plain
	if k.mode == Native && native == llm.StructuredStrict && c.strict != nil {
		k.f, k.strict = c.strict, true
	}
	ro := k.run0
	switch k.mode {
	case Native:
		ro.ResponseFormat = &llm.ResponseFormat{Type: "json_schema", Name: c.name, Schema: k.f.raw, Strict: k.strict}
	case Tool:
		k.answerer = &answerTool{call: k, desc: o.Description, name: k.toolName()}
		ro.Tools = append(append([]tool.Tool(nil), ro.Tools...), k.answerer)
		ro.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceRequired}
		if len(a.Tools()) == 0 && len(k.run0.Tools) == 0 && len(k.run0.Declared) == 0 {
			ro.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: k.toolName()}
		}
	case Prompted:
		k.msgs = withInstruction(msgs, prompt(c.name, k.f.raw))
	default:
		return nil, fmt.Errorf("structured: unknown mode %d", k.mode)
	}
	k.runOpts = &ro
	return k, nil
}

// run makes one agent run: the first, or a repair. each, when not nil,
// sees every update.
func (k *call) run(ctx context.Context, each func(agent.Update) bool) (*agent.Response, error) {
	if k.answerer != nil {
		k.answerer.reset()
	}
	st := k.a.RunStream(ctx, k.msgs, k.runOpts)
	if k.opts.OnUpdate != nil || each != nil {
		for u, err := range st.Updates() {
			if err != nil {
				break
			}
			if k.opts.OnUpdate != nil {
				k.opts.OnUpdate(u)
			}
			if each != nil && !each(u) {
				break
			}
		}
	}
	resp, err := st.Wait()
	k.runs++
	if resp != nil {
		k.sum.Add(resp.Usage)
		k.cost += resp.CostUSD
		k.known = (k.runs == 1 || k.known) && resp.CostKnown
	}
	var serr *Error
	if err != nil && errors.As(err, &serr) {
		return resp, serr // the answer tool gave up: the repairs are spent
	}
	return resp, err
}

// total returns resp with the usage and cost of every run.
func (k *call) total(resp *agent.Response) *agent.Response {
	if resp == nil || k.runs <= 1 {
		return resp
	}
	r := *resp
	r.Usage, r.CostUSD, r.CostKnown = k.sum, k.cost, k.known
	return &r
}

// answer returns the run's valid answer, or why there is none.
func (k *call) answer(resp *agent.Response) (json.RawMessage, *Error) {
	if k.answerer != nil {
		if raw := k.answerer.answer(); raw != nil {
			return raw, nil
		}
	}
	text := resp.Text()
	switch resp.FinishReason {
	case llm.FinishRefusal, llm.FinishContentFilter:
		k.attempts++
		return nil, &Error{Kind: ErrRefusal, Reason: text, Raw: text, Attempts: k.attempts}
	case llm.FinishLength:
		k.attempts++
		return nil, &Error{Kind: ErrTruncated, Raw: text, Attempts: k.attempts}
	}
	raw := extractJSON(text)
	if raw == nil {
		k.attempts++
		reason := "the answer holds no JSON object"
		if k.mode == Tool {
			reason = "the model did not call " + k.toolName()
		}
		if resp.FinishReason == llm.FinishMaxSteps {
			reason = "the turn hit its step limit"
		}
		return nil, &Error{Kind: ErrNoAnswer, Reason: reason, Raw: text, Attempts: k.attempts}
	}
	k.attempts++
	if err := k.f.validate(raw); err != nil {
		err.Attempts = k.attempts
		return nil, err
	}
	return raw, nil
}

// retry prepares the repair turn after a failed answer; it reports false
// when the failure is not one to repair or the repairs are spent.
func (k *call) retry(resp *agent.Response, e *Error) bool {
	if k.attempts > k.repairs || e.Kind == ErrRefusal || e.Kind == ErrTruncated || resp.FinishReason == llm.FinishMaxSteps {
		return false
	}
	var text string
	ro := *k.runOpts
	switch {
	case e.Kind == ErrNoAnswer && k.mode == Tool:
		text = fmt.Sprintf("You did not call the %s tool. Call it now, with your final answer as its arguments.", k.toolName())
		ro.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: k.toolName()}
	case k.mode == Tool:
		text = fmt.Sprintf("Your answer is not valid: %s. Call the %s tool again with arguments that validate against its schema.", e.Error(), k.toolName())
		ro.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: k.toolName()}
	default:
		text = fmt.Sprintf("Your answer failed validation: %s. Answer again with only one JSON object that validates against the schema %q.", e.Error(), k.c.name)
	}
	repair := llm.UserText(text)
	if k.continues() {
		k.msgs = []llm.Message{repair}
	} else {
		next := make([]llm.Message, 0, len(k.msgs)+len(resp.Messages)+1)
		next = append(append(append(next, k.msgs...), resp.Messages...), repair)
		k.msgs = next
	}
	k.runOpts = &ro
	return true
}

func (k *call) toolName() string {
	if k.opts.ToolName != "" {
		return k.opts.ToolName
	}
	return ToolName
}

// continues reports whether the runs continue a session that keeps the
// turns, so a repair sends only its own message.
func (k *call) continues() bool {
	ro := k.run0
	return ro.Session != nil || (ro.SessionID != "" && (ro.Store != nil || k.a.Store() != nil))
}

// decode decodes a valid answer into T. A value the schema allows that T
// cannot hold (1e2 for an int field, a number too large) is a schema error
// like any other: the model is told and may repair it.
func decode[T any](raw json.RawMessage, attempts int) (T, *Error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		var zero T
		reason := err.Error()
		path := ""
		var ue *json.UnmarshalTypeError
		if errors.As(err, &ue) {
			reason = fmt.Sprintf("%s cannot hold the %s value", ue.Type, ue.Value)
			if ue.Field != "" {
				path = "/" + strings.ReplaceAll(ue.Field, ".", "/")
			}
		}
		return zero, &Error{Kind: ErrSchema, Path: path, Reason: reason, Raw: string(raw), Attempts: attempts}
	}
	return v, nil
}

// validate checks raw against the form: the one validation of an answer.
func (f *form) validate(raw json.RawMessage) *Error {
	if validated != nil {
		validated()
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		e := &Error{Kind: ErrParse, Reason: err.Error(), Raw: string(raw)}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			e.Path = fmt.Sprintf("@%d", se.Offset)
		}
		return e
	}
	if _, ok := v.(map[string]any); !ok {
		return &Error{Kind: ErrSchema, Reason: "the answer must be a JSON object", Raw: string(raw)}
	}
	if err := f.resolved.Validate(v); err != nil {
		path, reason := schemaPath(err.Error())
		return &Error{Kind: ErrSchema, Path: path, Reason: reason, Raw: string(raw)}
	}
	return nil
}

// extractJSON returns the JSON object in an answer's text: the text
// itself, trimmed; inside a Markdown fence; or from its first '{' to its
// last '}'. It returns nil when there is no '{'.
func extractJSON(text string) json.RawMessage {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if !strings.HasPrefix(s, "{") {
		i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
		if i < 0 {
			return nil
		}
		if j > i {
			s = s[i : j+1]
		} else {
			s = s[i:]
		}
	}
	return json.RawMessage(s)
}

// prompt is the instruction of Mode Prompted.
func prompt(name string, schema json.RawMessage) string {
	return fmt.Sprintf("Answer with only one JSON object, no other text, that validates against this JSON Schema (%s):\n%s", name, schema)
}

// withInstruction returns msgs with text added to the last user message
// (a copy: msgs is not changed), or a new user message when there is none.
func withInstruction(msgs []llm.Message, text string) []llm.Message {
	out := append([]llm.Message(nil), msgs...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == llm.RoleUser {
			m := out[i]
			m.Content = append(append([]llm.Block(nil), m.Content...), llm.Text{Text: "\n\n" + text})
			out[i] = m
			return out
		}
	}
	return append(out, llm.UserText(text))
}

// answerTool is the forced answer tool of Mode Tool: its parameters are
// the schema, its arguments the answer. A valid call ends the turn (it is
// a tool.Final); an invalid one is an error result the model reads (the
// repair turn), until the repairs are spent, when it stops the turn with
// the *Error.
type answerTool struct {
	call *call
	name string
	desc string
	raw  json.RawMessage
}

var _ tool.Final = (*answerTool)(nil)

func (t *answerTool) Name() string { return t.name }

func (t *answerTool) Description() string {
	if t.desc != "" {
		return t.desc
	}
	return "Give your final answer: call this tool once, after any other tools you need, with the answer as its arguments. The turn ends when the answer is accepted."
}

func (t *answerTool) Parameters() json.RawMessage { return t.call.f.raw }

// EndsTurn: a valid answer ends the turn.
func (t *answerTool) EndsTurn() bool { return true }

// Invoke validates the answer. The tool loop calls the tools of one
// answer in parallel; the model is forced to one answer per step only by
// Anthropic, so two calls of a step are serialized here.
func (t *answerTool) Invoke(_ context.Context, args json.RawMessage) (string, error) {
	k := t.call
	answerMu.Lock()
	defer answerMu.Unlock()
	k.attempts++
	if err := k.f.validate(bytes.TrimSpace(args)); err != nil {
		err.Attempts = k.attempts
		if k.attempts > k.repairs {
			return "", tool.Fatal(err)
		}
		return "", fmt.Errorf("%s. Call %s again with arguments that validate against its schema", err.Error(), t.name)
	}
	t.raw = append(json.RawMessage(nil), args...)
	return "Answer recorded.", nil
}

func (t *answerTool) answer() json.RawMessage {
	answerMu.Lock()
	defer answerMu.Unlock()
	return t.raw
}

func (t *answerTool) reset() {
	answerMu.Lock()
	defer answerMu.Unlock()
	t.raw = nil
}

// validated, when set (by tests), is called on each validation.
var validated func()

// answerMu serializes the answer tools' bookkeeping (rare and brief).
var answerMu sync.Mutex

// CheckSchema reports whether schema can be a typed run's
// Options.Schema: a JSON Schema whose root is an object schema, that
// resolves (its $refs found).
func CheckSchema(schema json.RawMessage) error {
	_, err := compile(reflect.TypeFor[json.RawMessage](), schema, "", nil)
	return err
}
