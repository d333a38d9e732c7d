package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// invalid returns a KindInvalidRequest error for a request this adapter
// cannot express; nothing was sent.
func invalid(format string, args ...any) error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: providerName, Message: fmt.Sprintf(format, args...)}
}

// encodeRequest returns the JSON body for req.
func (m *Model) encodeRequest(req *llm.Request, stream bool) ([]byte, error) {
	w, err := m.buildRequest(req, stream)
	if err != nil {
		return nil, err
	}
	body, err := httpx.MarshalJSON(w)
	if err != nil {
		return nil, invalid("encoding the request: %v", err)
	}
	if body, err = httpx.MergeExtra(body, req.Extra); err != nil {
		return nil, invalid("%v", err)
	}
	return body, nil
}

// buildRequest maps req to the Messages API's request.
func (m *Model) buildRequest(req *llm.Request, stream bool) (*wireRequest, error) {
	model := req.Model
	if model == "" {
		model = m.o.Model
	}
	w := &wireRequest{
		Model:         model,
		Temperature:   req.Temperature,
		TopP:          req.TopP,
		StopSequences: req.StopSequences,
		Stream:        stream,
	}
	var err error
	if w.System, w.Messages, err = convertMessages(req.Messages); err != nil {
		return nil, err
	}
	if w.Messages == nil {
		w.Messages = []wireMessage{}
	}
	for _, t := range req.Tools {
		if t.Name == "" {
			return nil, invalid("a tool definition has no name")
		}
		w.Tools = append(w.Tools, &wireTool{Name: t.Name, Description: t.Description, InputSchema: t.ParametersOrEmpty()})
	}
	if w.ToolChoice, err = toolChoice(req.ToolChoice, len(req.Tools) > 0); err != nil {
		return nil, err
	}
	budget := 0
	if r := req.Reasoning; r != nil {
		if r.BudgetTokens > 0 {
			budget = r.BudgetTokens
			w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: r.BudgetTokens}
		}
		if r.Effort != "" {
			effort := r.Effort
			if effort == "minimal" {
				effort = "low"
			}
			w.OutputConfig = &wireOutputConfig{Effort: effort}
		}
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case "", "text":
		case "json_schema":
			if len(f.Schema) == 0 {
				return nil, invalid("response format json_schema needs a schema")
			}
			if w.OutputConfig == nil {
				w.OutputConfig = &wireOutputConfig{}
			}
			w.OutputConfig.Format = &wireFormat{Type: "json_schema", Schema: f.Schema}
		case "json_object":
			return nil, invalid("response format json_object has no Anthropic equivalent; use json_schema")
		default:
			return nil, invalid("unknown response format %q", f.Type)
		}
	}
	w.MaxTokens = m.maxTokensFor(req.MaxTokens, model, budget)
	if m.autoCache {
		placeBreakpoints(w)
	}
	return w, nil
}

// maxTokensFor returns the max_tokens to send: the request's, else the
// configured default, else DefaultMaxTokens capped at the model's maximum
// output. A default that does not exceed the thinking budget (the API
// requires budget_tokens < max_tokens) is raised above it.
func (m *Model) maxTokensFor(requested int, model string, budget int) int {
	if requested > 0 {
		return requested
	}
	limit := 0
	if info, ok := m.lookupModel(model); ok {
		limit = info.MaxOutputTokens
	}
	n := m.o.MaxTokens
	if n <= 0 {
		n = DefaultMaxTokens
		if limit > 0 && limit < n {
			n = limit
		}
	}
	if budget > 0 && n <= budget {
		n = budget + DefaultMaxTokens
		if limit > budget && n > limit {
			n = limit
		}
	}
	return n
}

func toolChoice(c llm.ToolChoice, haveTools bool) (*wireToolChoice, error) {
	switch c.Mode {
	case llm.ToolChoiceAuto:
		return nil, nil
	case llm.ToolChoiceNone:
		if !haveTools {
			return nil, nil
		}
		return &wireToolChoice{Type: "none"}, nil
	case llm.ToolChoiceRequired:
		return &wireToolChoice{Type: "any"}, nil
	case llm.ToolChoiceTool:
		if c.Name == "" {
			return nil, invalid("tool choice %q needs a tool name", c.Mode)
		}
		return &wireToolChoice{Type: "tool", Name: c.Name}, nil
	}
	return nil, invalid("unknown tool choice %q", c.Mode)
}

// atMessage prefixes a conversion error with the message's position.
func atMessage(i int, err error) error {
	if e, ok := err.(*llm.Error); ok {
		c := *e
		c.Message = fmt.Sprintf("message %d: %s", i, e.Message)
		return &c
	}
	return err
}

