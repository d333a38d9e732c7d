package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// skipSignature is the value Google documents for a function call that
// must carry a thought signature but has none from Gemini (a history made
// by another model, or by Gemini 2.5 without thinking); Gemini 3 rejects
// such a call without one.
const skipSignature = "skip_thought_signature_validator"

// encodeRequest returns the JSON body for req.
func (m *Model) encodeRequest(req *llm.Request) ([]byte, error) {
	w, err := m.buildRequest(req)
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

// buildRequest maps req to a GenerateContentRequest.
func (m *Model) buildRequest(req *llm.Request) (*wireRequest, error) {
	var c converter
	if err := c.messages(req.Messages); err != nil {
		return nil, err
	}
	w := &wireRequest{Contents: c.contents}
	if w.Contents == nil {
		w.Contents = []*wireContent{}
	}
	if len(c.system) > 0 {
		w.SystemInstruction = &wireContent{Parts: c.system}
	}
	if len(req.Tools) > 0 {
		decls := make([]wireFunctionDecl, 0, len(req.Tools))
		for _, t := range req.Tools {
			if t.Name == "" {
				return nil, invalid("a tool definition has no name")
			}
			decls = append(decls, wireFunctionDecl{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.ParametersOrEmpty()})
		}
		w.Tools = append(w.Tools, map[string]any{"functionDeclarations": decls})
	}
	for _, name := range m.builtin {
		w.Tools = append(w.Tools, map[string]any{name: struct{}{}})
	}
	var err error
	if w.ToolConfig, err = toolConfig(req.ToolChoice, len(req.Tools) > 0); err != nil {
		return nil, err
	}
	gc := wireGenerationConfig{Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.StopSequences, MaxOutputTokens: req.MaxTokens}
	if gc.MaxOutputTokens <= 0 {
		gc.MaxOutputTokens = m.o.MaxTokens
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case "", "text":
		case "json_object":
			gc.ResponseMimeType = "application/json"
		case "json_schema":
			if len(f.Schema) == 0 {
				return nil, invalid("response format json_schema needs a schema")
			}
			gc.ResponseMimeType, gc.ResponseJSONSchema = "application/json", f.Schema
		default:
			return nil, invalid("unknown response format %q", f.Type)
		}
	}
	if r := req.Reasoning; r != nil {
		tc := &wireThinkingConfig{IncludeThoughts: true}
		if r.BudgetTokens > 0 {
			b := r.BudgetTokens
			tc.ThinkingBudget = &b
		} else {
			tc.ThinkingLevel = r.Effort
		}
		gc.ThinkingConfig = tc
	}
	if gc.MaxOutputTokens > 0 || gc.Temperature != nil || gc.TopP != nil || len(gc.StopSequences) > 0 ||
		gc.ResponseMimeType != "" || gc.ThinkingConfig != nil {
		w.GenerationConfig = &gc
	}
	return w, nil
}

func toolConfig(c llm.ToolChoice, haveTools bool) (*wireToolConfig, error) {
	var f wireFunctionCallingConfig
	switch c.Mode {
	case llm.ToolChoiceAuto:
		return nil, nil
	case llm.ToolChoiceNone:
		if !haveTools {
			return nil, nil
		}
		f.Mode = "NONE"
	case llm.ToolChoiceRequired:
		f.Mode = "ANY"
	case llm.ToolChoiceTool:
		if c.Name == "" {
			return nil, invalid("tool choice %q needs a tool name", c.Mode)
		}
		f.Mode, f.AllowedFunctionNames = "ANY", []string{c.Name}
	default:
		return nil, invalid("unknown tool choice %q", c.Mode)
	}
	return &wireToolConfig{FunctionCallingConfig: f}, nil
}

// converter maps the conversation to contents.
type converter struct {
	system   []any
	contents []*wireContent
	calls    map[string]callRef // tool-use id → what its results need
}

// callRef is what a function response needs of its call: the name, and
// the id to send (Gemini's own id; empty for a generated or foreign one).
type callRef struct{ name, id string }

// atMessage prefixes a conversion error with the message's position.
func atMessage(i int, err error) error {
	if e, ok := err.(*llm.Error); ok {
		c := *e
		c.Message = fmt.Sprintf("message %d: %s", i, e.Message)
		return &c
	}
	return err
}

