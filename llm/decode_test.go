package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The reference decoder: the straightforward one UnmarshalJSON replaced,
// which decodes each level through encoding/json. UnmarshalJSON and
// UnmarshalBlock must accept exactly the inputs it accepts and decode them
// to the same values; the tests and the fuzz target below compare them.

type refMessageJSON struct {
	Type       Role      `json:"type"`
	ToolCallID string    `json:"tool_call_id"`
	Content    refBlocks `json:"content"`
	IsError    *bool     `json:"is_error"`
}

func refMessage(data []byte) (Message, error) {
	var j refMessageJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Message{}, err
	}
	switch j.Type {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	case "":
		return Message{}, fmt.Errorf("no type")
	default:
		return Message{}, fmt.Errorf("unknown type %q", j.Type)
	}
	m := Message{Role: j.Type, Content: []Block(j.Content), ToolCallID: j.ToolCallID}
	if j.IsError != nil {
		m.IsError = *j.IsError
	}
	return m, nil
}

type refBlocks []Block

func (bs *refBlocks) UnmarshalJSON(data []byte) error {
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
		b, err := refBlock(raw)
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	*bs = out
	return nil
}

func refBlock(data []byte) (Block, error) {
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
			ToolUseID string    `json:"tool_use_id"`
			Content   refBlocks `json:"content"`
			IsError   bool      `json:"is_error"`
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
		return nil, fmt.Errorf("no type")
	default:
		return Extension{Kind: tag.Type, Data: bytes.Clone(data)}, nil
	}
}

// filled returns a block of b's kind with every field set to a non-zero
// value, found by reflection, so that a field added to a block type is
// covered without anyone remembering to add it here.
func filled(t *testing.T, b Block) Block {
	t.Helper()
	v := reflect.New(reflect.TypeOf(b)).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(fmt.Sprintf(`{"field":%q}`, name))))
		case f.Type() == reflect.TypeFor[[]Citation]():
			f.Set(reflect.ValueOf([]Citation{
				{Kind: CitationURL, URL: "https://example.com/a", Title: "A \"page\"", CitedText: "quoted", Start: 1, End: 9},
				{Kind: CitationDocument, Document: 2, Title: "doc", Unit: "page", From: 3, To: 4},
			}))
		case f.Type() == reflect.TypeFor[[]Block]():
			f.Set(reflect.ValueOf([]Block{Text{Text: "nested"}, Image{Data: []byte{9}, URL: "u"}}))
		case f.Kind() == reflect.String:
			f.SetString("value of " + name + " \"quoted\"\n")
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			f.SetBytes([]byte("bytes of " + name))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("%T.%s has type %s, which this test does not know how to fill; teach it, and the decoder in decode.go",
				b, name, f.Type())
		}
	}
	return v.Interface().(Block)
}

// TestFastPathCoversEveryField: the one-pass decoder takes every field of
// every block kind as MarshalJSON writes it (else loading a session would
// quietly fall back to the slow path), and decodes it as the reference
// does.
func TestFastPathCoversEveryField(t *testing.T) {
	t.Parallel()
	kinds := []Block{Text{}, Image{}, Audio{}, File{}, ToolUse{}, ToolResult{}, Thinking{}, RedactedThinking{}, Extension{}}
	for _, k := range kinds {
		b := filled(t, k)
		for _, role := range []Role{RoleUser, RoleTool} {
			m := Message{Role: role, Content: []Block{b}, ToolCallID: "c", IsError: role == RoleTool}
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("%T: %v", b, err)
			}
			d := decoder{data: data}
			fast, ok := d.message()
			if !ok || !d.atEnd() {
				t.Fatalf("%T: the one-pass decoder declined a message as MarshalJSON writes it: %s", b, data)
			}
			want, err := refMessage(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast, want) {
				t.Errorf("%T: decoded differently (a field the decoder does not know?)\nfast %#v\nref  %#v\njson %s", b, fast, want, data)
			}
		}
	}
}

