package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// everyBlock holds one block of every kind, with every field set.
func everyBlock() []Block {
	return []Block{
		Text{Text: "hello, 世界"},
		Image{Data: []byte{0x89, 'P', 'N', 'G'}, MediaType: "image/png", Detail: "high"},
		Image{URL: "https://example.com/cat.jpg", Detail: "low"},
		Audio{Data: []byte("RIFF"), MediaType: "audio/wav"},
		Audio{URL: "https://example.com/a.mp3", MediaType: "audio/mpeg"},
		File{Data: []byte("%PDF-1.7"), MediaType: "application/pdf", Name: "a.pdf"},
		File{FileID: "file-abc", URL: "https://example.com/b.pdf"},
		ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Beijing","days":[1,2]}`)},
		ToolUse{ID: "call_2", Name: "no_args", Input: json.RawMessage(`{}`)},
		ToolResult{ToolUseID: "call_1", Content: []Block{Text{Text: "Sunny"}, Image{URL: "https://x/y.png"}}, IsError: true},
		Thinking{Text: "Let me think.", Signature: "EqQBCkYIARgCIkD..."},
		Thinking{Text: "no signature"},
		RedactedThinking{Data: "EmwKAhgBEgy3va3pzix/LafPsn4a"},
		Extension{Kind: "server_tool_use", Data: json.RawMessage(`{"id":"srv_1","name":"web_search"}`)},
	}
}

func TestMessageRoundTripEveryBlockKind(t *testing.T) {
	t.Parallel()
	msgs := []Message{
		{Role: RoleSystem, Content: []Block{Text{Text: "be brief"}}},
		{Role: RoleUser, Content: everyBlock()},
		{Role: RoleAssistant, Content: everyBlock()},
		{Role: RoleTool, ToolCallID: "call_1", IsError: true, Content: []Block{Text{Text: "boom"}}},
		{Role: RoleTool, ToolCallID: "call_2", Content: []Block{Text{Text: "ok"}}},
		{Role: RoleAssistant},
	}
	for _, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal %s: %v", m.Role, err)
		}
		var back Message
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("unmarshal %s: %v\n%s", m.Role, err, data)
		}
		if !reflect.DeepEqual(m, back) {
			t.Errorf("round trip changed the message\n got %#v\nwant %#v\njson %s", back, m, data)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(data) {
			t.Errorf("encoding is not stable:\n%s\n%s", data, again)
		}
	}
}

func TestStorageFormatMatchesSeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"user text", UserText("hello"), `{"type":"user","content":[{"type":"text","text":"hello"}]}`},
		{"assistant tool use", Message{Role: RoleAssistant, Content: []Block{Text{Text: "Hi!"}, ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Beijing"}`)}}},
			`{"type":"assistant","content":[{"type":"text","text":"Hi!"},{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Beijing"}}]}`},
		{"tool result", ToolResultText("call_1", "Sunny, 25°C", false),
			`{"type":"tool_result","tool_call_id":"call_1","content":[{"type":"text","text":"Sunny, 25°C"}],"is_error":false}`},
		{"system", SystemText("s"), `{"type":"system","content":[{"type":"text","text":"s"}]}`},
		{"image in user content", Message{Role: RoleUser, Content: []Block{Image{Data: []byte("abc"), MediaType: "image/png", Detail: "auto"}}},
			`{"type":"user","content":[{"type":"image","data":"YWJj","media_type":"image/png","detail":"auto"}]}`},
		{"thinking with signature", Message{Role: RoleAssistant, Content: []Block{Thinking{Text: "t", Signature: "sig"}}},
			`{"type":"assistant","content":[{"type":"thinking","text":"t","signature":"sig"}]}`},
		{"tool use without input encodes an empty object", Message{Role: RoleAssistant, Content: []Block{ToolUse{ID: "a", Name: "b"}}},
			`{"type":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestUnknownBlockDecodesToExtension(t *testing.T) {
	t.Parallel()
	in := `{"type":"assistant","content":[{"type":"web_search_result","url":"https://x","n":1}]}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	ext, ok := m.Content[0].(Extension)
	if !ok {
		t.Fatalf("block = %T, want Extension", m.Content[0])
	}
	if ext.Kind != "web_search_result" || !strings.Contains(string(ext.Data), `"url":"https://x"`) {
		t.Errorf("extension = %+v", ext)
	}
	// Once decoded, the extension round-trips stably.
	data, _ := json.Marshal(m)
	var back Message
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, back) {
		t.Errorf("extension did not round-trip: %s", data)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"no message type", `{"content":[]}`},
		{"unknown message type", `{"type":"robot","content":[]}`},
		{"block without type", `{"type":"user","content":[{"text":"x"}]}`},
		{"content not a list", `{"type":"user","content":"x"}`},
		{"not an object", `[1]`},
	}
	for _, tc := range tests {
		var m Message
		if err := json.Unmarshal([]byte(tc.in), &m); err == nil {
			t.Errorf("%s: decoded without error: %+v", tc.name, m)
		}
	}
}

