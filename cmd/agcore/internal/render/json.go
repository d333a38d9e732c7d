package render

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
)

// JSON writes a turn as newline-delimited JSON events, one object a line,
// in the agcore --json format:
//
//	{"type":"start","session":"ID","model":"NAME"}
//	{"type":"thinking_delta","text":"..."}
//	{"type":"text_delta","text":"..."}
//	{"type":"tool_call","id":"call_1","name":"read_file","input":{...}}
//	{"type":"tool_result","id":"call_1","name":"read_file","is_error":false,"output":"..."}
//	{"type":"done","finish_reason":"stop","text":"...","usage":{"input_tokens":N,"output_tokens":N,"cached_input_tokens":N},"cost_usd":N,"cost_known":true}
//	{"type":"error","code":"...","message":"..."}
//
// A turn with spending limits has "budget" in its done event: what is left
// of them ({"run":{"cost_usd":N,"tokens":N},"session":{...}}); a turn a
// limit stopped has a done event with finish_reason "budget" (it is
// stored) followed by an error event with the code "budget".
type JSON struct {
	mu    sync.Mutex
	enc   *json.Encoder
	names map[string]string // tool call id → tool name
}

// NewJSON returns a JSON sink writing to w.
func NewJSON(w io.Writer) *JSON {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSON{enc: enc, names: map[string]string{}}
}

type startEvent struct {
	Type    string `json:"type"`
	Session string `json:"session"`
	Model   string `json:"model"`
}

type deltaEvent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolCallEvent struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultEvent struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsError bool   `json:"is_error"`
	Output  string `json:"output"`
}

// UsageJSON is the usage object of the done event.
type UsageJSON struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
}

type doneEvent struct {
	Type         string    `json:"type"`
	FinishReason string    `json:"finish_reason"`
	Text         string    `json:"text"`
	Usage        UsageJSON `json:"usage"`
	CostUSD      float64   `json:"cost_usd"`
	// CostKnown extends the contract: false when the model has no known
	// price, so a cost_usd of 0 is "unknown", not "free".
	CostKnown bool `json:"cost_known"`
	// Citations are the sources the answer cites (llm.Citation's JSON),
	// when there are any.
	Citations []llm.Citation `json:"citations,omitempty"`
	// Budget is what remains of the turn's spending limits (run,
	// session), when it has any.
	Budget *budget.Remaining `json:"budget,omitempty"`
	// Object is run --schema's typed answer, which validates against the
	// schema, when the turn asked for one.
	Object json.RawMessage `json:"object,omitempty"`
}

type errorEvent struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (j *JSON) emit(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(v) // a closed stdout cannot be reported anywhere better
}

// Start implements Sink.
func (j *JSON) Start(session, model string) {
	j.mu.Lock()
	clear(j.names)
	j.mu.Unlock()
	j.emit(startEvent{Type: "start", Session: session, Model: model})
}

// Thinking implements Sink.
func (j *JSON) Thinking(delta string) { j.emit(deltaEvent{Type: "thinking_delta", Text: delta}) }

// Text implements Sink.
func (j *JSON) Text(delta string) { j.emit(deltaEvent{Type: "text_delta", Text: delta}) }

// ToolCall implements Sink. Input is the call's JSON object; arguments that
// are not valid JSON (a model's mistake) are given as a JSON string.
func (j *JSON) ToolCall(call llm.ToolUse) {
	in := call.InputOrEmpty()
	if !json.Valid(in) {
		in, _ = json.Marshal(string(in))
	}
	j.mu.Lock()
	j.names[call.ID] = call.Name
	j.mu.Unlock()
	j.emit(toolCallEvent{Type: "tool_call", ID: call.ID, Name: call.Name, Input: in})
}

// ToolResult implements Sink.
func (j *JSON) ToolResult(m *llm.Message) {
	j.mu.Lock()
	name := j.names[m.ToolCallID]
	j.mu.Unlock()
	j.emit(toolResultEvent{Type: "tool_result", ID: m.ToolCallID, Name: name, IsError: m.IsError, Output: m.Text()})
}

// Retry implements Sink: retries are not events.
func (j *JSON) Retry(int, time.Duration, error) {}

// Done implements Sink. An unknown cost is reported as 0 with cost_known
// false.
func (j *JSON) Done(d Done) {
	cost := d.CostUSD
	if !d.CostKnown {
		cost = 0
	}
	j.emit(doneEvent{
		Type:         "done",
		FinishReason: string(d.FinishReason),
		Text:         d.Text,
		Usage:        UsageJSON{InputTokens: d.Usage.InputTokens, OutputTokens: d.Usage.OutputTokens, CachedInputTokens: d.Usage.CachedInputTokens},
		CostUSD:      cost,
		CostKnown:    d.CostKnown,
		Citations:    d.Citations,
		Budget:       d.Budget,
		Object:       d.Object,
	})
}

// Error implements Sink.
func (j *JSON) Error(code, message string) {
	j.emit(errorEvent{Type: "error", Code: code, Message: message})
}

// Cancelled implements Sink: an error event with the code "cancelled".
func (j *JSON) Cancelled(message string) { j.Error("cancelled", message) }

// Note implements Sink: notes are for people only.
func (j *JSON) Note(string) {}

// Pause implements Sink.
func (j *JSON) Pause() func() { return func() {} }

// Close implements Sink.
func (j *JSON) Close() {}
