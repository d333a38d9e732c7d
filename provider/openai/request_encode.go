package openai

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agcore/agcore/internal/jsonw"
	"github.com/agcore/agcore/llm"
)

// The request body, described once: appendRequest writes the Chat
// Completions body straight from the llm.Request into one buffer sized up
// front, with no wire structs, joined-text copies or reflection. Its
// reference is encoding/json writing wire structs (reference_test.go,
// tests only): the encoder writes exactly the bytes the reference writes
// (the same keys in the same order, the same omissions, strings escaped
// by internal/jsonw as encoding/json escapes them with
// SetEscapeHTML(false)) and returns exactly its errors, in its order: the
// request's own mistakes (no model, an unknown role, tool choice or
// response format, a block a message cannot hold, an image without data)
// first, then the first value encoding/json cannot write (raw JSON that is
// not valid, a NaN or infinite float). A new field is written here, and in
// the reference for the tests.
//
// Raw JSON (tool parameters, a response schema, OpenRouter's
// reasoning_details) is checked with json.Valid and written without its
// insignificant white space, as encoding/json compacts a json.RawMessage;
// floats are written as encoding/json writes a float64. Request.Extra is
// merged afterwards by httpx.MergeExtra. TestFastEncoderMatchesJSON and
// FuzzRequestEncoder check the bytes and errors against the reference.

// appendRequest appends the body for req to dst, or returns the error
// the reference returns for req.
func (m *Model) appendRequest(dst []byte, req *llm.Request, stream bool) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.o.Model
	}
	if model == "" {
		return dst, m.invalid("no model: set Request.Model or use openai.WithModel")
	}
	e := requestEncoder{m: m, buf: dst}
	if m.cfg.sendReasoning {
		e.toolSpan = toolCallSpans(req.Messages)
	}
	e.buf = append(e.buf, `{"model":`...)
	e.buf = jsonw.AppendString(e.buf, model)
	e.buf = append(e.buf, `,"messages":[`...)
	for i := range req.Messages {
		if err := e.message(i, &req.Messages[i]); err != nil {
			return dst, err
		}
	}
	e.buf = append(e.buf, ']')
	if err := e.rest(req, model, stream); err != nil {
		return dst, err
	}
	if e.late != nil {
		return dst, e.late
	}
	return append(e.buf, '}'), nil
}

// requestEncoder holds the state of one appendRequest.
type requestEncoder struct {
	m        *Model
	buf      []byte
	toolSpan []bool // see toolCallSpans; nil unless the model takes reasoning back
	n        int    // messages written so far
	serving  string // m.servingProvider(), once asked
	// late is the first value encoding/json could not write (raw JSON that
	// is not valid, a NaN): the reference reports it only once every other
	// error is ruled out, so the encoder goes on and returns it last.
	late error
}

// unwritable records, as the reference reports it, that v cannot be
// written.
func (e *requestEncoder) unwritable(v any) {
	if e.late != nil {
		return
	}
	if _, err := json.Marshal(v); err != nil {
		e.late = e.m.invalid("encoding the request: " + err.Error())
	}
}

// notText is the error for blocks, where, that hold more than text.
func (m *Model) notText(blocks []llm.Block, where string) error {
	for _, b := range blocks {
		if _, ok := b.(llm.Text); !ok {
			return m.invalid(fmt.Sprintf("%s can hold only text in Chat Completions, not a %s block", where, b.BlockType()))
		}
	}
	return nil
}

// open starts a message object, after a comma unless it is the first.
func (e *requestEncoder) open(role string) {
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	e.n++
	e.buf = append(e.buf, `{"role":"`...)
	e.buf = append(e.buf, role...)
	e.buf = append(e.buf, '"')
}