func TestMarshalRejectsInvalidToolInput(t *testing.T) {
	t.Parallel()
	m := Message{Role: RoleAssistant, Content: []Block{ToolUse{ID: "a", Name: "b", Input: json.RawMessage(`{"x":`)}}}
	if _, err := json.Marshal(m); err == nil {
		t.Fatal("marshal accepted a tool_use whose input is not JSON")
	}
}

func FuzzMessageDecode(f *testing.F) {
	for _, m := range []Message{
		{Role: RoleUser, Content: everyBlock()},
		ToolResultText("c", "r", true),
		SystemText("s"),
	} {
		data, _ := json.Marshal(m)
		f.Add(data)
	}
	f.Add([]byte(`{"type":"assistant","content":[{"type":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		// Whatever decodes must encode, and decode again to the same value.
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("decoded message does not encode: %v (%#v)", err, m)
		}
		var back Message
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, enc)
		}
		enc2, _ := json.Marshal(back)
		if string(enc) != string(enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// refMarshal is the storage form as encoding/json writes it:
// Message.MarshalJSON must make the same bytes.
func refMarshal(m Message) ([]byte, error) {
	if m.Role == "" {
		return nil, fmt.Errorf("llm: message has no role")
	}
	j := messageJSON{Type: m.Role, Content: blocksJSON(m.Content)}
	if m.Role == RoleTool {
		j.ToolCallID = m.ToolCallID
		isErr := m.IsError
		j.IsError = &isErr
	}
	if j.Content == nil {
		j.Content = blocksJSON{}
	}
	return json.Marshal(j)
}

func sameAsRefMarshal(t *testing.T, m Message) {
	t.Helper()
	want, werr := refMarshal(m)
	got, err := m.MarshalJSON()
	if (err == nil) != (werr == nil) || string(got) != string(want) {
		t.Fatalf("MarshalJSON = %s, %v\nreference   = %s, %v", got, err, want, werr)
	}
	if err != nil {
		return
	}
	if outer, err := json.Marshal(m); err != nil || string(outer) != string(want) {
		t.Fatalf("json.Marshal = %s, %v\nreference    = %s", outer, err, want)
	}
}

// oddMessages are messages whose encoding exercises what encoding/json
// escapes, with every role, block kind and tool field.
func oddMessages(text string) []Message {
	return []Message{
		{Role: RoleSystem, Content: []Block{Text{Text: text}}},
		{Role: RoleUser, Content: everyBlock()},
		{Role: RoleAssistant, Content: append(everyBlock(), Text{Text: text, Citations: []Citation{{Title: text, URL: text}}})},
		{Role: RoleTool, ToolCallID: text, IsError: true, Content: []Block{Text{Text: text}}},
		{Role: RoleTool, Content: []Block{ToolResult{ToolUseID: text, Content: []Block{Text{Text: text}}}}},
		{Role: RoleTool, ToolCallID: "call_2"},
		{Role: RoleAssistant},
		{Role: Role(text), ToolCallID: text},
		{Role: RoleUser, Content: []Block{nil}},
		{},
	}
}

func TestMarshalMatchesReference(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"plain", "<b>&amp;</b> \u2028\u2029 \x00\x1f \xff\xfe ☃ \"q\" \\ /", ""} {
		for _, m := range oddMessages(text) {
			sameAsRefMarshal(t, m)
		}
	}
}

func FuzzMarshalMatchesReference(f *testing.F) {
	f.Add("<&>\u2028", "call_1", true)
	f.Add("\xff", "", false)
	f.Fuzz(func(t *testing.T, text, id string, isErr bool) {
		for _, m := range oddMessages(text) {
			m.ToolCallID, m.IsError = id, isErr
			sameAsRefMarshal(t, m)
		}
	})
}
