package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// The reference encoding of the Chat Completions request: wire structs
// written by encoding/json with HTML escaping off. The adapter builds the
// body with its own encoder (request_encode.go) only; this reference stays
// in the tests, which check that the encoder writes exactly its bytes and
// returns exactly its errors (TestFastEncoderMatchesJSON,
// FuzzRequestEncoder).

// The request body, in the order the fields are written.
type wireRequest struct {
	Model               string              `json:"model"`
	Messages            []wireMessage       `json:"messages"`
	Tools               []wireTool          `json:"tools,omitempty"`
	ToolChoice          any                 `json:"tool_choice,omitempty"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	TopP                *float64            `json:"top_p,omitempty"`
	Stop                []string            `json:"stop,omitempty"`
	ResponseFormat      *wireResponseFormat `json:"response_format,omitempty"`
	ReasoningEffort     string              `json:"reasoning_effort,omitempty"`
	Stream              bool                `json:"stream,omitempty"`
	StreamOptions       *wireStreamOptions  `json:"stream_options,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          any             `json:"content,omitempty"` // string or []wirePart
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"` // OpenRouter's, sent back
}

type wireToolCall struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Function     wireFunctionCall  `json:"function"`
	ExtraContent *wireExtraContent `json:"extra_content,omitempty"` // Gemini's thought signature
}

type wireFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireNamedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type wireResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
}

type wireJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

// marshalRequest is the reference encoding of req's body (without Extra):
// the wire structs above, written by encoding/json with HTML escaping off.
// The fast path must write exactly its bytes.
func (m *Model) marshalRequest(req *llm.Request, stream bool) ([]byte, error) {
	w := wireRequest{Model: req.Model}
	if w.Model == "" {
		w.Model = m.cfg.o.Model
	}
	if w.Model == "" {
		return nil, m.invalid("no model: set Request.Model or use openai.WithModel")
	}
	msgs, err := m.encodeMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	w.Messages = msgs
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{
			Name: t.Name, Description: t.Description, Parameters: t.ParametersOrEmpty(),
		}})
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto:
	case llm.ToolChoiceNone, llm.ToolChoiceRequired:
		w.ToolChoice = string(req.ToolChoice.Mode)
	case llm.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return nil, m.invalid("tool choice names no tool")
		}
		var c wireNamedChoice
		c.Type = "function"
		c.Function.Name = req.ToolChoice.Name
		w.ToolChoice = c
	default:
		return nil, m.invalid(fmt.Sprintf("unknown tool choice mode %q", req.ToolChoice.Mode))
	}
	if req.MaxTokens > 0 {
		if m.maxTokensParam(w.Model) == "max_completion_tokens" {
			w.MaxCompletionTokens = req.MaxTokens
		} else {
			w.MaxTokens = req.MaxTokens
		}
	}
	w.Temperature, w.TopP = req.Temperature, req.TopP
	w.Stop = req.StopSequences
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "json_object":
			w.ResponseFormat = &wireResponseFormat{Type: rf.Type}
		case "json_schema":
			name := rf.Name
			if name == "" {
				name = "response"
			}
			w.ResponseFormat = &wireResponseFormat{Type: rf.Type, JSONSchema: &wireJSONSchema{Name: name, Schema: rf.Schema, Strict: rf.Strict}}
		default:
			return nil, m.invalid(fmt.Sprintf("unknown response format %q (want text, json_object or json_schema)", rf.Type))
		}
	}
	if req.Reasoning != nil {
		w.ReasoningEffort = req.Reasoning.Effort
	}
	if stream {
		w.Stream = true
		w.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	}
	body, err := httpx.MarshalJSON(w)
	if err != nil {
		return nil, m.invalid("encoding the request: " + err.Error())
	}
	return body, nil
}

