package stored

import (
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/llm"
)

// CloneMessages returns a deep copy of msgs for a caller that may change
// anything in it: no message array, block slice or byte slice is shared
// with msgs. Blocks that hold only strings (text, thinking, redacted
// thinking) cannot be changed through a Block and are shared as they are;
// the others are copied. The copies' block and byte slices are carved out
// of a few large arrays, each with its capacity cut to its length, so that
// appending to one never writes into another. Nil slices stay nil, empty
// ones empty.
func CloneMessages(msgs []llm.Message) []llm.Message {
	if len(msgs) == 0 {
		return nil
	}
	var a arena
	for i := range msgs {
		a.blocks += len(msgs[i].Content)
		for _, b := range msgs[i].Content {
			a.bytes += mutableBytes(b)
		}
	}
	a.blockBuf = make([]llm.Block, a.blocks)
	a.byteBuf = make([]byte, a.bytes)
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Content = a.cloneBlocks(m.Content)
		out[i] = m
	}
	return out
}

// mutableBytes returns how many bytes of b a copy must not share.
func mutableBytes(b llm.Block) int {
	switch b := b.(type) {
	case llm.ToolUse:
		return len(b.Input)
	case llm.Image:
		return len(b.Data)
	case llm.Audio:
		return len(b.Data)
	case llm.File:
		return len(b.Data)
	case llm.Extension:
		return len(b.Data)
	}
	return 0 // nested tool_result content is copied on its own
}

// arena hands out the slices of one CloneMessages call.
type arena struct {
	blocks, bytes int // sizes of the top-level blocks and their bytes, counted first
	blockBuf      []llm.Block
	byteBuf       []byte
}

func (a *arena) blockSlice(n int) []llm.Block {
	if n == 0 {
		return []llm.Block{}
	}
	if n > len(a.blockBuf) { // nested content, not counted in advance
		return make([]llm.Block, n)
	}
	s := a.blockBuf[:n:n]
	a.blockBuf = a.blockBuf[n:]
	return s
}

func (a *arena) clone(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) == 0:
		return []byte{}
	}
	if len(b) > len(a.byteBuf) { // nested content, not counted in advance
		return append([]byte{}, b...)
	}
	s := a.byteBuf[:len(b):len(b)]
	a.byteBuf = a.byteBuf[len(b):]
	copy(s, b)
	return s
}

func (a *arena) cloneBlocks(bs []llm.Block) []llm.Block {
	if bs == nil {
		return nil
	}
	out := a.blockSlice(len(bs))
	for i, b := range bs {
		switch b := b.(type) {
		case llm.Text, llm.Thinking, llm.RedactedThinking: // strings only
			out[i] = b
		case llm.Image:
			b.Data = a.clone(b.Data)
			out[i] = b
		case llm.Audio:
			b.Data = a.clone(b.Data)
			out[i] = b
		case llm.File:
			b.Data = a.clone(b.Data)
			out[i] = b
		case llm.ToolUse:
			b.Input = json.RawMessage(a.clone(b.Input))
			out[i] = b
		case llm.ToolResult:
			b.Content = (&arena{}).cloneBlocks(b.Content)
			out[i] = b
		case llm.Extension:
			b.Data = json.RawMessage(a.clone(b.Data))
			out[i] = b
		default: // a block kind this package predates: copy it through its JSON
			data, err := llm.MarshalBlock(b)
			if err != nil {
				panic(fmt.Sprintf("session: stored block %T no longer encodes: %v", b, err))
			}
			c, err := llm.UnmarshalBlock(data)
			if err != nil {
				panic(fmt.Sprintf("session: stored block %T no longer decodes: %v", b, err))
			}
			out[i] = c
		}
	}
	return out
}
