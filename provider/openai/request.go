package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

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

type wirePart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	ImageURL   *wireImageURL   `json:"image_url,omitempty"`
	InputAudio *wireInputAudio `json:"input_audio,omitempty"`
	File       *wireFile       `json:"file,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type wireFile struct {
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
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

// encodeRequest builds the JSON body for req (see encodeBody).
func (m *Model) encodeRequest(req *llm.Request, stream bool) ([]byte, error) {
	body, _, err := m.encodeBody(req, stream)
	return body, err
}

// encodeBody builds the JSON body for req: by the fast path
// (appendRequest, request_encode.go) wherever it applies, else by the
// reference, marshalRequest, which also reports every error; then
// Request.Extra is merged in. The fast path writes into a buffer from
// httpx's pool, returned as buf (body is *buf) for httpx.PostBuffer to
// send and put back; buf is nil when the body is elsewhere.
func (m *Model) encodeBody(req *llm.Request, stream bool) (body []byte, buf *[]byte, err error) {
	if req == nil {
		return nil, nil, m.invalid("nil request")
	}
	buf = httpx.GetBuffer(estimateRequestSize(req))
	var ok bool
	if *buf, ok = m.appendRequest(*buf, req, stream); ok {
		body = *buf
	} else {
		httpx.PutBuffer(buf)
		buf = nil
		if body, err = m.marshalRequest(req, stream); err != nil {
			return nil, nil, err
		}
	}
	if len(req.Extra) > 0 {
		merged, err := httpx.MergeExtra(body, req.Extra)
		httpx.PutBuffer(buf)
		if err != nil {
			return nil, nil, m.invalid(err.Error())
		}
		return merged, nil, nil
	}
	return body, buf, nil
}

// post sends a body from encodeBody.
func (m *Model) post(ctx context.Context, body []byte, buf *[]byte, stream bool) (*http.Response, error) {
	if buf != nil {
		return m.client.PostBuffer(ctx, buf, stream)
	}
	return m.client.Post(ctx, body, stream)
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

// maxTokensParam picks the field MaxTokens is sent in (see WithMaxTokensParam).
func (m *Model) maxTokensParam(model string) string {
	if m.cfg.maxTokensParam != "" {
		return m.cfg.maxTokensParam
	}
	if isOpenAIReasoningFamily(model) {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// isOpenAIReasoningFamily reports whether model is one of OpenAI's reasoning
// families, which reject max_tokens: o1, o3, o4-mini..., gpt-5 and later.
// The id is compared in catalog.Normalize'd form, so a "vendor/" prefix
// (OpenRouter) and case are ignored.
func isOpenAIReasoningFamily(model string) bool {
	model = strings.TrimPrefix(catalog.Normalize(model), "ft:")
	if len(model) >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9' {
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

func (m *Model) invalid(msg string) error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: m.cfg.svc.Provider, Message: msg}
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

// toolCallSpans marks the assistant messages that lie between two user
// messages (or after the last one) in a span where the model called a tool.
// A user message holding only tool results does not end a span.
func toolCallSpans(msgs []llm.Message) []bool {
	marks := make([]bool, len(msgs))
	start := 0
	flush := func(end int) {
		called := false
		for _, msg := range msgs[start:end] {
			if msg.Role == llm.RoleAssistant && msg.HasToolUse() {
				called = true
				break
			}
		}
		for j := start; j < end; j++ {
			marks[j] = called && msgs[j].Role == llm.RoleAssistant
		}
	}
	for i, msg := range msgs {
		if msg.Role == llm.RoleUser && !onlyToolResults(msg.Content) {
			flush(i)
			start = i + 1
		}
	}
	flush(len(msgs))
	return marks
}

func onlyToolResults(blocks []llm.Block) bool {
	for _, b := range blocks {
		if _, ok := b.(llm.ToolResult); !ok {
			return false
		}
	}
	return len(blocks) > 0
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

// part maps one user content block. Empty text, thinking, redacted thinking
// and extension blocks are skipped (ok false).
func (m *Model) part(b llm.Block) (p wirePart, ok bool, err error) {
	switch b := b.(type) {
	case llm.Text:
		if b.Text == "" {
			return p, false, nil
		}
		t := b.Text
		return wirePart{Type: "text", Text: &t}, true, nil
	case llm.Image:
		u := b.URL
		if len(b.Data) > 0 {
			mt := b.MediaType
			if mt == "" {
				mt = http.DetectContentType(b.Data)
			}
			u = dataURL(mt, b.Data)
		}
		if u == "" {
			return p, false, m.invalid("an image block has neither data nor URL")
		}
		return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: u, Detail: b.Detail}}, true, nil
	case llm.Audio:
		data, mt := b.Data, b.MediaType
		if len(data) == 0 {
			d, dmt, isData := parseDataURL(b.URL)
			if !isData {
				return p, false, m.invalid("Chat Completions takes audio only inline (data or a data: URL), not by URL")
			}
			data = d
			if mt == "" {
				mt = dmt
			}
		}
		format, known := audioFormat(mt)
		if !known {
			return p, false, m.invalid(fmt.Sprintf("Chat Completions takes wav or mp3 audio, not %q", mt))
		}
		return wirePart{Type: "input_audio", InputAudio: &wireInputAudio{Data: base64.StdEncoding.EncodeToString(data), Format: format}}, true, nil
	case llm.File:
		return m.filePart(b)
	case llm.Thinking, llm.RedactedThinking, llm.Extension:
		return p, false, nil
	default:
		return p, false, m.invalid(fmt.Sprintf("a user message cannot hold a %s block in Chat Completions", b.BlockType()))
	}
}

// filePart maps a document. Chat Completions takes PDFs (inline or by an
// uploaded file id) as file parts; a text document given inline is sent as a
// text part, as OpenAI's guide advises; anything else is an error.
func (m *Model) filePart(f llm.File) (wirePart, bool, error) {
	if f.FileID != "" {
		return wirePart{Type: "file", File: &wireFile{FileID: f.FileID}}, true, nil
	}
	data, mt := f.Data, f.MediaType
	if len(data) == 0 {
		d, dmt, isData := parseDataURL(f.URL)
		if !isData {
			return wirePart{}, false, m.invalid("Chat Completions does not fetch files by URL; give the file's data or an uploaded file id")
		}
		data = d
		if mt == "" {
			mt = dmt
		}
	}
	if mt == "" {
		mt = http.DetectContentType(data)
	}
	base := strings.TrimSpace(strings.ToLower(strings.SplitN(mt, ";", 2)[0]))
	switch {
	case base == "application/pdf":
		name := f.Name
		if name == "" {
			name = "document.pdf"
		}
		return wirePart{Type: "file", File: &wireFile{Filename: name, FileData: dataURL("application/pdf", data)}}, true, nil
	case strings.HasPrefix(base, "text/") || base == "application/json" || base == "application/xml":
		t := string(data)
		return wirePart{Type: "text", Text: &t}, true, nil
	}
	return wirePart{}, false, m.invalid(fmt.Sprintf("Chat Completions takes PDF or text files, not %q", mt))
}

func dataURL(mediaType string, data []byte) string {
	var sb strings.Builder
	sb.Grow(len("data:;base64,") + len(mediaType) + base64.StdEncoding.EncodedLen(len(data)))
	sb.WriteString("data:")
	sb.WriteString(mediaType)
	sb.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	enc.Write(data)
	enc.Close()
	return sb.String()
}

// parseDataURL decodes a base64 data: URL.
func parseDataURL(u string) (data []byte, mediaType string, ok bool) {
	rest, isData := strings.CutPrefix(u, "data:")
	if !isData {
		return nil, "", false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return nil, "", false
	}
	d, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, "", false
	}
	return d, strings.TrimSuffix(meta, ";base64"), true
}

func audioFormat(mediaType string) (string, bool) {
	switch strings.TrimSpace(strings.ToLower(strings.SplitN(mediaType, ";", 2)[0])) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav", true
	case "audio/mpeg", "audio/mp3":
		return "mp3", true
	}
	return "", false
}
