package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/agcore/agcore/llm"
)

// Version is the record format's version, the header's "agcore_record".
// A reader refuses a record of a higher version.
const Version = 1

// Record is a recorded run: a header, then the turns, model calls and tool
// results in the order they happened.
//
// On disk it is JSON Lines: the first line is the [Header]; every other
// line is an object whose "type" says what it holds:
//
//	{"agcore_record":1,"agcore":"v0.3.0","provider":"openai","model":"gpt-4o",...}
//	{"type":"turn","n":1,"session":"s1","input":[MESSAGE...],"history":[MESSAGE...]}
//	{"type":"call","n":1,"turn":1,"request":{...},"response":{...}}
//	{"type":"tool","turn":1,"id":"call_1","name":"grep","input":{...},"output":"...","is_error":false}
//	{"type":"call","n":2,"turn":1,"request":{"base":1,"keep":2,"messages":[...]},"error":{"kind":"rate_limited",...}}
//
// Messages are in llm's storage JSON (thinking signatures, Gemini thought
// signatures, tool ids and extension blocks round-trip unchanged). A
// request that starts with messages of an earlier call names that call
// ("base") and how many of its messages it keeps ("keep"), then lists only
// the rest, so a record grows with the conversation, not with its square.
// Unknown fields and line types are ignored, so a newer writer's additions
// do not stop an older reader of the same version.
type Record struct {
	Header Header
	Turns  []Turn
	Calls  []Call
	Tools  []ToolResult
}

// Header is what a record needs to be re-run and understood: who wrote it,
// against which model, with which instructions and tools.
type Header struct {
	// Version is the format's version (Version when written by this
	// package).
	Version int `json:"agcore_record"`
	// Agcore is the version of agcore that wrote the record.
	Agcore string `json:"agcore,omitempty"`
	// Created is when the recording started.
	Created time.Time `json:"created,omitzero"`
	// Provider and Model name the model that answered; ContextWindow and
	// MaxOutputTokens are what was known of it (a replay's budget policy
	// sees the same limits unless told otherwise).
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	ContextWindow   int    `json:"context_window,omitempty"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
	// Instructions are the agent's instructions and Tools the names of the
	// tools it offered, for people reading the record (the requests hold
	// what was sent).
	Instructions string   `json:"instructions,omitempty"`
	Tools        []string `json:"tools,omitempty"`
	// Meta holds what the writer wants kept (the CLI: its settings that
	// shape requests).
	Meta map[string]string `json:"meta,omitempty"`
}

// Info returns the header's model as an llm.ModelInfo.
func (h Header) Info() llm.ModelInfo {
	return llm.ModelInfo{Provider: h.Provider, Name: h.Model, ContextWindow: h.ContextWindow, MaxOutputTokens: h.MaxOutputTokens}
}

// Turn is one run of the agent: the caller's messages and, for the first
// turn of a session in the record, the session's history as the run's
// first request sent it (what a replay starts that session from).
type Turn struct {
	N       int           // from 1
	Session string        // the session's id, "" for none
	Input   []llm.Message // the caller's messages
	History []llm.Message // the history before Input, on a session's first turn
}

// Call is one model call: the request as sent and its response, or the
// error it ended with (after retries).
type Call struct {
	N        int // from 1, in the order the calls were made
	Turn     int // the turn it belongs to; 0 when no turn was marked
	Request  *llm.Request
	Response *llm.Response // nil when Err is set
	Err      *llm.Error
}

// ToolResult is one tool call's result as the model read it (before the
// invoker's length cut).
type ToolResult struct {
	Turn    int
	ID      string // the tool_call_id
	Name    string
	Input   json.RawMessage
	Output  string
	IsError bool
}

// ErrFormat is wrapped by the errors of Parse for a record that is not
// one.
var ErrFormat = errors.New("replay: not a valid record")

// The JSON forms of the lines.

type turnJSON struct {
	Type    string        `json:"type"`
	N       int           `json:"n"`
	Session string        `json:"session,omitempty"`
	Input   []llm.Message `json:"input"`
	History []llm.Message `json:"history,omitempty"`
}

type callJSON struct {
	Type     string        `json:"type"`
	N        int           `json:"n"`
	Turn     int           `json:"turn,omitempty"`
	Request  *requestJSON  `json:"request"`
	Response *responseJSON `json:"response,omitempty"`
	Error    *errorJSON    `json:"error,omitempty"`
}

type toolJSON struct {
	Type    string          `json:"type"`
	Turn    int             `json:"turn,omitempty"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input,omitempty"`
	Output  string          `json:"output"`
	IsError bool            `json:"is_error,omitempty"`
}

