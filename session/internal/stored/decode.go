package stored

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// DecodeMessage decodes one message from its storage JSON, exactly as
// (*llm.Message).UnmarshalJSON does but about three times faster for the
// common case.
//
// llm's decoder reads each block twice (once for its "type", once into its
// struct) and re-validates the JSON at every level, which dominates loading
// a long session. This one decodes a whole message in one pass into a
// union of every block's fields. It is only a shortcut: whenever the input
// is anything but a well-formed message of known block kinds, or the one
// pass fails for any reason, it hands the input to llm's decoder, whose
// result (or error) is the answer. TestFastDecodeCoversEveryField keeps the
// union in step with llm's block types.
func DecodeMessage(data []byte, m *llm.Message) error {
	if decodeFast(data, m) {
		return nil
	}
	return m.UnmarshalJSON(data)
}

// wireMessage and wireBlock mirror llm's storage JSON. Every field a block
// kind has is typed as in that kind's struct, except "data" (bytes in
// image/audio/file, a string in redacted_thinking, raw JSON in extension),
// which is kept raw and decoded per kind.
type wireMessage struct {
	Type       llm.Role    `json:"type"`
	ToolCallID string      `json:"tool_call_id"`
	Content    []wireBlock `json:"content"`
	IsError    *bool       `json:"is_error"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
	MediaType string          `json:"media_type"`
	Detail    string          `json:"detail"`
	FileID    string          `json:"file_id"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   []wireBlock     `json:"content"`
	IsError   bool            `json:"is_error"`
	Signature string          `json:"signature"`
	Kind      string          `json:"kind"`
}

// decodeFast decodes data into m and reports true, or reports false (m
// then holds garbage) when llm's decoder must decide.
func decodeFast(data []byte, m *llm.Message) bool {
	var w wireMessage
	if json.Unmarshal(data, &w) != nil {
		return false
	}
	switch w.Type {
	case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
	default:
		return false
	}
	content, ok := wireBlocks(w.Content)
	if !ok {
		return false
	}
	*m = llm.Message{Role: w.Type, Content: content, ToolCallID: w.ToolCallID}
	if w.IsError != nil {
		m.IsError = *w.IsError
	}
	return true
}

func wireBlocks(ws []wireBlock) ([]llm.Block, bool) {
	if len(ws) == 0 {
		return nil, true
	}
	out := make([]llm.Block, len(ws))
	for i := range ws {
		b, ok := ws[i].block()
		if !ok {
			return nil, false
		}
		out[i] = b
	}
	return out, true
}

// block converts w to its block kind; false for a kind (or a "data" value)
// it leaves to llm.
func (w *wireBlock) block() (llm.Block, bool) {
	switch w.Type {
	case llm.TypeText:
		return llm.Text{Text: w.Text}, true
	case llm.TypeImage:
		b := llm.Image{URL: w.URL, MediaType: w.MediaType, Detail: w.Detail}
		return b, rawBytes(w.Data, &b.Data)
	case llm.TypeAudio:
		b := llm.Audio{URL: w.URL, MediaType: w.MediaType}
		return b, rawBytes(w.Data, &b.Data)
	case llm.TypeFile:
		b := llm.File{URL: w.URL, FileID: w.FileID, MediaType: w.MediaType, Name: w.Name}
		return b, rawBytes(w.Data, &b.Data)
	case llm.TypeToolUse:
		in := w.Input
		if len(in) == 0 || bytes.Equal(in, []byte("null")) {
			in = json.RawMessage("{}")
		}
		return llm.ToolUse{ID: w.ID, Name: w.Name, Input: in}, true
	case llm.TypeToolResult:
		content, ok := wireBlocks(w.Content)
		return llm.ToolResult{ToolUseID: w.ToolUseID, Content: content, IsError: w.IsError}, ok
	case llm.TypeThinking:
		return llm.Thinking{Text: w.Text, Signature: w.Signature}, true
	case llm.TypeRedactedThinking:
		var b llm.RedactedThinking
		if w.Data != nil && json.Unmarshal(w.Data, &b.Data) != nil {
			return nil, false
		}
		return b, true
	case llm.TypeExtension:
		return llm.Extension{Kind: w.Kind, Data: w.Data}, true
	default: // unknown kinds keep their whole original object: llm's job
		return nil, false
	}
}

// rawBytes decodes a base64 "data" value as encoding/json decodes a []byte
// field.
func rawBytes(raw json.RawMessage, dst *[]byte) bool {
	return raw == nil || json.Unmarshal(raw, dst) == nil
}