// oddInputs are inputs on which a one-pass decoder could go wrong.
var oddInputs = []string{
	`{"type":"user","content":[{"type":"text","text":"a"}]}`,
	`{"type":"user","content":null}`,
	`{"type":"user"}`,
	`{"type":"user","content":[]}`,
	` {"type" : "user" , "content" : [ { "type" : "text" , "text" : "a" } ] } `,
	`{"content":[{"type":"text","text":"a"}],"type":"assistant"}`,
	`{"type":"tool_result","tool_call_id":"c","content":[],"is_error":true}`,
	`{"type":"tool_result","tool_call_id":"c","is_error":null}`,
	`{"type":"tool_result","tool_call_id":null,"is_error":false}`,
	`{"type":"tool_result","is_error":true,"is_error":null}`,
	`{"type":"user","tool_call_id":"c","content":[{"type":"text","text":"a"}]}`,
	`{"type":"user","extra":{"a":[1,2]},"content":[]}`,
	`{"type":"user","extra":{"a":[1,2,}},"content":[]}`,
	`{"TYPE":"user","Content":[{"Type":"text","TEXT":"a"}]}`,
	`{"type":"user","Type":"assistant"}`,
	`{"type":"user","content":[{"type":"text","Text":"a"}]}`,
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"\u017fignature\":\"a\"}]}",
	"{\"type\":\"user\",\"content\":[{\"type\":\"thinking\",\"\u017fignature\":\"a\"}]}",
	"{\"type\":\"user\",\"content\":[{\"type\":\"tool_use\",\"\u0131d\":\"a\"}]}",
	`{"type":"user","content":[{"type":"tool_use","\u0069d":"a"}]}`,
	`{"type":"user","type":"assistant","content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"type":"user","content":[{"type":"text","text":"a","text":null}]}`,
	`{"type":"user","content":[{"type":"text","type":"image","url":"u"}]}`,
	`{"type":"user","content":[{"type":"text","type":null,"text":"t"}]}`,
	`{"type":"user","content":[{"type":"mystery","TYPE":"text","text":"t"}]}`,
	`{"type":"user","content":[{"text":"t","type":"text"}]}`,
	`{"type":"user","content":[{"type":"text","text":"a","is_error":"not a bool","content":"not blocks","url":5}]}`,
	`{"type":"user","content":[{"type":"text","text":5}]}`,
	`{"type":"user","content":[{"type":"image","data":null,"url":"u"}]}`,
	`{"type":"user","content":[{"type":"image","data":""}]}`,
	`{"type":"user","content":[{"type":"image","data":"AAEC\nAwQF"}]}`,
	`{"type":"user","content":[{"type":"image","data":"AAEC\\nAwQF"}]}`,
	`{"type":"user","content":[{"type":"image","data":"AAE="}]}`,
	`{"type":"user","content":[{"type":"image","data":"AAE"}]}`,
	`{"type":"user","content":[{"type":"image","data":"not base64!"}]}`,
	`{"type":"user","content":[{"type":"image","data":[1,2,3]}]}`,
	`{"type":"user","content":[{"type":"image","data":[256]}]}`,
	`{"type":"user","content":[{"type":"image","data":5}]}`,
	`{"type":"user","content":[{"type":"file","file_id":"f","name":"n","data":"AAEC"}]}`,
	`{"type":"user","content":[{"type":"redacted_thinking","data":null}]}`,
	`{"type":"user","content":[{"type":"redacted_thinking","data":"x\ty"}]}`,
	`{"type":"user","content":[{"type":"redacted_thinking","data":5}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":null}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k"}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":[1, 2]}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":[1, 2,]}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":{"a":-0.5e+10,"b":[true,false,null,"\u00e9\n"]}}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":01}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":-}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":1.}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":1e}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":"\x"}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":"\u12"}]}`,
	"{\"type\":\"user\",\"content\":[{\"type\":\"extension\",\"kind\":\"k\",\"data\":\"raw \xff kept\"}]}",
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n"}]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n","input":null}]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n","input": { "x" : 1 } }]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n","input":"a string"}]}`,
	`{"type":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"mystery","x":1}]}]}`,
	`{"type":"user","content":[{"type":"tool_result","tool_use_id":"a","content":null,"is_error":true}]}`,
	`{"type":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"tool_result","content":[{"type":"text","text":"deep"}]}]}]}`,
	`{"type":"user","content":[{"type":"mystery","text":"x"}]}`,
	`{"type":"user","content":[ {"type":"mystery", "n": [1, {"a": "b"}]} ]}`,
	`{"type":"user","content":[{"type":"myst\u0065ry"}]}`,
	`{"type":"user","content":[{"type":"t\u0065xt","text":"escaped tag"}]}`,
	`{"type":"user","content":[{"type":"t\u0065xt","text":"escaped \"tag\" and text"}]}`,
	`{"type":"user","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"x\"y","name":"n\\m","input":{}}]}`,
	`{"type":"user","content":[{"text":"no type"}]}`,
	`{"type":"user","content":[{"type":""}]}`,
	`{"type":"user","content":[{"type":5}]}`,
	`{"type":"user","content":[{}]}`,
	`{"type":"user","content":[null]}`,
	`{"type":"user","content":[1]}`,
	`{"type":"user","content":"x"}`,
	`{"type":"user","content":{}}`,
	`{"type":"robot","content":[]}`,
	`{"type":"","content":[]}`,
	`{"type":"us\u0065r","content":[]}`,
	`{"content":[]}`,
	`{}`,
	`{"type":"user"}x`,
	`{"type":"user"`,
	`{"type":"user",}`,
	`[1]`,
	`null`,
	``,
	`{"type":"user","content":[{"type":"text","text":"\b\f\n\r\t\/\\\"\u0000\u00e9\u4e16\ud83d\ude00"}]}`,
	`{"type":"user","content":[{"type":"text","text":"\ud800 lone surrogate"}]}`,
	`{"type":"user","content":[{"type":"text","text":"\udc00\ud800 reversed"}]}`,
	`{"type":"user","content":[{"type":"text","text":"\ud83d\u0041 high then not low"}]}`,
	`{"type":"user","content":[{"type":"text","text":"\ud83d"}]}`,
	`{"type":"user","content":[{"type":"text","text":"\'"}]}`,
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"raw invalid utf8 \xff\"}]}",
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"escape then invalid \\n\xc3\"}]}",
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"control \x01 char\"}]}",
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"valid utf8 世界 \\\"q\\\"\"}]}",
	`{"type":"user","content":[` + strings.Repeat(`{"type":"tool_result","content":[`, 100) + strings.Repeat(`]}`, 100) + `]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":` + strings.Repeat(`[`, 600) + strings.Repeat(`]`, 600) + `}]}`,
}

// sentinel is what a message holds before a failed decode, which must
// leave it alone.
var sentinel = Message{Role: RoleSystem, Content: []Block{Text{Text: "before"}}}

// sameAsReference fails t unless UnmarshalJSON (called directly and through
// encoding/json) and UnmarshalBlock agree with the reference decoder on data.
func sameAsReference(t *testing.T, data []byte) {
	t.Helper()
	want, werr := refMessage(data)
	if werr != nil {
		want = sentinel
	}
	for _, via := range []string{"UnmarshalJSON", "json.Unmarshal"} {
		got := sentinel
		var err error
		if via == "UnmarshalJSON" {
			err = got.UnmarshalJSON(data)
		} else {
			err = json.Unmarshal(data, &got)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s\n%s: err = %v, reference err = %v", data, via, err, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\n%s = %#v\nreference = %#v", data, via, got, want)
		}
	}
	wantB, werr := refBlock(data)
	gotB, err := UnmarshalBlock(data)
	if (err == nil) != (werr == nil) || !reflect.DeepEqual(gotB, wantB) {
		t.Fatalf("%s\nUnmarshalBlock = %#v, %v\nreference      = %#v, %v", data, gotB, err, wantB, werr)
	}
}