// convertMessages splits off the system prompt and maps the conversation to
// alternating user/assistant messages.
func convertMessages(msgs []llm.Message) ([]*textBlock, []wireMessage, error) {
	var system []*textBlock
	var out []wireMessage
	for i, msg := range msgs {
		switch msg.Role {
		case llm.RoleSystem:
			for _, b := range msg.Content {
				t, ok := b.(llm.Text)
				if !ok {
					return nil, nil, invalid("message %d: a system message may hold only text, not %s", i, b.BlockType())
				}
				if t.Text != "" {
					system = append(system, &textBlock{Type: "text", Text: t.Text})
				}
			}
		case llm.RoleTool:
			content, err := convertResultContent(msg.Content)
			if err != nil {
				return nil, nil, atMessage(i, err)
			}
			r := &toolResultBlock{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: content, IsError: msg.IsError}
			out = appendBlocks(out, "user", []any{r})
		case llm.RoleUser, llm.RoleAssistant:
			blocks, err := convertBlocks(msg.Content)
			if err != nil {
				return nil, nil, atMessage(i, err)
			}
			out = appendBlocks(out, string(msg.Role), blocks)
		default:
			return nil, nil, invalid("message %d has unknown role %q", i, msg.Role)
		}
	}
	return system, out, nil
}

// appendBlocks adds blocks to the conversation, merging them into the last
// message when it has the same role. In a user message tool_result blocks
// stay first, as the API requires: a result merged after other content is
// moved to the end of the leading run of results.
func appendBlocks(out []wireMessage, role string, blocks []any) []wireMessage {
	if len(blocks) == 0 {
		return out
	}
	if len(out) == 0 || out[len(out)-1].Role != role {
		return append(out, wireMessage{Role: role, Content: blocks})
	}
	last := &out[len(out)-1]
	for _, b := range blocks {
		if _, isResult := b.(*toolResultBlock); isResult {
			n := 0
			for n < len(last.Content) {
				if _, ok := last.Content[n].(*toolResultBlock); !ok {
					break
				}
				n++
			}
			last.Content = append(last.Content, nil)
			copy(last.Content[n+1:], last.Content[n:])
			last.Content[n] = b
			continue
		}
		last.Content = append(last.Content, b)
	}
	return out
}

// convertBlocks maps a user or assistant message's content. Blocks the API
// rejects or cannot verify (empty text, unsigned thinking, foreign
// extensions) are dropped.
func convertBlocks(content []llm.Block) ([]any, error) {
	out := make([]any, 0, len(content))
	for _, b := range content {
		if wire, handled, err := convertShared(b); handled {
			if err != nil {
				return nil, err
			}
			if wire != nil {
				out = append(out, wire)
			}
			continue
		}
		switch b := b.(type) {
		case llm.Audio:
			return nil, invalid("audio input is not supported by the Anthropic Messages API")
		case llm.ToolUse:
			input := b.InputOrEmpty()
			if _, bad := b.Malformed(); bad {
				// The API takes only an object; the call's error result
				// (from the invoker) says what the model sent.
				input = json.RawMessage("{}")
			}
			out = append(out, &toolUseBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: input})
		case llm.ToolResult:
			content, err := convertResultContent(b.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, &toolResultBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: content, IsError: b.IsError})
		case llm.Thinking:
			// Anthropic verifies thinking by its signature; thinking from
			// another provider has none, or one Anthropic did not make,
			// and would be rejected.
			if b.Signature != "" && (b.Provider == "" || b.Provider == "anthropic") {
				out = append(out, &thinkingBlock{Type: "thinking", Thinking: b.Text, Signature: b.Signature})
			}
		case llm.RedactedThinking:
			out = append(out, &redactedThinkingBlock{Type: "redacted_thinking", Data: b.Data})
		default:
			return nil, invalid("unsupported content block %T", b)
		}
	}
	return out, nil
}

// convertResultContent maps a tool result's content: text, images,
// documents and passed-through extensions.
func convertResultContent(content []llm.Block) ([]any, error) {
	var out []any
	for _, b := range content {
		wire, handled, err := convertShared(b)
		if !handled {
			return nil, invalid("a tool result may hold text, images and documents, not %s", b.BlockType())
		}
		if err != nil {
			return nil, err
		}
		if wire != nil {
			out = append(out, wire)
		}
	}
	return out, nil
}

// convertShared maps the blocks a message and a tool result have in common:
// text, images, documents and passed-through extensions. handled is false
// for any other kind; a nil block with handled true means "dropped" (empty
// text, a foreign extension).
func convertShared(b llm.Block) (wire any, handled bool, err error) {
	switch b := b.(type) {
	case llm.Text:
		if b.Text == "" {
			return nil, true, nil
		}
		return &textBlock{Type: "text", Text: b.Text}, true, nil
	case llm.Image:
		src, err := imageSource(b)
		if err != nil {
			return nil, true, err
		}
		return &imageBlock{Type: "image", Source: src}, true, nil
	case llm.File:
		d, err := documentOf(b)
		if err != nil {
			return nil, true, err
		}
		return d, true, nil
	case llm.Extension:
		if raw, ok := passthrough(b); ok {
			return raw, true, nil
		}
		return nil, true, nil
	}
	return nil, false, nil
}