// message writes the messages msg maps to: a system message; a user
// message's tool results as tool messages, then its other blocks; an
// assistant message; a tool message.
func (e *requestEncoder) message(i int, msg *llm.Message) error {
	switch msg.Role {
	case llm.RoleSystem:
		if !onlyText(msg.Content) {
			return e.m.notText(msg.Content, "a system message")
		}
		e.open("system")
		e.buf = append(e.buf, `,"content":`...)
		e.buf = appendJoinedText(e.buf, msg.Content, false)
		e.buf = append(e.buf, '}')
	case llm.RoleUser:
		rest := 0
		for _, b := range msg.Content {
			tr, ok := b.(llm.ToolResult)
			if !ok {
				rest++
				continue
			}
			if err := e.toolMessage(tr.ToolUseID, tr.Content, tr.IsError); err != nil {
				return err
			}
		}
		if rest == 0 && len(msg.Content) > 0 {
			return nil
		}
		return e.userMessage(msg.Content)
	case llm.RoleAssistant:
		return e.assistantMessage(msg.Content, e.toolSpan != nil && e.toolSpan[i])
	case llm.RoleTool:
		return e.toolMessage(msg.ToolCallID, msg.Content, msg.IsError)
	default:
		return e.m.invalid(fmt.Sprintf("message %d has unknown role %q", i, msg.Role))
	}
	return nil
}

// toolMessage writes a tool message. Chat Completions has no error flag
// on tool messages, so an error result's text is prefixed with "Error: "
// unless it already starts with "error" (any case): the model reads that
// it failed.
func (e *requestEncoder) toolMessage(id string, content []llm.Block, isError bool) error {
	if !onlyText(content) {
		return e.m.notText(content, "a tool result")
	}
	e.open("tool")
	e.buf = append(e.buf, `,"content":`...)
	if isError && !startsWithError(content) {
		// "Error: " ends in ASCII, so escaping it apart from the text
		// gives the bytes of escaping the two joined.
		e.buf = appendJoinedTextBody(e.buf, content, false, "Error: ")
	} else {
		e.buf = appendJoinedText(e.buf, content, false)
	}
	if id != "" {
		e.buf = append(e.buf, `,"tool_call_id":`...)
		e.buf = jsonw.AppendString(e.buf, id)
	}
	e.buf = append(e.buf, '}')
	return nil
}