// encodeMessages maps the conversation to Chat Completions messages.
func (m *Model) encodeMessages(msgs []llm.Message) ([]wireMessage, error) {
	var toolSpan []bool
	if m.cfg.sendReasoning {
		toolSpan = toolCallSpans(msgs)
	}
	out := make([]wireMessage, 0, len(msgs))
	for i, msg := range msgs {
		switch msg.Role {
		case llm.RoleSystem:
			text, err := m.textOnly(msg.Content, "a system message")
			if err != nil {
				return nil, err
			}
			out = append(out, wireMessage{Role: "system", Content: text})
		case llm.RoleUser:
			var rest []llm.Block
			for _, b := range msg.Content {
				tr, ok := b.(llm.ToolResult)
				if !ok {
					rest = append(rest, b)
					continue
				}
				text, err := m.toolResultText(tr.Content, tr.IsError)
				if err != nil {
					return nil, err
				}
				out = append(out, wireMessage{Role: "tool", ToolCallID: tr.ToolUseID, Content: text})
			}
			if len(rest) == 0 && len(msg.Content) > 0 {
				continue
			}
			content, err := m.userContent(rest)
			if err != nil {
				return nil, err
			}
			out = append(out, wireMessage{Role: "user", Content: content})
		case llm.RoleAssistant:
			wm, err := m.assistantMessage(msg, toolSpan != nil && toolSpan[i])
			if err != nil {
				return nil, err
			}
			out = append(out, wm)
		case llm.RoleTool:
			text, err := m.toolResultText(msg.Content, msg.IsError)
			if err != nil {
				return nil, err
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: msg.ToolCallID, Content: text})
		default:
			return nil, m.invalid(fmt.Sprintf("message %d has unknown role %q", i, msg.Role))
		}
	}
	return out, nil
}

// assistantMessage maps an assistant message: its text blocks joined as the
// content, its tool calls, and (when withReasoning) its thinking text as
// reasoning_content. Thinking otherwise, redacted thinking and extension
// blocks are not sent: Chat Completions has no place for them.
func (m *Model) assistantMessage(msg llm.Message, withReasoning bool) (wireMessage, error) {
	wm := wireMessage{Role: "assistant"}
	var text, thinking strings.Builder
	for _, b := range msg.Content {
		switch b := b.(type) {
		case llm.Text:
			text.WriteString(b.Text)
		case llm.Thinking:
			thinking.WriteString(b.Text)
		case llm.ToolUse:
			args := string(b.InputOrEmpty())
			if text, bad := b.Malformed(); bad {
				args = text // the arguments as the model sent them (see llm.ToolUse)
			}
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: b.ID, Type: "function", Function: wireFunctionCall{
				Name: b.Name, Arguments: args,
			}, ExtraContent: extraContentFor(b)})
		case llm.Extension:
			// OpenRouter's reasoning, back to the servers that are not
			// OpenAI's own (which would refuse the field).
			if b.Kind == ReasoningDetailsKind && m.servingProvider() != "openai" && json.Valid(b.Data) {
				wm.ReasoningDetails = b.Data
			}
		case llm.RedactedThinking:
		default:
			return wireMessage{}, m.invalid(fmt.Sprintf("an assistant message cannot hold a %s block in Chat Completions", b.BlockType()))
		}
	}
	if text.Len() > 0 || len(wm.ToolCalls) == 0 || withReasoning {
		wm.Content = text.String()
	}
	if withReasoning {
		r := thinking.String()
		wm.ReasoningContent = &r
	}
	return wm, nil
}

// textOnly joins text blocks; what holds other blocks is an error.
func (m *Model) textOnly(blocks []llm.Block, where string) (string, error) {
	var sb strings.Builder
	for _, b := range blocks {
		t, ok := b.(llm.Text)
		if !ok {
			return "", m.invalid(fmt.Sprintf("%s can hold only text in Chat Completions, not a %s block", where, b.BlockType()))
		}
		sb.WriteString(t.Text)
	}
	return sb.String(), nil
}

// toolResultText is a tool message's content. Chat Completions has no error
// flag on tool messages, so an error result's text is prefixed with
// "Error: " unless it already starts with "error" (any case): the model
// reads that it failed.
func (m *Model) toolResultText(blocks []llm.Block, isError bool) (string, error) {
	text, err := m.textOnly(blocks, "a tool result")
	if err != nil {
		return "", err
	}
	if isError && !strings.HasPrefix(strings.ToLower(text), "error") {
		text = "Error: " + text
	}
	return text, nil
}

// userContent is a user message's content: a plain string when it is only
// text, else an array of parts.
func (m *Model) userContent(blocks []llm.Block) (any, error) {
	onlyText := true
	for _, b := range blocks {
		if _, ok := b.(llm.Text); !ok {
			onlyText = false
			break
		}
	}
	if onlyText {
		return m.textOnly(blocks, "")
	}
	parts := make([]wirePart, 0, len(blocks))
	for _, b := range blocks {
		p, ok, err := m.part(b)
		if err != nil {
			return nil, err
		}
		if ok {
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// extraContentFor returns the extra_content to send with a tool call: its
// signature when Gemini made it, else nil.
func extraContentFor(tu llm.ToolUse) *wireExtraContent {
	if tu.Signature == "" || tu.Provider != "gemini" {
		return nil
	}
	e := &wireExtraContent{}
	e.Google = &struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	}{tu.Signature}
	return e
}
