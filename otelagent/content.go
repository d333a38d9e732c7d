package otelagent

import (
	"encoding/base64"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/llm"
)

// The JSON shapes of the GenAI conventions' content attributes
// (gen-ai-input-messages.json, gen-ai-output-messages.json,
// gen-ai-system-instructions.json, gen-ai-tool-definitions.json of
// semconv v1.41.0), recorded as JSON strings: OpenTelemetry Go attributes
// have no structured form.

type chatMessage struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// part is one part of a message; which fields are set depends on Type:
// text and reasoning (Content), tool_call (ID, Name, Arguments),
// tool_call_response (ID, Response), blob (Modality, MimeType, Content:
// base64), uri (Modality, MimeType, URI), file (Modality, MimeType,
// FileID).
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  any             `json:"response,omitempty"`
	Modality  string          `json:"modality,omitempty"`
	MimeType  string          `json:"mime_type,omitempty"`
	URI       string          `json:"uri,omitempty"`
	FileID    string          `json:"file_id,omitempty"`
}

type toolDefinition struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// role maps agcore's roles to the conventions'.
func role(r llm.Role) string {
	if r == llm.RoleTool {
		return "tool"
	}
	return string(r)
}

// parts converts a message's blocks.
func parts(m llm.Message) []part {
	out := make([]part, 0, len(m.Content))
	for _, b := range m.Content {
		switch b := b.(type) {
		case llm.Text:
			out = append(out, part{Type: "text", Content: b.Text})
		case llm.Thinking:
			out = append(out, part{Type: "reasoning", Content: b.Text})
		case llm.RedactedThinking:
			out = append(out, part{Type: "reasoning"}) // encrypted: nothing to show
		case llm.ToolUse:
			out = append(out, part{Type: "tool_call", ID: b.ID, Name: b.Name, Arguments: b.InputOrEmpty()})
		case llm.ToolResult:
			out = append(out, part{Type: "tool_call_response", ID: b.ToolUseID, Response: llm.Message{Content: b.Content}.Text()})
		case llm.Image:
			out = append(out, media("image", b.MediaType, b.Data, b.URL, ""))
		case llm.Audio:
			out = append(out, media("audio", b.MediaType, b.Data, b.URL, ""))
		case llm.File:
			out = append(out, media("", b.MediaType, b.Data, b.URL, b.FileID))
		case llm.Extension:
			out = append(out, part{Type: b.Kind})
		}
	}
	if m.Role == llm.RoleTool {
		// A tool result message answers one call: its text is the response.
		return []part{{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Text()}}
	}
	return out
}

func media(modality, mime string, data []byte, url, fileID string) part {
	switch {
	case fileID != "":
		return part{Type: "file", Modality: modality, MimeType: mime, FileID: fileID}
	case url != "":
		return part{Type: "uri", Modality: modality, MimeType: mime, URI: url}
	}
	return part{Type: "blob", Modality: modality, MimeType: mime, Content: base64.StdEncoding.EncodeToString(data)}
}

// setMessages records msgs as gen_ai.system_instructions (the system
// messages' parts) and gen_ai.input.messages (the others).
func setMessages(span trace.Span, msgs []llm.Message) {
	var system []part
	input := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleSystem {
			system = append(system, parts(m)...)
			continue
		}
		input = append(input, chatMessage{Role: role(m.Role), Parts: parts(m)})
	}
	if len(system) > 0 {
		setJSON(span, semconv.GenAISystemInstructionsKey, system)
	}
	setJSON(span, semconv.GenAIInputMessagesKey, input)
}

// setOutput records the answer as gen_ai.output.messages.
func setOutput(span trace.Span, m llm.Message, finish llm.FinishReason) {
	setJSON(span, semconv.GenAIOutputMessagesKey, []chatMessage{{Role: role(m.Role), Parts: parts(m), FinishReason: string(finish)}})
}

// setToolDefinitions records the offered tools as gen_ai.tool.definitions.
func setToolDefinitions(span trace.Span, defs []llm.ToolDefinition) {
	if len(defs) == 0 {
		return
	}
	out := make([]toolDefinition, len(defs))
	for i, d := range defs {
		out[i] = toolDefinition{Type: "function", Name: d.Name, Description: d.Description, Parameters: d.ParametersOrEmpty()}
	}
	setJSON(span, semconv.GenAIToolDefinitionsKey, out)
}

func setJSON(span trace.Span, key attribute.Key, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return // arguments that are not JSON; nothing sensible to record
	}
	span.SetAttributes(key.String(string(b)))
}

// setUsage records the token counts of u.
func setUsage(span trace.Span, u llm.Usage) {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.GenAIUsageInputTokens(u.InputTokens), semconv.GenAIUsageOutputTokens(u.OutputTokens))
	if u.CachedInputTokens > 0 {
		attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(u.CachedInputTokens))
	}
	if u.CacheCreationTokens > 0 {
		attrs = append(attrs, semconv.GenAIUsageCacheCreationInputTokens(u.CacheCreationTokens))
	}
	if u.ReasoningTokens > 0 {
		attrs = append(attrs, semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
	}
	span.SetAttributes(attrs...)
}
