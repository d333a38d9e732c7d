package llm

import (
	"bytes"
)

// Equal reports whether m and o are the same message: the same role, tool
// call id and error flag, and equal blocks in the same order, field by
// field, byte slices by content (a nil slice equals an empty one, as they
// encode the same). Equal messages encode to the same storage JSON.
//
// Strings and slices that share memory compare at once, so comparing a
// message with a copy that shares its texts (a store's copy of a history,
// say) costs a few steps a block.
func (m Message) Equal(o Message) bool {
	if m.Role != o.Role || m.ToolCallID != o.ToolCallID || m.IsError != o.IsError || len(m.Content) != len(o.Content) {
		return false
	}
	if len(m.Content) > 0 && &m.Content[0] == &o.Content[0] {
		return true
	}
	return equalBlocks(m.Content, o.Content)
}

func equalBlocks(a, b []Block) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalBlock(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalBlock(a, b Block) bool {
	switch x := a.(type) {
	case Text:
		y, ok := b.(Text)
		return ok && x.Text == y.Text && equalCitations(x.Citations, y.Citations)
	case Thinking:
		y, ok := b.(Thinking)
		return ok && x == y
	case RedactedThinking:
		y, ok := b.(RedactedThinking)
		return ok && x == y
	case ToolUse:
		y, ok := b.(ToolUse)
		return ok && x.ID == y.ID && x.Name == y.Name && bytes.Equal(x.Input, y.Input) &&
			x.Signature == y.Signature && x.Provider == y.Provider
	case ToolResult:
		y, ok := b.(ToolResult)
		return ok && x.ToolUseID == y.ToolUseID && x.IsError == y.IsError && equalBlocks(x.Content, y.Content)
	case Image:
		y, ok := b.(Image)
		return ok && x.URL == y.URL && x.MediaType == y.MediaType && x.Detail == y.Detail && bytes.Equal(x.Data, y.Data)
	case Audio:
		y, ok := b.(Audio)
		return ok && x.URL == y.URL && x.MediaType == y.MediaType && bytes.Equal(x.Data, y.Data)
	case File:
		y, ok := b.(File)
		return ok && x.URL == y.URL && x.FileID == y.FileID && x.MediaType == y.MediaType && x.Name == y.Name && bytes.Equal(x.Data, y.Data)
	case Extension:
		y, ok := b.(Extension)
		return ok && x.Kind == y.Kind && bytes.Equal(x.Data, y.Data)
	}
	// Block is sealed: the kinds above are all there are, so only nil is
	// left. (No reflection here: workflow code, which must be
	// deterministic, compares messages with Equal.)
	return a == nil && b == nil
}

// equalCitations compares two citation lists; nil equals empty, as they
// encode the same (omitted).
func equalCitations(a, b []Citation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