func (c *converter) messages(msgs []llm.Message) error {
	c.calls = map[string]callRef{}
	for i, msg := range msgs {
		var parts []any
		var err error
		role := "user"
		switch msg.Role {
		case llm.RoleSystem:
			for _, b := range msg.Content {
				t, ok := b.(llm.Text)
				if !ok {
					return invalid("message %d: a system message may hold only text, not %s", i, b.BlockType())
				}
				if t.Text != "" {
					c.system = append(c.system, textPart(t.Text))
				}
			}
			continue
		case llm.RoleTool:
			var p *wirePart
			p, err = c.result(msg.ToolCallID, msg.Content, msg.IsError)
			parts = []any{p}
		case llm.RoleUser:
			parts, err = c.userParts(msg.Content)
		case llm.RoleAssistant:
			role = "model"
			parts, err = c.modelParts(msg.Content)
		default:
			return invalid("message %d has unknown role %q", i, msg.Role)
		}
		if err != nil {
			return atMessage(i, err)
		}
		c.add(role, parts)
	}
	return nil
}

// add appends parts as a content of role, merged into the last content
// when it has the same role (tool results and the user's next words are
// one user turn). A message with nothing to send adds nothing.
func (c *converter) add(role string, parts []any) {
	if len(parts) == 0 {
		return
	}
	if n := len(c.contents); n > 0 && c.contents[n-1].Role == role {
		c.contents[n-1].Parts = append(c.contents[n-1].Parts, parts...)
		return
	}
	c.contents = append(c.contents, &wireContent{Role: role, Parts: parts})
}

func textPart(s string) *wirePart { return &wirePart{Text: &s} }

func (c *converter) userParts(blocks []llm.Block) ([]any, error) {
	var parts []any
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.Text:
			if b.Text != "" {
				parts = append(parts, textPart(b.Text))
			}
		case llm.ToolResult:
			p, err := c.result(b.ToolUseID, b.Content, b.IsError)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		case llm.ToolUse:
			return nil, invalid("a user message may not hold a tool call")
		case llm.Thinking, llm.RedactedThinking:
			// Reasoning in a user message has no place in Gemini's model.
		default:
			p, err := otherPart(b)
			if err != nil {
				return nil, err
			}
			if p != nil {
				parts = append(parts, p)
			}
		}
	}
	return parts, nil
}

// modelParts maps an assistant message. Gemini's own signatures go back
// on the part kind they came with; thinking of other providers is left
// out. A signature-only thinking block (a signature Gemini put on a text
// part) goes on the next text part, or alone on an empty text part.
func (c *converter) modelParts(blocks []llm.Block) ([]any, error) {
	var parts []any
	pending := ""
	flush := func() {
		if pending != "" {
			p := textPart("")
			p.ThoughtSignature, pending = pending, ""
			parts = append(parts, p)
		}
	}
	firstCall, signed := -1, false
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.Text:
			if b.Text == "" {
				continue
			}
			p := textPart(b.Text)
			p.ThoughtSignature, pending = pending, ""
			parts = append(parts, p)
		case llm.Thinking:
			if b.Provider != providerName {
				continue
			}
			flush()
			if b.Text == "" {
				pending = b.Signature
				continue
			}
			p := textPart(b.Text)
			p.Thought, p.ThoughtSignature = true, b.Signature
			parts = append(parts, p)
		case llm.RedactedThinking:
		case llm.ToolUse:
			flush()
			p := &wirePart{FunctionCall: &wireFunctionCall{Name: b.Name, Args: argsOf(b)}}
			ref := callRef{name: b.Name}
			if b.Provider == providerName {
				p.ThoughtSignature = b.Signature
				if !strings.HasPrefix(b.ID, generatedPrefix) {
					ref.id = b.ID
				}
			}
			p.FunctionCall.ID = ref.id
			c.calls[b.ID] = ref
			if firstCall < 0 {
				firstCall = len(parts)
			}
			signed = signed || p.ThoughtSignature != ""
			parts = append(parts, p)
		case llm.ToolResult:
			return nil, invalid("an assistant message may not hold a tool result")
		default:
			flush()
			p, err := otherPart(b)
			if err != nil {
				return nil, err
			}
			if p != nil {
				parts = append(parts, p)
			}
		}
	}
	flush()
	// Gemini 3 rejects a step whose first call has no signature: calls
	// another model made (or a Gemini 2.5 without thinking) get the
	// placeholder Google documents for them, which other models ignore.
	if firstCall >= 0 && !signed {
		parts[firstCall].(*wirePart).ThoughtSignature = skipSignature
	}
	return parts, nil
}

