package llm

// EventType tells which kind of stream event an Event is.
type EventType uint8

// Stream event types, in the order they may appear within one model call:
// MessageStart, then for each content block BlockStart, deltas, BlockStop,
// then Usage (zero or more), and finally exactly one Complete per stream.
//
// The tool loop adds ToolResult events after a model call whose tool calls it
// ran, and StepComplete for each inner model call; its stream still ends with
// exactly one Complete.
const (
	// EventMessageStart opens a model call's answer. Response holds what is
	// known so far (ID, Model).
	EventMessageStart EventType = iota + 1
	// EventBlockStart opens content block Index. Block is the block with what
	// is known at its start: Text{}, Thinking{}, RedactedThinking{Data},
	// or ToolUse{ID, Name}.
	EventBlockStart
	// EventTextDelta appends Delta to text block Index.
	EventTextDelta
	// EventThinkingDelta appends Delta to thinking block Index.
	EventThinkingDelta
	// EventSignatureDelta appends Delta to the signature of thinking block Index.
	EventSignatureDelta
	// EventToolInputDelta appends Delta (a fragment of JSON) to the input of
	// tool-use block Index.
	EventToolInputDelta
	// EventBlockStop closes block Index. Block holds the finished block
	// (for a ToolUse, its whole input).
	EventBlockStop
	// EventUsage reports token usage so far in Usage.
	EventUsage
	// EventToolResult carries a tool result (Message, with RoleTool) the tool
	// loop produced.
	EventToolResult
	// EventStepComplete ends one model call inside a tool loop; Response is
	// that call's whole response.
	EventStepComplete
	// EventComplete ends the stream; Response is the whole assembled answer.
	// It is always the last event and appears exactly once.
	EventComplete
	// EventCitation adds Citation to text block Index: between its
	// BlockStart and BlockStop, or, where the sources arrive only with the
	// end of the answer (Gemini's grounding), after that block's BlockStop
	// and before EventComplete; the BlockStop's Block then lacks it, the
	// Complete Response holds it.
	EventCitation
)

var eventTypeNames = [...]string{
	EventMessageStart:   "message_start",
	EventBlockStart:     "block_start",
	EventTextDelta:      "text_delta",
	EventThinkingDelta:  "thinking_delta",
	EventSignatureDelta: "signature_delta",
	EventToolInputDelta: "tool_input_delta",
	EventBlockStop:      "block_stop",
	EventUsage:          "usage",
	EventToolResult:     "tool_result",
	EventStepComplete:   "step_complete",
	EventComplete:       "complete",
	EventCitation:       "citation",
}

// String returns the event type's snake_case name.
func (t EventType) String() string {
	if int(t) < len(eventTypeNames) && eventTypeNames[t] != "" {
		return eventTypeNames[t]
	}
	return "unknown"
}

// Event is one item of a model stream. Which fields are set depends on Type
// (see the EventType constants). Event is a plain value so a stream of
// deltas costs no allocation per event beyond the delta text.
type Event struct {
	Type     EventType
	Index    int       // content block index within the current message
	Delta    string    // text, thinking, signature or partial-JSON fragment
	Block    Block     // BlockStart, BlockStop
	Usage    *Usage    // Usage
	Message  *Message  // ToolResult
	Response *Response // MessageStart (partial), StepComplete, Complete
	Citation *Citation // Citation
}