// passthrough returns an extension's Data when it is an Anthropic block:
// a JSON object whose "type" is the extension's Kind.
func passthrough(e llm.Extension) (json.RawMessage, bool) {
	if e.Kind == "" || len(e.Data) == 0 {
		return nil, false
	}
	var tag struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(e.Data, &tag) != nil || tag.Type != e.Kind {
		return nil, false
	}
	return e.Data, true
}

func imageSource(img llm.Image) (wireSource, error) {
	switch {
	case len(img.Data) > 0:
		mt := img.MediaType
		if mt == "" {
			mt = http.DetectContentType(img.Data)
		}
		return wireSource{Type: "base64", MediaType: mt, Data: base64.StdEncoding.EncodeToString(img.Data)}, nil
	case strings.HasPrefix(img.URL, "data:"):
		mt, data, ok := parseDataURL(img.URL)
		if !ok {
			return wireSource{}, invalid("an image data URL must be base64-encoded")
		}
		return wireSource{Type: "base64", MediaType: mt, Data: data}, nil
	case img.URL != "":
		return wireSource{Type: "url", URL: img.URL}, nil
	}
	return wireSource{}, invalid("an image has neither data nor a URL")
}

// documentOf maps a file to a document block. Text media types go as a
// text source (the API accepts only text/plain there), other data as
// base64.
func documentOf(f llm.File) (*documentBlock, error) {
	d := &documentBlock{Type: "document", Title: f.Name}
	switch {
	case f.FileID != "":
		d.Source = wireSource{Type: "file", FileID: f.FileID}
	case len(f.Data) > 0:
		mt := f.MediaType
		if mt == "" {
			mt = http.DetectContentType(f.Data)
		}
		if isText(mt) {
			d.Source = wireSource{Type: "text", MediaType: "text/plain", Data: string(f.Data)}
		} else {
			d.Source = wireSource{Type: "base64", MediaType: mt, Data: base64.StdEncoding.EncodeToString(f.Data)}
		}
	case strings.HasPrefix(f.URL, "data:"):
		mt, data, ok := parseDataURL(f.URL)
		if !ok {
			return nil, invalid("a document data URL must be base64-encoded")
		}
		if isText(mt) {
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				return nil, invalid("a document data URL holds invalid base64: %v", err)
			}
			d.Source = wireSource{Type: "text", MediaType: "text/plain", Data: string(raw)}
		} else {
			d.Source = wireSource{Type: "base64", MediaType: mt, Data: data}
		}
	case f.URL != "":
		d.Source = wireSource{Type: "url", URL: f.URL}
	default:
		return nil, invalid("a file has no data, URL or file id")
	}
	return d, nil
}

func isText(mediaType string) bool {
	return strings.HasPrefix(mediaType, "text/")
}

// parseDataURL splits "data:<media type>[;params];base64,<data>".
func parseDataURL(u string) (mediaType, data string, ok bool) {
	head, data, found := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !found || !strings.HasSuffix(head, ";base64") {
		return "", "", false
	}
	head = strings.TrimSuffix(head, ";base64")
	mediaType, _, _ = strings.Cut(head, ";")
	return mediaType, data, true
}

// placeBreakpoints marks the stable prefix for prompt caching: the last
// tool, the last system block, and the end of the turn before the newest
// user message. Anthropic allows four breakpoints; this uses at most three.
func placeBreakpoints(w *wireRequest) {
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
	}
	if n := len(w.System); n > 0 {
		w.System[n-1].CacheControl = ephemeral
	}
	for i := len(w.Messages) - 1; i > 0; i-- {
		if w.Messages[i].Role == "user" {
			markLastCacheable(w.Messages[i-1].Content)
			return
		}
	}
}

// markLastCacheable sets cache_control on the last block that may carry
// it (thinking, redacted thinking and passed-through blocks may not).
func markLastCacheable(content []any) {
	for i := len(content) - 1; i >= 0; i-- {
		switch b := content[i].(type) {
		case *textBlock:
			b.CacheControl = ephemeral
		case *imageBlock:
			b.CacheControl = ephemeral
		case *documentBlock:
			b.CacheControl = ephemeral
		case *toolUseBlock:
			b.CacheControl = ephemeral
		case *toolResultBlock:
			b.CacheControl = ephemeral
		default:
			continue
		}
		return
	}
}
