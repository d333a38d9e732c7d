package llm

import (
	"context"
	"errors"
	"iter"
)

// Model is a language model: every provider adapter and every middleware
// implements it.
//
// Generate makes one blocking call. Stream makes a streaming call: ranging
// over it yields events as they arrive and always ends, on success, with
// exactly one EventComplete carrying the whole Response, so no caller needs
// to re-assemble deltas. On failure the last item has a non-nil error and no
// EventComplete follows. Breaking out of the range cancels the call and
// releases its resources.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
	// Info describes the model requests go to by default. A zero
	// ContextWindow means unknown.
	Info() ModelInfo
}

// ModelInfo is what is known about a model: its limits and its price.
type ModelInfo struct {
	Provider        string // "openai", "anthropic", "deepseek", ...
	Name            string // model id
	ContextWindow   int    // tokens in + out; 0 = unknown
	MaxOutputTokens int    // most output tokens one call may produce; 0 = unknown
	// ReservedOutput is how many tokens of the window are kept for the
	// answer; 0 means MaxOutputTokens capped at a quarter of the window.
	ReservedOutput int
	// SafetyMargin is kept free for counting error; 0 means 5% of the window.
	SafetyMargin int
	// Price is what Provider charges for the model; nil means the price is
	// unknown, and so is the cost of a call (unknown, not zero). A local
	// server's model costs nothing per token only if its Price says so.
	Price *Price
	// Structured is the native structured-output mode the model's API
	// offers for Request.ResponseFormat json_schema, as its adapter knows
	// it; the zero value (StructuredNone) means none is known, and
	// callers that need a typed answer use a forced tool instead.
	Structured StructuredMode
}

// StructuredMode says how a model's API honours a JSON-schema response
// format (Request.ResponseFormat with Type "json_schema").
type StructuredMode uint8

// Structured-output modes.
const (
	// StructuredNone: no native mode is known; a typed answer goes
	// through a forced tool (package structured does so).
	StructuredNone StructuredMode = iota
	// StructuredSchema: the API constrains the answer to the schema
	// (Anthropic's output_config.format, Gemini's responseJsonSchema, an
	// OpenAI-compatible server's json_schema).
	StructuredSchema
	// StructuredStrict: OpenAI's strict json_schema (Chat Completions
	// response_format, Responses text.format): the schema must be
	// strict-compatible (every property required, additionalProperties
	// false, optional values nullable).
	StructuredStrict
)

// String returns "none", "schema" or "strict".
func (m StructuredMode) String() string {
	switch m {
	case StructuredSchema:
		return "schema"
	case StructuredStrict:
		return "strict"
	}
	return "none"
}

// Known reports whether the context window is known.
func (m ModelInfo) Known() bool { return m.ContextWindow > 0 }

// InputBudget returns how many input tokens a request may hold: the window
// minus the reserved output minus the safety margin. It returns 0 when the
// window is unknown.
func (m ModelInfo) InputBudget() int {
	if m.ContextWindow <= 0 {
		return 0
	}
	reserved := m.ReservedOutput
	if reserved <= 0 {
		reserved = min(m.MaxOutputTokens, m.ContextWindow/4)
	}
	margin := m.SafetyMargin
	if margin <= 0 {
		margin = m.ContextWindow / 20
	}
	b := m.ContextWindow - reserved - margin
	if b < 0 {
		return 0
	}
	return b
}

// Collect ranges over a stream and returns the Response of its
// EventComplete, or the stream's error. It is how a Model may implement
// Generate on top of Stream.
func Collect(seq iter.Seq2[Event, error]) (*Response, error) {
	var resp *Response
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Type == EventComplete {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, IncompleteStream("", "")
	}
	return resp, nil
}

// ErrIncompleteStream is wrapped by errors for streams that ended before
// their final event.
var ErrIncompleteStream = errors.New("stream ended before its final event")

// ErrBudgetExceeded is what a spending limit's error matches (errors.Is):
// a model call was not sent because it could have crossed a limit on
// tokens or cost (package budget's *ExceededError names which). The tool
// loop ends a turn on it like at its step limit, with [FinishBudget].
var ErrBudgetExceeded = errors.New("spending limit reached")

// IncompleteStream returns the error for a stream that ended before its
// completion event: a retryable KindNetwork *Error wrapping
// ErrIncompleteStream. provider names who noticed ("" for a layer above the
// adapters); what, when not empty, names the missing event
// ("message_stop"), else "a completion event".
func IncompleteStream(provider, what string) *Error {
	if what == "" {
		what = "a completion event"
	}
	return &Error{Kind: KindNetwork, Provider: provider, Message: "stream ended without " + what, Err: ErrIncompleteStream}
}

// StreamOf returns a stream that yields the events of resp as if it had been
// streamed: message start, each block with one delta, usage, and the
// completion event. Models without native streaming use it.
func StreamOf(resp *Response) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for _, ev := range Events(resp) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Events returns the event sequence StreamOf yields for resp.
func Events(resp *Response) []Event {
	evs := []Event{{Type: EventMessageStart, Response: &Response{ID: resp.ID, Model: resp.Model}}}
	for i, b := range resp.Message.Content {
		switch b := b.(type) {
		case Text:
			evs = append(evs, Event{Type: EventBlockStart, Index: i, Block: Text{}})
			if b.Text != "" {
				evs = append(evs, Event{Type: EventTextDelta, Index: i, Delta: b.Text})
			}
			for j := range b.Citations {
				evs = append(evs, Event{Type: EventCitation, Index: i, Citation: &b.Citations[j]})
			}
		case Thinking:
			evs = append(evs, Event{Type: EventBlockStart, Index: i, Block: Thinking{Provider: b.Provider, ID: b.ID}})
			if b.Text != "" {
				evs = append(evs, Event{Type: EventThinkingDelta, Index: i, Delta: b.Text})
			}
			if b.Signature != "" {
				evs = append(evs, Event{Type: EventSignatureDelta, Index: i, Delta: b.Signature})
			}
		case ToolUse:
			evs = append(evs, Event{Type: EventBlockStart, Index: i, Block: ToolUse{ID: b.ID, Name: b.Name, Signature: b.Signature, Provider: b.Provider}})
			evs = append(evs, Event{Type: EventToolInputDelta, Index: i, Delta: string(b.InputOrEmpty())})
		default:
			evs = append(evs, Event{Type: EventBlockStart, Index: i, Block: b})
		}
		evs = append(evs, Event{Type: EventBlockStop, Index: i, Block: b})
	}
	u := resp.Usage
	evs = append(evs, Event{Type: EventUsage, Usage: &u})
	evs = append(evs, Event{Type: EventComplete, Response: resp})
	return evs
}