// argsOf returns a call's arguments as a JSON object: Gemini's args is an
// object, so arguments another model sent malformed go as {}.
func argsOf(b llm.ToolUse) json.RawMessage {
	in := bytes.TrimSpace(b.InputOrEmpty())
	if len(in) == 0 || in[0] != '{' || !json.Valid(in) {
		return json.RawMessage("{}")
	}
	return in
}

// result maps a tool result to a functionResponse: its text as
// {"output": text} ({"error": text} for an error), its inline images and
// files as the response's parts.
func (c *converter) result(id string, content []llm.Block, isError bool) (*wirePart, error) {
	ref, ok := c.calls[id]
	if !ok {
		return nil, invalid("tool result for %q answers no earlier tool call", id)
	}
	var text strings.Builder
	fr := &wireFunctionResponse{ID: ref.id, Name: ref.name}
	for _, b := range content {
		switch b := b.(type) {
		case llm.Text:
			text.WriteString(b.Text)
		case llm.Image, llm.Audio, llm.File:
			p, err := otherPart(b)
			if err != nil {
				return nil, err
			}
			if p == nil || p.(*wirePart).InlineData == nil {
				return nil, invalid("an image or file in a tool result must be inline data")
			}
			fr.Parts = append(fr.Parts, wireFunctionRespPart{InlineData: p.(*wirePart).InlineData})
		default:
			return nil, invalid("a tool result may not hold a %s block", b.BlockType())
		}
	}
	key := "output"
	if isError {
		key = "error"
	}
	fr.Response = map[string]string{key: text.String()}
	return &wirePart{FunctionResponse: fr}, nil
}

// otherPart maps media and extension blocks. Extensions of Gemini's own
// parts ("gemini.*" other than the grounding metadata) go back verbatim;
// other extensions are left out (nil).
func otherPart(b llm.Block) (any, error) {
	switch b := b.(type) {
	case llm.Image:
		return media("image", b.Data, b.URL, "", b.MediaType)
	case llm.Audio:
		return media("audio", b.Data, b.URL, "", b.MediaType)
	case llm.File:
		return media("file", b.Data, b.URL, b.FileID, b.MediaType)
	case llm.Extension:
		d := bytes.TrimSpace(b.Data)
		if strings.HasPrefix(b.Kind, "gemini.") && b.Kind != groundingKind && len(d) > 0 && d[0] == '{' && json.Valid(d) {
			return json.RawMessage(d), nil
		}
		return nil, nil
	}
	return nil, invalid("unsupported block %s", b.BlockType())
}

// media maps inline data (raw bytes, or a base64 data: URL) to inlineData
// and a URL or a file id (a Files API URI) to fileData.
func media(what string, data []byte, url, fileID, mediaType string) (any, error) {
	if len(data) == 0 && strings.HasPrefix(url, "data:") {
		mt, d, err := parseDataURL(url)
		if err != nil {
			return nil, invalid("%s: %v", what, err)
		}
		data = d
		if mediaType == "" {
			mediaType = mt
		}
	}
	switch {
	case len(data) > 0:
		if mediaType == "" {
			mediaType = http.DetectContentType(data)
			if i := strings.IndexByte(mediaType, ';'); i >= 0 {
				mediaType = mediaType[:i]
			}
		}
		return &wirePart{InlineData: &wireBlob{MimeType: mediaType, Data: data}}, nil
	case url != "":
		return &wirePart{FileData: &wireFileData{MimeType: mediaType, FileURI: url}}, nil
	case fileID != "":
		return &wirePart{FileData: &wireFileData{MimeType: mediaType, FileURI: fileID}}, nil
	}
	return nil, invalid("%s block without data, URL or file id", what)
}

// parseDataURL decodes a base64 data: URL.
func parseDataURL(u string) (mediaType string, data []byte, err error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return "", nil, fmt.Errorf("only base64 data: URLs are supported")
	}
	data, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("bad base64 in data: URL: %v", err)
	}
	return strings.TrimSuffix(meta, ";base64"), data, nil
}