// blockInputs are the blocks of oddInputs' first content, alone, for
// UnmarshalBlock.
func blockInputs() []string {
	var out []string
	for _, in := range oddInputs {
		if i := strings.Index(in, `"content":[`); i >= 0 {
			rest := in[i+len(`"content":[`):]
			if j := strings.LastIndex(rest, "]"); j >= 0 {
				out = append(out, rest[:j], " "+rest[:j]+" ")
			}
		}
	}
	return out
}

func TestDecodeMatchesReference(t *testing.T) {
	t.Parallel()
	for _, in := range append(oddInputs, blockInputs()...) {
		sameAsReference(t, []byte(in))
	}
	for _, m := range []Message{{Role: RoleUser, Content: everyBlock()}, {Role: RoleAssistant, Content: everyBlock()}} {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sameAsReference(t, data)
		for _, b := range m.Content {
			data, err := MarshalBlock(b)
			if err != nil {
				t.Fatal(err)
			}
			sameAsReference(t, data)
		}
	}
}

func FuzzDecodeMatchesReference(f *testing.F) {
	for _, in := range append(oddInputs, blockInputs()...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameAsReference(t, data) })
}

// benchMessages are storage-JSON messages shaped like a tool-heavy session.
func benchMessages(b *testing.B) map[string][][]byte {
	b.Helper()
	var rows []string
	for i := range 40 {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"path":"src/pkg%d/file.go","status":"modified","note":"line one\nline \"two\""}`, i, i))
	}
	big := "[" + strings.Join(rows, ",") + "]"
	exchange := []Message{
		UserText("What is the weather in city 7, and should I bring an umbrella tomorrow?"),
		{Role: RoleAssistant, Content: []Block{
			Text{Text: "Let me check the forecast."},
			ToolUse{ID: "call_7", Name: "get_weather", Input: json.RawMessage(`{"city":"city-7","days":2}`)},
		}},
		ToolResultText("call_7", `{"today":"sunny, 25°C","tomorrow":"rain, 18°C, 80% chance"}`, false),
		AssistantText("Today is sunny at 25°C; tomorrow brings rain (80%), so yes, take an umbrella."),
	}
	sets := map[string][]Message{
		"exchange":    exchange,
		"tool_result": {ToolResultText("call_8", big, false)},
		"every_block": {{Role: RoleUser, Content: everyBlock()}},
	}
	out := make(map[string][][]byte, len(sets))
	for name, msgs := range sets {
		for _, m := range msgs {
			data, err := json.Marshal(m)
			if err != nil {
				b.Fatal(err)
			}
			out[name] = append(out[name], data)
		}
	}
	return out
}

func benchDecode(b *testing.B, decode func([]byte) error) {
	sets := benchMessages(b)
	for _, name := range []string{"exchange", "tool_result", "every_block"} {
		msgs := sets[name]
		n := 0
		for _, data := range msgs {
			n += len(data)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range msgs {
					if err := decode(data); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkMessageDecode measures Message.UnmarshalJSON on storage JSON, as
// a session store calls it when loading: a four-message tool exchange, a
// 5 KB tool result full of escapes, and a message with every block kind.
func BenchmarkMessageDecode(b *testing.B) {
	benchDecode(b, func(data []byte) error {
		var m Message
		return m.UnmarshalJSON(data)
	})
}

// BenchmarkMessageDecodeReference measures the reference decoder on the
// same input, for comparison.
func BenchmarkMessageDecodeReference(b *testing.B) {
	benchDecode(b, func(data []byte) error {
		_, err := refMessage(data)
		return err
	})
}
