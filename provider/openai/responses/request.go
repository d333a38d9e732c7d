package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// wireRequest is the request body, in the order the fields are written.
type wireRequest struct {
	Model           string          `json:"model"`
	Input           []any           `json:"input"`
	Tools           []wireTool      `json:"tools,omitempty"`
	ToolChoice      any             `json:"tool_choice,omitempty"`
	MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"top_p,omitempty"`
	Text            *wireTextConfig `json:"text,omitempty"`
	Reasoning       *wireReasoning  `json:"reasoning,omitempty"`
	Store           bool            `json:"store"`
	Include         []string        `json:"include,omitempty"`
	Stream          bool            `json:"stream,omitempty"`
}

// wireInputMessage is a message input item. Content is a string (system
// and assistant text) or a list of input content parts.
type wireInputMessage struct {
	Type    string `json:"type"` // "message"
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// wireContent is an input content part: input_text, input_image or
// input_file.
type wireContent struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	FileID   string  `json:"file_id,omitempty"`
	FileURL  string  `json:"file_url,omitempty"`
	Filename string  `json:"filename,omitempty"`
	FileData string  `json:"file_data,omitempty"`
}

type wireFunctionCall struct {
	Type      string `json:"type"` // "function_call"
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireFunctionOutput struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string or input content parts
}

type wireReasoningItem struct {
	Type             string        `json:"type"` // "reasoning"
	ID               string        `json:"id"`
	Summary          []wireSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type wireSummary struct {
	Type string `json:"type"` // "summary_text"
	Text string `json:"text"`
}

type wireTool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type wireNamedChoice struct {
	Type string `json:"type"` // "function"
	Name string `json:"name"`
}

type wireTextConfig struct {
	Format wireFormat `json:"format"`
}

type wireFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// includeEncrypted is the include value that returns reasoning items'
// encrypted content.
const includeEncrypted = "reasoning.encrypted_content"

// encodeRequest builds the JSON body for req.
func (m *Model) encodeRequest(req *llm.Request, stream bool) ([]byte, error) {
	if req == nil {
		return nil, m.invalid("nil request")
	}
	w := wireRequest{Model: req.Model, Store: m.cfg.store, Stream: stream}
	if w.Model == "" {
		w.Model = m.cfg.o.Model
	}
	if w.Model == "" {
		return nil, m.invalid("no model: set Request.Model or use responses.WithModel")
	}
	if len(req.StopSequences) > 0 {
		return nil, m.invalid("the Responses API takes no stop sequences (Request.StopSequences)")
	}
	input, err := m.encodeInput(req.Messages)
	if err != nil {
		return nil, err
	}
	w.Input = input
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.ParametersOrEmpty()})
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto:
	case llm.ToolChoiceNone, llm.ToolChoiceRequired:
		w.ToolChoice = string(req.ToolChoice.Mode)
	case llm.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return nil, m.invalid("tool choice names no tool")
		}
		w.ToolChoice = wireNamedChoice{Type: "function", Name: req.ToolChoice.Name}
	default:
		return nil, m.invalid(fmt.Sprintf("unknown tool choice mode %q", req.ToolChoice.Mode))
	}
	w.MaxOutputTokens = req.MaxTokens
	w.Temperature, w.TopP = req.Temperature, req.TopP
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "json_object":
			w.Text = &wireTextConfig{Format: wireFormat{Type: rf.Type}}
		case "json_schema":
			name := rf.Name
			if name == "" {
				name = "response"
			}
			w.Text = &wireTextConfig{Format: wireFormat{Type: rf.Type, Name: name, Schema: rf.Schema, Strict: rf.Strict}}
		default:
			return nil, m.invalid(fmt.Sprintf("unknown response format %q (want text, json_object or json_schema)", rf.Type))
		}
	}
	effort := ""
	if req.Reasoning != nil {
		effort = req.Reasoning.Effort
	}
	if effort != "" || m.cfg.summary != "" {
		w.Reasoning = &wireReasoning{Effort: effort, Summary: m.cfg.summary}
	}
	if !m.cfg.store && m.wantEncrypted(w.Model, req) {
		w.Include = []string{includeEncrypted}
	}
	body, err := httpx.MarshalJSON(w)
	if err != nil {
		return nil, m.invalid("encoding the request: " + err.Error())
	}
	if body, err = httpx.MergeExtra(body, req.Extra); err != nil {
		return nil, m.invalid(err.Error())
	}
	return body, nil
}

// wantEncrypted reports whether to ask for encrypted reasoning (see
// WithEncryptedReasoning).
func (m *Model) wantEncrypted(model string, req *llm.Request) bool {
	switch m.cfg.encrypted {
	case 1:
		return true
	case -1:
		return false
	}
	return (req.Reasoning != nil && req.Reasoning.Effort != "") || isReasoningFamily(model)
}

// isReasoningFamily reports whether model is one of OpenAI's reasoning
// families: o1, o3, o4-mini..., gpt-5 and later, codex models. The id is
// compared in catalog.Normalize'd form, so a "vendor/" prefix and case are
// ignored.
func isReasoningFamily(model string) bool {
	model = strings.TrimPrefix(catalog.Normalize(model), "ft:")
	if len(model) >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9' {
		return true
	}
	if strings.Contains(model, "codex") {
		return true
	}
	if rest, ok := strings.CutPrefix(model, "gpt-"); ok {
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		major, err := strconv.Atoi(rest[:end])
		return err == nil && major >= 5
	}
	return false
}

// encodeInput maps the conversation to input items, in order.
func (m *Model) encodeInput(msgs []llm.Message) ([]any, error) {
	items := make([]any, 0, len(msgs))
	for i, msg := range msgs {
		var err error
		switch msg.Role {
		case llm.RoleSystem:
			var text string
			if text, err = m.textOnly(msg.Content, "a system message"); err == nil {
				items = append(items, &wireInputMessage{Type: "message", Role: "system", Content: text})
			}
		case llm.RoleUser:
			items, err = m.userItems(items, msg.Content)
		case llm.RoleAssistant:
			items, err = m.assistantItems(items, msg.Content)
		case llm.RoleTool:
			var out any
			if out, err = m.toolOutput(msg.Content, msg.IsError); err == nil {
				items = append(items, &wireFunctionOutput{Type: "function_call_output", CallID: msg.ToolCallID, Output: out})
			}
		default:
			err = m.invalid(fmt.Sprintf("message %d has unknown role %q", i, msg.Role))
		}
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// userItems appends a user message's items: its nested tool results as
// function_call_output items, its provider items (extension blocks the API
// takes as input), then one user message with the rest.
func (m *Model) userItems(items []any, blocks []llm.Block) ([]any, error) {
	var parts []wireContent
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.ToolResult:
			out, err := m.toolOutput(b.Content, b.IsError)
			if err != nil {
				return nil, err
			}
			items = append(items, &wireFunctionOutput{Type: "function_call_output", CallID: b.ToolUseID, Output: out})
		case llm.Extension:
			if raw, ok := inputItem(b); ok {
				items = append(items, raw)
			}
		case llm.Thinking, llm.RedactedThinking:
		default:
			p, ok, err := m.part(b)
			if err != nil {
				return nil, err
			}
			if ok {
				parts = append(parts, p)
			}
		}
	}
	if len(parts) > 0 {
		items = append(items, &wireInputMessage{Type: "message", Role: "user", Content: parts})
	}
	return items, nil
}

// assistantItems appends an assistant message's items in block order:
// text (consecutive text blocks joined) as an assistant message, tool calls
// as function_call items, this API's reasoning as reasoning items, and
// provider items (extension blocks) the API takes as input. Thinking from
// another API, redacted thinking and other extension blocks are left out,
// and so is reasoning that nothing follows.
func (m *Model) assistantItems(items []any, blocks []llm.Block) ([]any, error) {
	start := len(items)
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			items = append(items, &wireInputMessage{Type: "message", Role: "assistant", Content: text.String()})
			text.Reset()
		}
	}
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.Text:
			text.WriteString(b.Text)
		case llm.ToolUse:
			flush()
			args := string(b.InputOrEmpty())
			if t, bad := b.Malformed(); bad {
				args = t // the arguments as the model sent them (see llm.ToolUse)
			}
			items = append(items, &wireFunctionCall{Type: "function_call", CallID: b.ID, Name: b.Name, Arguments: args})
		case llm.Thinking:
			if r, ok := m.reasoningItem(b); ok {
				flush()
				items = append(items, r)
			}
		case llm.Extension:
			if raw, ok := inputItem(b); ok {
				flush()
				items = append(items, raw)
			}
		case llm.RedactedThinking:
		default:
			return nil, m.invalid(fmt.Sprintf("an assistant message cannot hold a %s block in the Responses API", b.BlockType()))
		}
	}
	flush()
	// A reasoning item must be followed by the item it led to; one left
	// last (its answer was empty) would be refused, so it is dropped.
	for len(items) > start {
		if _, ok := items[len(items)-1].(*wireReasoningItem); !ok {
			break
		}
		items = items[:len(items)-1]
	}
	return items, nil
}

// reasoningItem is a thinking block as a reasoning input item: only this
// API's own (Provider "openai-responses", with the item id), with its
// encrypted content; without encrypted content only when store is on (the
// server then finds the item by its id; with store off it would answer
// 404).
func (m *Model) reasoningItem(t llm.Thinking) (*wireReasoningItem, bool) {
	if t.Provider != Provider || t.ID == "" || (t.Signature == "" && !m.cfg.store) {
		return nil, false
	}
	r := &wireReasoningItem{Type: "reasoning", ID: t.ID, Summary: []wireSummary{}, EncryptedContent: t.Signature}
	if t.Text != "" {
		r.Summary = append(r.Summary, wireSummary{Type: "summary_text", Text: t.Text})
	}
	return r, true
}

// inputTypes are the output item types the API takes back as input items,
// besides message, function_call and reasoning (which have their own
// blocks), and the input-only items a caller may add as extension blocks.
var inputTypes = map[string]bool{
	"file_search_call":        true,
	"web_search_call":         true,
	"computer_call":           true,
	"computer_call_output":    true,
	"image_generation_call":   true,
	"code_interpreter_call":   true,
	"local_shell_call":        true,
	"local_shell_call_output": true,
	"mcp_list_tools":          true,
	"mcp_approval_request":    true,
	"mcp_approval_response":   true,
	"mcp_call":                true,
	"custom_tool_call":        true,
	"custom_tool_call_output": true,
	"item_reference":          true,
}

// ExtensionKind returns the llm.Extension Kind under which this adapter
// keeps an output item of the given type ("web_search_call" →
// "openai.web_search_call").
func ExtensionKind(itemType string) string { return kindPrefix + itemType }

const kindPrefix = "openai."

// inputItem returns an extension block's Data as an input item when the
// block is one of this API's items (Kind "openai.<type>", Data an object
// whose "type" is that type) of a type the API takes as input.
func inputItem(e llm.Extension) (json.RawMessage, bool) {
	typ, ok := strings.CutPrefix(e.Kind, kindPrefix)
	if !ok || !inputTypes[typ] {
		return nil, false
	}
	var head struct {
		Type string `json:"type"`
	}
	data := bytes.TrimSpace(e.Data)
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &head) != nil || head.Type != typ {
		return nil, false
	}
	return json.RawMessage(data), true
}

// textOnly joins text blocks; anything else is an error.
func (m *Model) textOnly(blocks []llm.Block, where string) (string, error) {
	var sb strings.Builder
	for _, b := range blocks {
		t, ok := b.(llm.Text)
		if !ok {
			return "", m.invalid(fmt.Sprintf("%s can hold only text in the Responses API, not a %s block", where, b.BlockType()))
		}
		sb.WriteString(t.Text)
	}
	return sb.String(), nil
}

// toolOutput is a function_call_output's output: a string when the result
// is only text, else input content parts (text, images, files). The API has
// no error flag for outputs, so an error result's text is prefixed with
// "Error: " unless it already starts with "error" (any case).
func (m *Model) toolOutput(blocks []llm.Block, isError bool) (any, error) {
	onlyText := true
	for _, b := range blocks {
		if _, ok := b.(llm.Text); !ok {
			onlyText = false
			break
		}
	}
	if onlyText {
		text, _ := m.textOnly(blocks, "")
		if isError && !strings.HasPrefix(strings.ToLower(text), "error") {
			text = "Error: " + text
		}
		return text, nil
	}
	parts := make([]wireContent, 0, len(blocks)+1)
	if isError {
		t := "Error:"
		parts = append(parts, wireContent{Type: "input_text", Text: &t})
	}
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

// part maps one user content block to an input content part. Empty text is
// skipped (ok false).
func (m *Model) part(b llm.Block) (p wireContent, ok bool, err error) {
	switch b := b.(type) {
	case llm.Text:
		if b.Text == "" {
			return p, false, nil
		}
		t := b.Text
		return wireContent{Type: "input_text", Text: &t}, true, nil
	case llm.Image:
		u := adapter.ImageURL(b)
		if u == "" {
			return p, false, m.invalid("an image block has neither data nor URL")
		}
		detail := b.Detail
		if detail == "" {
			detail = "auto"
		}
		return wireContent{Type: "input_image", ImageURL: u, Detail: detail}, true, nil
	case llm.File:
		return m.filePart(b)
	case llm.Audio:
		return p, false, m.invalid("the Responses API takes no audio input")
	default:
		return p, false, m.invalid(fmt.Sprintf("a user message cannot hold a %s block in the Responses API", b.BlockType()))
	}
}

// filePart maps a document: by uploaded file id, by URL (the API fetches
// it), or inline as a data: URL with its name; an inline text document
// (text/*, JSON, XML) is sent as text.
func (m *Model) filePart(f llm.File) (wireContent, bool, error) {
	if f.FileID != "" {
		return wireContent{Type: "input_file", FileID: f.FileID}, true, nil
	}
	if len(f.Data) == 0 && f.URL != "" && !strings.HasPrefix(f.URL, "data:") {
		return wireContent{Type: "input_file", FileURL: f.URL}, true, nil
	}
	data, _, base, inline := adapter.InlineFile(f)
	if !inline {
		return wireContent{}, false, m.invalid("a file block has neither data, a URL nor a file id")
	}
	if adapter.IsTextMediaType(base) {
		t := string(data)
		return wireContent{Type: "input_text", Text: &t}, true, nil
	}
	name := f.Name
	if name == "" {
		name = "document"
		if base == "application/pdf" {
			name = "document.pdf"
		}
	}
	return wireContent{Type: "input_file", Filename: name, FileData: adapter.DataURL(base, data)}, true, nil
}
