package llm

import (
	"encoding/json"
	"testing"
)

func TestMessageEqualComparesEveryField(t *testing.T) {
	t.Parallel()
	base := Message{Role: RoleUser, Content: []Block{
		Text{Text: "t"},
		Thinking{Text: "th", Signature: "s"},
		RedactedThinking{Data: "r"},
		ToolUse{ID: "i", Name: "n", Input: json.RawMessage(`{}`)},
		ToolResult{ToolUseID: "u", IsError: true, Content: []Block{Text{Text: "in"}}},
		Image{Data: []byte{1}, URL: "u", MediaType: "m", Detail: "d"},
		Audio{Data: []byte{1}, URL: "u", MediaType: "m"},
		File{Data: []byte{1}, URL: "u", FileID: "f", MediaType: "m", Name: "n"},
		Extension{Kind: "k", Data: json.RawMessage(`1`)},
	}}
	copyOf := func() Message {
		data, err := json.Marshal(base)
		if err != nil {
			t.Fatal(err)
		}
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if c := copyOf(); !base.Equal(c) || !c.Equal(base) {
		t.Fatal("a deep copy differs")
	}
	changes := []func(b []Block){
		func(b []Block) { b[0] = Text{Text: "x"} },
		func(b []Block) { b[1] = Thinking{Text: "th", Signature: "x"} },
		func(b []Block) { b[2] = RedactedThinking{Data: "x"} },
		func(b []Block) { b[3] = ToolUse{ID: "i", Name: "n", Input: json.RawMessage(`{"a":1}`)} },
		func(b []Block) { b[3] = ToolUse{ID: "x", Name: "n", Input: json.RawMessage(`{}`)} },
		func(b []Block) {
			b[4] = ToolResult{ToolUseID: "u", IsError: true, Content: []Block{Text{Text: "x"}}}
		},
		func(b []Block) { b[4] = ToolResult{ToolUseID: "u", Content: []Block{Text{Text: "in"}}} },
		func(b []Block) { b[5] = Image{Data: []byte{2}, URL: "u", MediaType: "m", Detail: "d"} },
		func(b []Block) { b[5] = Image{Data: []byte{1}, URL: "u", MediaType: "m", Detail: "x"} },
		func(b []Block) { b[6] = Audio{Data: []byte{1}, URL: "x", MediaType: "m"} },
		func(b []Block) {
			b[7] = File{Data: []byte{1}, URL: "u", FileID: "x", MediaType: "m", Name: "n"}
		},
		func(b []Block) { b[8] = Extension{Kind: "k", Data: json.RawMessage(`2`)} },
		func(b []Block) { b[8] = Text{Text: "k"} },
		func(b []Block) { b[0] = Text{Text: "t", Citations: []Citation{{Kind: CitationURL, URL: "u"}}} },
		func(b []Block) { b[1] = Thinking{Text: "th", Signature: "s", Provider: "gemini"} },
		func(b []Block) { b[1] = Thinking{Text: "th", Signature: "s", ID: "rs_1"} },
		func(b []Block) { b[3] = ToolUse{ID: "i", Name: "n", Input: json.RawMessage(`{}`), Signature: "s"} },
		func(b []Block) { b[3] = ToolUse{ID: "i", Name: "n", Input: json.RawMessage(`{}`), Provider: "gemini"} },
	}
	for i, change := range changes {
		c := copyOf()
		change(c.Content)
		if base.Equal(c) || c.Equal(base) {
			t.Errorf("change %d not seen", i)
		}
	}
}

func TestMessageEqualComparesTheMessageFields(t *testing.T) {
	t.Parallel()
	base := ToolResultText("c", "x", false)
	for i, o := range []Message{
		ToolResultText("d", "x", false),
		ToolResultText("c", "x", true),
		{Role: RoleUser, ToolCallID: "c", Content: base.Content},
		{Role: RoleTool, ToolCallID: "c", Content: append(base.Clone().Content, Text{})},
	} {
		if base.Equal(o) {
			t.Errorf("change %d not seen", i)
		}
	}
	if !base.Equal(base) || !base.Equal(base.Clone()) {
		t.Error("a message differs from itself")
	}
}

func TestMessageEqualNilAndEmpty(t *testing.T) {
	t.Parallel()
	a := Message{Role: RoleAssistant, Content: []Block{ToolUse{ID: "i", Name: "n"}, Image{}}}
	b := Message{Role: RoleAssistant, Content: []Block{ToolUse{ID: "i", Name: "n", Input: json.RawMessage{}}, Image{Data: []byte{}}}}
	if !a.Equal(b) {
		t.Error("nil and empty byte slices differ")
	}
	if !(Message{Role: RoleUser}).Equal(Message{Role: RoleUser, Content: []Block{}}) {
		t.Error("nil and empty content differ")
	}
	if (Message{Role: RoleUser, Content: []Block{nil}}).Equal(Message{Role: RoleUser, Content: []Block{Text{}}}) {
		t.Error("a nil block equals a text")
	}
}