type requestJSON struct {
	Base           int                        `json:"base,omitempty"`
	Keep           int                        `json:"keep,omitempty"`
	Model          string                     `json:"model,omitempty"`
	Messages       []llm.Message              `json:"messages"`
	Tools          []toolDefJSON              `json:"tools,omitempty"`
	ToolChoice     *toolChoiceJSON            `json:"tool_choice,omitempty"`
	MaxTokens      int                        `json:"max_tokens,omitempty"`
	Temperature    *float64                   `json:"temperature,omitempty"`
	TopP           *float64                   `json:"top_p,omitempty"`
	Stop           []string                   `json:"stop,omitempty"`
	ResponseFormat *responseFormatJSON        `json:"response_format,omitempty"`
	Reasoning      *reasoningJSON             `json:"reasoning,omitempty"`
	Extra          map[string]json.RawMessage `json:"extra,omitempty"`
	Metadata       map[string]string          `json:"metadata,omitempty"`
}

type toolDefJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type toolChoiceJSON struct {
	Mode string `json:"mode"`
	Name string `json:"name,omitempty"`
}

type responseFormatJSON struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

type reasoningJSON struct {
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Effort       string `json:"effort,omitempty"`
}

type responseJSON struct {
	ID           string           `json:"id,omitempty"`
	Model        string           `json:"model,omitempty"`
	Message      llm.Message      `json:"message"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	Usage        llm.Usage        `json:"usage"`
}

type errorJSON struct {
	Kind       string `json:"kind"`
	Provider   string `json:"provider,omitempty"`
	Status     int    `json:"status,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
}

// marshalRequest returns the neutral JSON of req: the form a record keeps
// (every message whole), for comparing requests byte for byte.
func marshalRequest(req *llm.Request) ([]byte, error) {
	return json.Marshal(requestOf(req, nil, 0))
}