// userMessage writes a user message's blocks other than tool results: a
// plain string when they are only text, else an array of parts.
func (e *requestEncoder) userMessage(blocks []llm.Block) error {
	text := true
	for _, b := range blocks {
		switch b.(type) {
		case llm.Text, llm.ToolResult:
		default:
			text = false
		}
	}
	e.open("user")
	e.buf = append(e.buf, `,"content":`...)
	if text {
		e.buf = appendJoinedText(e.buf, blocks, false)
		e.buf = append(e.buf, '}')
		return nil
	}
	e.buf = append(e.buf, '[')
	first := true
	for _, b := range blocks {
		var p wirePart
		switch b := b.(type) {
		case llm.ToolResult:
			continue
		case llm.Text:
			if b.Text == "" {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"type":"text","text":`...)
			e.buf = jsonw.AppendString(e.buf, b.Text)
			e.buf = append(e.buf, '}')
			first = false
			continue
		default:
			var ok bool
			var err error
			if p, ok, err = e.m.part(b); err != nil {
				return err
			} else if !ok {
				continue
			}
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendPart(e.buf, &p)
		first = false
	}
	e.buf = append(e.buf, "]}"...)
	return nil
}

// appendPart writes a content part as encoding/json writes a wirePart.
func appendPart(dst []byte, p *wirePart) []byte {
	dst = append(dst, `{"type":`...)
	dst = jsonw.AppendString(dst, p.Type)
	if p.Text != nil {
		dst = append(dst, `,"text":`...)
		dst = jsonw.AppendString(dst, *p.Text)
	}
	if u := p.ImageURL; u != nil {
		dst = append(dst, `,"image_url":{"url":`...)
		dst = jsonw.AppendString(dst, u.URL)
		if u.Detail != "" {
			dst = append(dst, `,"detail":`...)
			dst = jsonw.AppendString(dst, u.Detail)
		}
		dst = append(dst, '}')
	}
	if a := p.InputAudio; a != nil {
		dst = append(dst, `,"input_audio":{"data":`...)
		dst = jsonw.AppendString(dst, a.Data)
		dst = append(dst, `,"format":`...)
		dst = jsonw.AppendString(dst, a.Format)
		dst = append(dst, '}')
	}
	if f := p.File; f != nil {
		dst = append(dst, `,"file":{`...)
		sep := false
		for _, kv := range [...]struct{ k, v string }{{"file_id", f.FileID}, {"filename", f.Filename}, {"file_data", f.FileData}} {
			if kv.v == "" {
				continue
			}
			if sep {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, kv.k...)
			dst = append(dst, `":`...)
			dst = jsonw.AppendString(dst, kv.v)
			sep = true
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// assistantMessage writes an assistant message: its text blocks joined as
// the content, its tool calls (with a Gemini signature as extra_content),
// (when withReasoning) its thinking text as reasoning_content, and
// OpenRouter's reasoning back to servers other than OpenAI's own (which
// would refuse the field). Thinking otherwise, redacted thinking and other
// extension blocks are not sent: Chat Completions has no place for them.
func (e *requestEncoder) assistantMessage(blocks []llm.Block, withReasoning bool) error {
	var hasText bool
	var calls int
	var details json.RawMessage
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.Text:
			hasText = hasText || b.Text != ""
		case llm.ToolUse:
			calls++
		case llm.Extension:
			if b.Kind == ReasoningDetailsKind && e.servingProvider() != "openai" && json.Valid(b.Data) {
				details = b.Data
			}
		case llm.Thinking, llm.RedactedThinking:
		default:
			return e.m.invalid(fmt.Sprintf("an assistant message cannot hold a %s block in Chat Completions", b.BlockType()))
		}
	}
	e.open("assistant")
	if hasText || calls == 0 || withReasoning {
		e.buf = append(e.buf, `,"content":`...)
		e.buf = appendJoinedText(e.buf, blocks, false)
	}
	if withReasoning {
		e.buf = append(e.buf, `,"reasoning_content":`...)
		e.buf = appendJoinedText(e.buf, blocks, true)
	}
	if calls > 0 {
		e.buf = append(e.buf, `,"tool_calls":[`...)
		first := true
		for _, b := range blocks {
			tu, ok := b.(llm.ToolUse)
			if !ok {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, `{"id":`...)
			e.buf = jsonw.AppendString(e.buf, tu.ID)
			e.buf = append(e.buf, `,"type":"function","function":{"name":`...)
			e.buf = jsonw.AppendString(e.buf, tu.Name)
			e.buf = append(e.buf, `,"arguments":`...)
			if text, bad := tu.Malformed(); bad {
				e.buf = jsonw.AppendString(e.buf, text)
			} else {
				e.buf = jsonw.AppendString(e.buf, []byte(tu.InputOrEmpty()))
			}
			e.buf = append(e.buf, '}')
			if tu.Signature != "" && tu.Provider == "gemini" { // Gemini's thought signature
				e.buf = append(e.buf, `,"extra_content":{"google":{"thought_signature":`...)
				e.buf = jsonw.AppendString(e.buf, tu.Signature)
				e.buf = append(e.buf, "}}"...)
			}
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, ']')
	}
	if details != nil {
		e.buf = append(e.buf, `,"reasoning_details":`...)
		e.buf = appendCompactValid(e.buf, details)
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *requestEncoder) servingProvider() string {
	if e.serving == "" {
		e.serving = e.m.servingProvider()
	}
	return e.serving
}

// rest writes the fields after the messages.
func (e *requestEncoder) rest(req *llm.Request, model string, stream bool) error {
	if len(req.Tools) > 0 {
		e.buf = append(e.buf, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"type":"function","function":{"name":`...)
			e.buf = jsonw.AppendString(e.buf, t.Name)
			if t.Description != "" {
				e.buf = append(e.buf, `,"description":`...)
				e.buf = jsonw.AppendString(e.buf, t.Description)
			}
			e.buf = append(e.buf, `,"parameters":`...)
			params := t.ParametersOrEmpty()
			if json.Valid(params) {
				e.buf = appendCompactValid(e.buf, params)
			} else {
				e.unwritable(params)
			}
			e.buf = append(e.buf, "}}"...)
		}
		e.buf = append(e.buf, ']')
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto:
	case llm.ToolChoiceNone, llm.ToolChoiceRequired:
		e.buf = append(e.buf, `,"tool_choice":`...)
		e.buf = jsonw.AppendString(e.buf, string(req.ToolChoice.Mode))
	case llm.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return e.m.invalid("tool choice names no tool")
		}
		e.buf = append(e.buf, `,"tool_choice":{"type":"function","function":{"name":`...)
		e.buf = jsonw.AppendString(e.buf, req.ToolChoice.Name)
		e.buf = append(e.buf, "}}"...)
	default:
		return e.m.invalid(fmt.Sprintf("unknown tool choice mode %q", req.ToolChoice.Mode))
	}
	if req.MaxTokens > 0 {
		if e.m.maxTokensParam(model) == "max_completion_tokens" {
			e.buf = append(e.buf, `,"max_completion_tokens":`...)
		} else {
			e.buf = append(e.buf, `,"max_tokens":`...)
		}
		e.buf = strconv.AppendInt(e.buf, int64(req.MaxTokens), 10)
	}
	var ok bool
	if req.Temperature != nil {
		e.buf = append(e.buf, `,"temperature":`...)
		if e.buf, ok = appendFloat(e.buf, *req.Temperature); !ok {
			e.unwritable(*req.Temperature)
		}
	}
	if req.TopP != nil {
		e.buf = append(e.buf, `,"top_p":`...)
		if e.buf, ok = appendFloat(e.buf, *req.TopP); !ok {
			e.unwritable(*req.TopP)
		}
	}
	if len(req.StopSequences) > 0 {
		e.buf = append(e.buf, `,"stop":[`...)
		for i, s := range req.StopSequences {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = jsonw.AppendString(e.buf, s)
		}
		e.buf = append(e.buf, ']')
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "json_object":
			e.buf = append(e.buf, `,"response_format":{"type":`...)
			e.buf = jsonw.AppendString(e.buf, rf.Type)
			e.buf = append(e.buf, '}')
		case "json_schema":
			name := rf.Name
			if name == "" {
				name = "response"
			}
			e.buf = append(e.buf, `,"response_format":{"type":"json_schema","json_schema":{"name":`...)
			e.buf = jsonw.AppendString(e.buf, name)
			if len(rf.Schema) > 0 {
				e.buf = append(e.buf, `,"schema":`...)
				if json.Valid(rf.Schema) {
					e.buf = appendCompactValid(e.buf, rf.Schema)
				} else {
					e.unwritable(rf.Schema)
				}
			}
			if rf.Strict {
				e.buf = append(e.buf, `,"strict":true`...)
			}
			e.buf = append(e.buf, "}}"...)
		default:
			return e.m.invalid(fmt.Sprintf("unknown response format %q (want text, json_object or json_schema)", rf.Type))
		}
	}
	if req.Reasoning != nil && req.Reasoning.Effort != "" {
		e.buf = append(e.buf, `,"reasoning_effort":`...)
		e.buf = jsonw.AppendString(e.buf, req.Reasoning.Effort)
	}
	if stream {
		e.buf = append(e.buf, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return nil
}

// onlyText reports whether every block is text.
func onlyText(blocks []llm.Block) bool {
	for _, b := range blocks {
		if _, ok := b.(llm.Text); !ok {
			return false
		}
	}
	return true
}

// startsWithError reports whether the joined text of blocks, all text,
// starts with "error" in any case, as strings.ToLower followed by
// strings.HasPrefix would say, without lowering (or joining) the text:
// lowering maps each code point (an invalid byte to U+FFFD) to one code
// point, and only an ASCII code point encodes as ASCII, so the lowered
// text starts with "error" exactly when its first five code points lower
// to 'e', 'r', 'r', 'o' and 'r'. Those five take at most 20 bytes.
func startsWithError(blocks []llm.Block) bool {
	var head [20]byte
	p := head[:0]
	for _, b := range blocks {
		t := b.(llm.Text).Text
		p = append(p, t[:min(len(t), cap(p)-len(p))]...)
		if len(p) == cap(p) {
			break
		}
	}
	for _, want := range "error" {
		r, size := utf8.DecodeRune(p)
		if size == 0 || unicode.ToLower(r) != want {
			return false
		}
		p = p[size:]
	}
	return true
}

// appendJoinedText writes, as one JSON string, the texts of blocks' Text
// blocks (thinking false) or Thinking blocks (thinking true) joined, as
// the reference joins them in a strings.Builder; other blocks are skipped.
func appendJoinedText(dst []byte, blocks []llm.Block, thinking bool) []byte {
	return appendJoinedTextBody(dst, blocks, thinking, "")
}

// appendJoinedTextBody is appendJoinedText with the text led by prefix,
// an ASCII text that needs no escaping.
func appendJoinedTextBody(dst []byte, blocks []llm.Block, thinking bool, prefix string) []byte {
	dst = append(dst, '"')
	dst = append(dst, prefix...)
	// Escaping the pieces one after the other writes what escaping their
	// concatenation writes unless a UTF-8 sequence starts in one piece and
	// continues in the next, which needs a piece (after some text) that
	// starts with a continuation byte. Then the pieces are joined first.
	mark, n := len(dst), 0
	for _, b := range blocks {
		s, ok := pieceOf(b, thinking)
		if !ok || s == "" {
			continue
		}
		if n > 0 && !utf8.RuneStart(s[0]) {
			return appendJoinedSlow(dst[:mark], blocks, thinking)
		}
		dst = jsonw.AppendEscaped(dst, s)
		n += len(s)
	}
	return append(dst, '"')
}

// appendJoinedSlow joins the pieces before escaping them (see
// appendJoinedTextBody); dst ends with the opening quote and prefix.
func appendJoinedSlow(dst []byte, blocks []llm.Block, thinking bool) []byte {
	var sb strings.Builder
	for _, b := range blocks {
		if s, ok := pieceOf(b, thinking); ok {
			sb.WriteString(s)
		}
	}
	dst = jsonw.AppendEscaped(dst, sb.String())
	return append(dst, '"')
}

func pieceOf(b llm.Block, thinking bool) (string, bool) {
	if thinking {
		t, ok := b.(llm.Thinking)
		return t.Text, ok
	}
	t, ok := b.(llm.Text)
	return t.Text, ok
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in plain notation unless its magnitude is
// below 1e-6 or at least 1e21, where the exponent form is used without a
// leading zero in a negative exponent (1e-7, not 1e-07). NaN and the
// infinities have no JSON form: ok is false.
func appendFloat(dst []byte, f float64) (_ []byte, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendCompactValid writes raw, which json.Valid accepts, without its
// insignificant white space, as encoding/json writes a json.RawMessage
// (with HTML escaping off, nothing else is changed: strings are copied as
// they are).
func appendCompactValid(dst []byte, raw []byte) []byte {
	start, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

// estimateRequestSize returns about the length of the body for req: the
// lengths of what it holds, with room for the keys, the punctuation and
// some escaping, so that the buffer is allocated once.
func estimateRequestSize(req *llm.Request) int {
	n := 256 + len(req.Model)
	for i := range req.Messages {
		n += 48 + len(req.Messages[i].ToolCallID) + blocksSize(req.Messages[i].Content)
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for _, s := range req.StopSequences {
		n += 4 + len(s)
	}
	if rf := req.ResponseFormat; rf != nil {
		n += 96 + len(rf.Name) + len(rf.Schema)
	}
	return n + n/32
}

func blocksSize(blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		switch b := b.(type) {
		case llm.Text:
			n += 24 + len(b.Text)
		case llm.Thinking:
			n += len(b.Text)
		case llm.ToolUse:
			// The arguments are a JSON string: their quotes are escaped.
			n += 96 + len(b.ID) + len(b.Name) + len(b.Input) + len(b.Input)/4 + len(b.Signature)
		case llm.ToolResult:
			n += 64 + len(b.ToolUseID) + blocksSize(b.Content)
		case llm.Image:
			n += 64 + len(b.URL) + len(b.MediaType) + len(b.Data)*4/3
		case llm.Audio:
			n += 64 + len(b.Data)*4/3 + len(b.URL)
		case llm.File:
			n += 64 + len(b.FileID) + len(b.Name) + len(b.MediaType) + len(b.Data)*4/3 + len(b.URL)
		case llm.Extension:
			n += len(b.Data)
		}
	}
	return n
}
