package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// messageJSON is the storage form of a Message.
type messageJSON struct {
	Type       Role       `json:"type"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Content    blocksJSON `json:"content"`
	IsError    *bool      `json:"is_error,omitempty"`
}

// MarshalJSON encodes m in the storage form {"type": role, "content": [...]};
// a tool-result message also carries "tool_call_id" and "is_error". The
// bytes are those json.Marshal makes of messageJSON (compact,
// HTML-escaped), written directly around each block's MarshalBlock: the
// session stores encode every message they append with it.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Role == "" {
		return nil, fmt.Errorf("llm: message has no role")
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"type":`...)
	buf = appendString(buf, string(m.Role))
	if m.Role == RoleTool && m.ToolCallID != "" {
		buf = append(buf, `,"tool_call_id":`...)
		buf = appendString(buf, m.ToolCallID)
	}
	buf = append(buf, `,"content":[`...)
	for i, b := range m.Content {
		if i > 0 {
			buf = append(buf, ',')
		}
		data, err := MarshalBlock(b)
		if err != nil {
			return nil, err
		}
		buf = append(buf, data...)
	}
	buf = append(buf, ']')
	if m.Role == RoleTool {
		buf = strconv.AppendBool(append(buf, `,"is_error":`...), m.IsError)
	}
	return append(buf, '}'), nil
}

// appendString appends s as encoding/json writes a string: the roles
// literally, anything else through json.Marshal.
func appendString(buf []byte, s string) []byte {
	switch Role(s) {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return append(append(append(buf, '"'), s...), '"')
	}
	data, _ := json.Marshal(s) // a string always encodes
	return append(buf, data...)
}

// unmarshalStd decodes a message through encoding/json: the slow path of
// UnmarshalJSON, for input its one-pass decoder leaves alone. It defines
// what UnmarshalJSON accepts.
func (m *Message) unmarshalStd(data []byte) error {
	var j messageJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	switch j.Type {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	case "":
		return fmt.Errorf("llm: message has no \"type\"")
	default:
		return fmt.Errorf("llm: unknown message type %q", j.Type)
	}
	*m = Message{Role: j.Type, Content: []Block(j.Content), ToolCallID: j.ToolCallID}
	if j.IsError != nil {
		m.IsError = *j.IsError
	}
	return nil
}

// blocksJSON is a []Block that encodes each block with its "type" tag.
type blocksJSON []Block

func (bs blocksJSON) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, b := range bs {
		if i > 0 {
			buf.WriteByte(',')
		}
		data, err := MarshalBlock(b)
		if err != nil {
			return nil, err
		}
		buf.Write(data)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

func (bs *blocksJSON) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	if len(raws) == 0 {
		*bs = nil
		return nil
	}
	out := make([]Block, 0, len(raws))
	for _, raw := range raws {
		b, err := unmarshalBlockStd(raw)
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	*bs = out
	return nil
}

// MarshalBlock encodes one block with its "type" tag.
func MarshalBlock(b Block) ([]byte, error) {
	switch b := b.(type) {
	case Text:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text
		}{TypeText, b})
	case Image:
		return json.Marshal(struct {
			Type string `json:"type"`
			Image
		}{TypeImage, b})
	case Audio:
		return json.Marshal(struct {
			Type string `json:"type"`
			Audio
		}{TypeAudio, b})
	case File:
		return json.Marshal(struct {
			Type string `json:"type"`
			File
		}{TypeFile, b})
	case ToolUse:
		if len(b.Input) == 0 {
			b.Input = json.RawMessage("{}")
		}
		if !json.Valid(b.Input) {
			return nil, fmt.Errorf("llm: tool_use %q input is not valid JSON", b.ID)
		}
		return json.Marshal(struct {
			Type string `json:"type"`
			ToolUse
		}{TypeToolUse, b})
	case ToolResult:
		return json.Marshal(struct {
			Type      string     `json:"type"`
			ToolUseID string     `json:"tool_use_id"`
			Content   blocksJSON `json:"content"`
			IsError   bool       `json:"is_error"`
		}{TypeToolResult, b.ToolUseID, nonNil(b.Content), b.IsError})
	case Thinking:
		return json.Marshal(struct {
			Type string `json:"type"`
			Thinking
		}{TypeThinking, b})
	case RedactedThinking:
		return json.Marshal(struct {
			Type string `json:"type"`
			RedactedThinking
		}{TypeRedactedThinking, b})
	case Extension:
		if len(b.Data) > 0 && !json.Valid(b.Data) {
			return nil, fmt.Errorf("llm: extension %q data is not valid JSON", b.Kind)
		}
		return json.Marshal(struct {
			Type string `json:"type"`
			Extension
		}{TypeExtension, b})
	case nil:
		return nil, fmt.Errorf("llm: nil block")
	default:
		return nil, fmt.Errorf("llm: unknown block %T", b)
	}
}

func nonNil(bs []Block) blocksJSON {
	if bs == nil {
		return blocksJSON{}
	}
	return blocksJSON(bs)
}

// unmarshalBlockStd decodes one tagged block through encoding/json: the
// slow path of UnmarshalBlock. An unknown "type" yields an Extension
// holding the whole object.
func unmarshalBlockStd(data []byte) (Block, error) {
	var tag struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &tag); err != nil {
		return nil, err
	}
	switch tag.Type {
	case TypeText:
		var b Text
		return b, json.Unmarshal(data, &b)
	case TypeImage:
		var b Image
		return b, json.Unmarshal(data, &b)
	case TypeAudio:
		var b Audio
		return b, json.Unmarshal(data, &b)
	case TypeFile:
		var b File
		return b, json.Unmarshal(data, &b)
	case TypeToolUse:
		var b ToolUse
		if err := json.Unmarshal(data, &b); err != nil {
			return nil, err
		}
		if len(b.Input) == 0 || bytes.Equal(b.Input, []byte("null")) {
			b.Input = json.RawMessage("{}")
		}
		return b, nil
	case TypeToolResult:
		var j struct {
			ToolUseID string     `json:"tool_use_id"`
			Content   blocksJSON `json:"content"`
			IsError   bool       `json:"is_error"`
		}
		if err := json.Unmarshal(data, &j); err != nil {
			return nil, err
		}
		return ToolResult{ToolUseID: j.ToolUseID, Content: []Block(j.Content), IsError: j.IsError}, nil
	case TypeThinking:
		var b Thinking
		return b, json.Unmarshal(data, &b)
	case TypeRedactedThinking:
		var b RedactedThinking
		return b, json.Unmarshal(data, &b)
	case TypeExtension:
		var b Extension
		return b, json.Unmarshal(data, &b)
	case "":
		return nil, fmt.Errorf("llm: content block has no \"type\"")
	default:
		return Extension{Kind: tag.Type, Data: append(json.RawMessage(nil), data...)}, nil
	}
}
