package stored

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session/sessiontest"
)

func TestCloneMessagesIsDeepAndEqual(t *testing.T) {
	msgs := append(sessiontest.EveryBlockKind(),
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{}}, // empty, not nil
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "e", Name: "f", Input: json.RawMessage{}},
			llm.Image{Data: []byte{}},
			llm.ToolResult{ToolUseID: "n", Content: []llm.Block{}},
			llm.ToolResult{ToolUseID: "m", Content: []llm.Block{llm.Image{Data: []byte{9}}, llm.Extension{Kind: "k", Data: json.RawMessage(`{}`)}}},
		}},
	)
	c := CloneMessages(msgs)
	if !reflect.DeepEqual(c, msgs) {
		t.Fatalf("clone differs:\n got %#v\nwant %#v", c, msgs)
	}
	for i := range c {
		if cap(c[i].Content) != len(c[i].Content) {
			t.Errorf("message %d: content capacity %d beyond its length %d", i, cap(c[i].Content), len(c[i].Content))
		}
		for _, b := range c[i].Content {
			if tu, ok := b.(llm.ToolUse); ok && cap(tu.Input) != len(tu.Input) {
				t.Errorf("message %d: tool input capacity %d beyond its length %d", i, cap(tu.Input), len(tu.Input))
			}
		}
	}
	if CloneMessages(nil) != nil || CloneMessages([]llm.Message{}) != nil {
		t.Error("no messages should clone to nil")
	}
	// Writing into every slice of the clone leaves the original as it was.
	want := CloneMessages(msgs)
	for i := range c {
		scribble(c[i].Content)
		c[i].Content = append(c[i].Content, llm.Text{Text: "appended"})
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Fatal("changing the clone changed the original")
	}
}

// scribble writes into every byte slice of bs, replaces every block, and
// appends to every byte slice (which must not reach a neighbour's bytes).
func scribble(bs []llm.Block) {
	for i, b := range bs {
		switch b := b.(type) {
		case llm.ToolUse:
			for k := range b.Input {
				b.Input[k] = 'X'
			}
			_ = append(b.Input, "spill"...)
		case llm.Image:
			for k := range b.Data {
				b.Data[k] = 0xee
			}
			_ = append(b.Data, "spill"...)
		case llm.Audio:
			for k := range b.Data {
				b.Data[k] = 0xee
			}
		case llm.File:
			for k := range b.Data {
				b.Data[k] = 0xee
			}
		case llm.Extension:
			for k := range b.Data {
				b.Data[k] = 'X'
			}
			_ = append(b.Data, "spill"...)
		case llm.ToolResult:
			scribble(b.Content)
		}
		bs[i] = llm.Text{Text: "replaced"}
	}
}