// requestOf returns the JSON form of req, its first keep messages left
// out in favour of base.
func requestOf(req *llm.Request, base *int, keep int) *requestJSON {
	j := &requestJSON{
		Model:       req.Model,
		Messages:    req.Messages[keep:],
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Stop:        req.StopSequences,
		Metadata:    req.Metadata,
	}
	if j.Messages == nil {
		j.Messages = []llm.Message{}
	}
	if base != nil && keep > 0 {
		j.Base, j.Keep = *base, keep
	}
	for _, d := range req.Tools {
		j.Tools = append(j.Tools, toolDefJSON{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	if req.ToolChoice != (llm.ToolChoice{}) {
		j.ToolChoice = &toolChoiceJSON{Mode: string(req.ToolChoice.Mode), Name: req.ToolChoice.Name}
		if j.ToolChoice.Mode == "" {
			j.ToolChoice.Mode = "auto"
		}
	}
	if f := req.ResponseFormat; f != nil {
		j.ResponseFormat = &responseFormatJSON{Type: f.Type, Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	if r := req.Reasoning; r != nil {
		j.Reasoning = &reasoningJSON{BudgetTokens: r.BudgetTokens, Effort: r.Effort}
	}
	if len(req.Extra) > 0 {
		j.Extra = make(map[string]json.RawMessage, len(req.Extra))
		for k, v := range req.Extra {
			b, err := json.Marshal(v)
			if err != nil {
				b, _ = json.Marshal(fmt.Sprint(v))
			}
			j.Extra[k] = b
		}
	}
	return j
}

// request rebuilds an llm.Request; prior returns the messages of an
// earlier call.
func (j *requestJSON) request(prior func(n int) ([]llm.Message, bool)) (*llm.Request, error) {
	req := &llm.Request{
		Model:         j.Model,
		MaxTokens:     j.MaxTokens,
		Temperature:   j.Temperature,
		TopP:          j.TopP,
		StopSequences: j.Stop,
		Metadata:      j.Metadata,
	}
	if j.Keep < 0 {
		return nil, fmt.Errorf("%w: negative keep %d", ErrFormat, j.Keep)
	}
	if j.Keep > 0 {
		base, ok := prior(j.Base)
		if !ok {
			return nil, fmt.Errorf("%w: request based on call %d, which comes later or not at all", ErrFormat, j.Base)
		}
		if j.Keep > len(base) {
			return nil, fmt.Errorf("%w: request keeps %d messages of call %d, which has %d", ErrFormat, j.Keep, j.Base, len(base))
		}
		req.Messages = make([]llm.Message, 0, j.Keep+len(j.Messages))
		req.Messages = append(req.Messages, base[:j.Keep]...)
	}
	req.Messages = append(req.Messages, j.Messages...)
	for _, d := range j.Tools {
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	if c := j.ToolChoice; c != nil {
		mode := llm.ToolChoiceMode(c.Mode)
		if mode == "auto" {
			mode = llm.ToolChoiceAuto
		}
		req.ToolChoice = llm.ToolChoice{Mode: mode, Name: c.Name}
	}
	if f := j.ResponseFormat; f != nil {
		req.ResponseFormat = &llm.ResponseFormat{Type: f.Type, Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	if r := j.Reasoning; r != nil {
		req.Reasoning = &llm.Reasoning{BudgetTokens: r.BudgetTokens, Effort: r.Effort}
	}
	if len(j.Extra) > 0 {
		req.Extra = make(map[string]any, len(j.Extra))
		for k, v := range j.Extra {
			req.Extra[k] = v
		}
	}
	return req, nil
}

func responseOf(r *llm.Response) *responseJSON {
	return &responseJSON{ID: r.ID, Model: r.Model, Message: r.Message, FinishReason: r.FinishReason, Usage: r.Usage}
}

func (j *responseJSON) response() *llm.Response {
	return &llm.Response{ID: j.ID, Model: j.Model, Message: j.Message, FinishReason: j.FinishReason, Usage: j.Usage}
}

// errorOf returns the recorded form of err: its *llm.Error, or one of kind
// unknown with err's text.
func errorOf(err error) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		c := *le
		if c.Message == "" && c.Err != nil {
			c.Message = c.Err.Error()
		}
		c.Err = nil
		return &c
	}
	return &llm.Error{Kind: llm.KindUnknown, Message: err.Error()}
}

var kindsByName = func() map[string]llm.ErrorKind {
	m := map[string]llm.ErrorKind{}
	for k := llm.KindUnknown; k <= llm.KindMalformed; k++ {
		m[k.String()] = k
	}
	return m
}()

func errorJSONOf(e *llm.Error) *errorJSON {
	j := &errorJSON{Kind: e.Kind.String(), Provider: e.Provider, Status: e.StatusCode, Code: e.Code, Message: e.Message}
	if e.RetryAfter > 0 {
		j.RetryAfter = e.RetryAfter.String()
	}
	return j
}

func (j *errorJSON) error() *llm.Error {
	e := &llm.Error{Kind: kindsByName[j.Kind], Provider: j.Provider, StatusCode: j.Status, Code: j.Code, Message: j.Message}
	if d, err := time.ParseDuration(j.RetryAfter); err == nil && d > 0 {
		e.RetryAfter = d
	}
	return e
}

// maxLine is the longest line Parse reads (a request with its images).
const maxLine = 256 << 20

// Parse reads a record. It fails, with an error wrapping ErrFormat, on a
// missing or newer header, a line that is not JSON, a request based on a
// call that is not before it, or calls out of order.
func Parse(r io.Reader) (*Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	rec := &Record{}
	lineNo := 0
	msgs := map[int][]llm.Message{}
	prior := func(n int) ([]llm.Message, bool) { m, ok := msgs[n]; return m, ok }
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if lineNo == 1 {
			if err := json.Unmarshal(line, &rec.Header); err != nil {
				return nil, fmt.Errorf("%w: line 1: header: %v", ErrFormat, err)
			}
			switch {
			case rec.Header.Version <= 0:
				return nil, fmt.Errorf("%w: line 1 is not a record header (no agcore_record version)", ErrFormat)
			case rec.Header.Version > Version:
				return nil, fmt.Errorf("%w: record version %d is newer than this reader's %d", ErrFormat, rec.Header.Version, Version)
			}
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, lineNo, err)
		}
		switch kind.Type {
		case "turn":
			var t turnJSON
			if err := json.Unmarshal(line, &t); err != nil {
				return nil, fmt.Errorf("%w: line %d: turn: %v", ErrFormat, lineNo, err)
			}
			if err := roles(lineNo, t.Input, t.History); err != nil {
				return nil, err
			}
			rec.Turns = append(rec.Turns, Turn{N: t.N, Session: t.Session, Input: t.Input, History: t.History})
		case "call":
			var c callJSON
			if err := json.Unmarshal(line, &c); err != nil {
				return nil, fmt.Errorf("%w: line %d: call: %v", ErrFormat, lineNo, err)
			}
			if c.Request == nil {
				return nil, fmt.Errorf("%w: line %d: call %d has no request", ErrFormat, lineNo, c.N)
			}
			if c.N != len(rec.Calls)+1 {
				return nil, fmt.Errorf("%w: line %d: call %d where call %d was expected", ErrFormat, lineNo, c.N, len(rec.Calls)+1)
			}
			req, err := c.Request.request(prior)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			if err := roles(lineNo, req.Messages); err != nil {
				return nil, err
			}
			msgs[c.N] = req.Messages
			call := Call{N: c.N, Turn: c.Turn, Request: req}
			switch {
			case c.Error != nil:
				call.Err = c.Error.error()
			case c.Response != nil:
				call.Response = c.Response.response()
				if err := roles(lineNo, []llm.Message{call.Response.Message}, call.Response.Transcript); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%w: line %d: call %d has neither a response nor an error", ErrFormat, lineNo, c.N)
			}
			rec.Calls = append(rec.Calls, call)
		case "tool":
			var t toolJSON
			if err := json.Unmarshal(line, &t); err != nil {
				return nil, fmt.Errorf("%w: line %d: tool: %v", ErrFormat, lineNo, err)
			}
			rec.Tools = append(rec.Tools, ToolResult{Turn: t.Turn, ID: t.ID, Name: t.Name, Input: t.Input, Output: t.Output, IsError: t.IsError})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if lineNo == 0 {
		return nil, fmt.Errorf("%w: empty", ErrFormat)
	}
	return rec, nil
}

// roles refuses messages without a role: the message model cannot write
// them back (found by FuzzParse).
func roles(lineNo int, lists ...[]llm.Message) error {
	for _, msgs := range lists {
		for i, m := range msgs {
			if m.Role == "" {
				return fmt.Errorf("%w: line %d: message %d has no role", ErrFormat, lineNo, i+1)
			}
		}
	}
	return nil
}

// Load reads the record in the file at path.
func Load(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// WriteTo writes rec in the record format (the lines in the order Turns,
// Calls and Tools interleave by turn: a turn's line, its calls, its tool
// results after the call that asked for them).
func (rec *Record) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	enc := newEncoder(cw)
	if err := enc.header(rec.Header); err != nil {
		return cw.n, err
	}
	turns, tools := rec.Turns, rec.Tools
	for _, c := range rec.Calls {
		for len(turns) > 0 && turns[0].N <= c.Turn {
			if err := enc.turn(turns[0]); err != nil {
				return cw.n, err
			}
			turns = turns[1:]
		}
		// The results of an earlier call's tool calls come before the
		// call that carries them.
		for len(tools) > 0 && carries(c.Request, tools[0].ID) {
			if err := enc.tool(tools[0]); err != nil {
				return cw.n, err
			}
			tools = tools[1:]
		}
		if err := enc.call(c); err != nil {
			return cw.n, err
		}
	}
	for _, t := range turns {
		if err := enc.turn(t); err != nil {
			return cw.n, err
		}
	}
	for _, t := range tools {
		if err := enc.tool(t); err != nil {
			return cw.n, err
		}
	}
	return cw.n, nil
}

// carries reports whether req holds the result of tool call id.
func carries(req *llm.Request, id string) bool {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == llm.RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes the lines of a record, remembering the messages of the
// last calls to share their prefixes.
type encoder struct {
	w      io.Writer
	buf    bytes.Buffer
	recent []recentCall // the last few calls, newest last
}

type recentCall struct {
	n    int
	msgs []llm.Message
}

// shareWindow is how many earlier calls a request may take its first
// messages from.
const shareWindow = 4

func newEncoder(w io.Writer) *encoder { return &encoder{w: w} }

func (e *encoder) line(v any) error {
	e.buf.Reset()
	je := json.NewEncoder(&e.buf)
	je.SetEscapeHTML(false)
	if err := je.Encode(v); err != nil {
		return err
	}
	_, err := e.w.Write(e.buf.Bytes())
	return err
}

func (e *encoder) header(h Header) error {
	if h.Version == 0 {
		h.Version = Version
	}
	return e.line(h)
}

func (e *encoder) turn(t Turn) error {
	in := t.Input
	if in == nil {
		in = []llm.Message{}
	}
	return e.line(turnJSON{Type: "turn", N: t.N, Session: t.Session, Input: in, History: t.History})
}

func (e *encoder) tool(t ToolResult) error {
	return e.line(toolJSON{Type: "tool", Turn: t.Turn, ID: t.ID, Name: t.Name, Input: t.Input, Output: t.Output, IsError: t.IsError})
}

func (e *encoder) call(c Call) error {
	base, keep := 0, 0
	for _, r := range e.recent {
		if k := sharedPrefix(r.msgs, c.Request.Messages); k > keep {
			base, keep = r.n, k
		}
	}
	j := callJSON{Type: "call", N: c.N, Turn: c.Turn, Request: requestOf(c.Request, &base, keep)}
	switch {
	case c.Err != nil:
		j.Error = errorJSONOf(c.Err)
	case c.Response != nil:
		j.Response = responseOf(c.Response)
	default:
		j.Error = &errorJSON{Kind: llm.KindUnknown.String(), Message: "no response recorded"}
	}
	if err := e.line(j); err != nil {
		return err
	}
	e.recent = append(e.recent, recentCall{n: c.N, msgs: c.Request.Messages})
	if len(e.recent) > shareWindow {
		e.recent = e.recent[1:]
	}
	return nil
}

// sharedPrefix returns how many leading messages a and b share.
func sharedPrefix(a, b []llm.Message) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].Equal(b[n]) {
		n++
	}
	return n
}

// agcoreVersion is the version of the agcore module in this binary.
func agcoreVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == "github.com/agcore/agcore" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/agcore/agcore" {
			return d.Version
		}
	}
	return ""
}
