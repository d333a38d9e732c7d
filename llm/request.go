package llm

import (
	"encoding/json"
)

// Request is one call to a model.
//
// The zero value of every optional field means "the provider's default".
type Request struct {
	// Model is the model id sent to the provider; empty means the adapter's
	// configured default.
	Model    string
	Messages []Message
	// Tools are offered to the model, in this order (the order is part of the
	// prompt prefix, so keep it stable between calls).
	Tools      []ToolDefinition
	ToolChoice ToolChoice
	// MaxTokens caps the output; 0 means the adapter's default.
	MaxTokens      int
	Temperature    *float64
	TopP           *float64
	StopSequences  []string
	ResponseFormat *ResponseFormat
	Reasoning      *Reasoning
	// Extra holds provider-specific body fields, merged into the top level of
	// the JSON the adapter sends (an Extra key overrides the adapter's own).
	Extra map[string]any
	// Metadata is free-form data for middleware and hooks; never sent.
	Metadata map[string]string
}

// Clone returns a copy of r whose slices and maps can be changed without
// affecting r. Messages themselves are values; their blocks are shared.
func (r *Request) Clone() *Request {
	c := *r
	c.Messages = append([]Message(nil), r.Messages...)
	c.Tools = append([]ToolDefinition(nil), r.Tools...)
	c.StopSequences = append([]string(nil), r.StopSequences...)
	if r.Extra != nil {
		c.Extra = make(map[string]any, len(r.Extra))
		for k, v := range r.Extra {
			c.Extra[k] = v
		}
	}
	if r.Metadata != nil {
		c.Metadata = make(map[string]string, len(r.Metadata))
		for k, v := range r.Metadata {
			c.Metadata[k] = v
		}
	}
	return &c
}

// ToolDefinition describes a tool to the model: what the adapters send.
// It is a pure wire description; running a tool is package tool's and the
// tool loop's business (they run the user's own tool.Tool values). A
// definition in Request.Tools that the tool loop has no tool for is
// declared only: the loop leaves its calls to the caller.
type ToolDefinition struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object. Empty means an
	// object with no properties.
	Parameters json.RawMessage
}

// ParametersOrEmpty returns Parameters, or an empty object schema.
func (d ToolDefinition) ParametersOrEmpty() json.RawMessage {
	if len(d.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return d.Parameters
}

// ToolChoiceMode says whether and how the model must call tools.
type ToolChoiceMode string

// Tool choice modes. The zero value means auto.
const (
	ToolChoiceAuto     ToolChoiceMode = ""
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceTool     ToolChoiceMode = "tool" // the tool named by ToolChoice.Name
)

// ToolChoice is the request's tool choice; the zero value is auto.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // with ToolChoiceTool
}

// ResponseFormat asks for structured output.
type ResponseFormat struct {
	// Type is "text", "json_object" or "json_schema".
	Type   string
	Name   string          // json_schema: the schema's name
	Schema json.RawMessage // json_schema: the JSON Schema
	Strict bool
}

// Reasoning configures a reasoning model's thinking. Adapters use what their
// provider understands: Anthropic a token budget, OpenAI an effort.
type Reasoning struct {
	BudgetTokens int    // Anthropic extended thinking budget
	Effort       string // "minimal", "low", "medium", "high" (OpenAI style)
}
