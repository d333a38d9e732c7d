package stored

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
)

// filled returns a block of b's kind with every field set to a non-zero
// value, found by reflection, so a field added to a block type in llm is
// covered without anyone remembering to add it here.
func filled(t *testing.T, b llm.Block) llm.Block {
	t.Helper()
	v := reflect.New(reflect.TypeOf(b)).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(fmt.Sprintf(`{"field":%q}`, name))))
		case f.Type() == reflect.TypeFor[[]llm.Block]():
			f.Set(reflect.ValueOf([]llm.Block{llm.Text{Text: "nested"}, llm.Image{Data: []byte{9}, URL: "u"}}))
		case f.Kind() == reflect.String:
			f.SetString("value of " + name)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			f.SetBytes([]byte("bytes of " + name))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("%T.%s has type %s, which this test does not know how to fill; teach it, and make sure decodeFast handles the field",
				b, name, f.Type())
		}
	}
	return v.Interface().(llm.Block)
}

func TestFastDecodeCoversEveryField(t *testing.T) {
	kinds := []llm.Block{llm.Text{}, llm.Image{}, llm.Audio{}, llm.File{}, llm.ToolUse{}, llm.ToolResult{},
		llm.Thinking{}, llm.RedactedThinking{}, llm.Extension{}}
	for _, k := range kinds {
		b := filled(t, k)
		for _, role := range []llm.Role{llm.RoleUser, llm.RoleTool} {
			m := llm.Message{Role: role, Content: []llm.Block{b}, ToolCallID: "c", IsError: role == llm.RoleTool}
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("%T: %v", b, err)
			}
			var fast llm.Message
			if !decodeFast(data, &fast) {
				t.Fatalf("%T: the fast path declined a well-formed message: %s", b, data)
			}
			var slow llm.Message
			if err := slow.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("%T: the fast path decodes differently from llm (a field it does not know?)\nfast %#v\nllm  %#v\njson %s",
					b, fast, slow, data)
			}
		}
	}
}

// oddInputs are valid-looking inputs on which a shortcut could go wrong.
var oddInputs = []string{
	`{"type":"user","content":[{"type":"text","text":"a"}]}`,
	`{"type":"user","content":null}`,
	`{"type":"user"}`,
	`{"type":"user","content":[]}`,
	`{"type":"tool_result","tool_call_id":"c","content":[],"is_error":true}`,
	`{"type":"tool_result","tool_call_id":"c","is_error":null}`,
	`{"type":"user","tool_call_id":"c","content":[{"type":"text","text":"a"}]}`,
	`{"TYPE":"user","Content":[{"Type":"text","TEXT":"a"}]}`,
	`{"type":"user","type":"assistant","content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"type":"user","content":[{"type":"text","text":"a","is_error":"not a bool","content":"not blocks","url":5}]}`,
	`{"type":"user","content":[{"type":"image","data":null,"url":"u"}]}`,
	`{"type":"user","content":[{"type":"image","data":""}]}`,
	`{"type":"user","content":[{"type":"image","data":"not base64!"}]}`,
	`{"type":"user","content":[{"type":"image","data":[1,2,3]}]}`,
	`{"type":"user","content":[{"type":"image","data":5}]}`,
	`{"type":"user","content":[{"type":"file","file_id":"f","name":"n","data":"AAEC"}]}`,
	`{"type":"user","content":[{"type":"redacted_thinking","data":null}]}`,
	`{"type":"user","content":[{"type":"redacted_thinking","data":5}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":null}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k"}]}`,
	`{"type":"user","content":[{"type":"extension","kind":"k","data":[1, 2]}]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n"}]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n","input":null}]}`,
	`{"type":"user","content":[{"type":"tool_use","id":"a","name":"n","input": { "x" : 1 } }]}`,
	`{"type":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"mystery","x":1}]}]}`,
	`{"type":"user","content":[{"type":"tool_result","tool_use_id":"a","content":null,"is_error":true}]}`,
	`{"type":"user","content":[{"type":"mystery","text":"x"}]}`,
	`{"type":"user","content":[{"text":"no type"}]}`,
	`{"type":"user","content":[{"type":""}]}`,
	`{"type":"user","content":[1]}`,
	`{"type":"user","content":"x"}`,
	`{"type":"robot","content":[]}`,
	`{"content":[]}`,
	`[1]`,
	`null`,
	`{"type":"user","content":[{"type":"text","text":"\ud800 invalid surrogate \u00e9"}]}`,
	"{\"type\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"raw invalid utf8 \xff\"}]}",
}

// sameDecode fails t unless DecodeMessage and llm's decoder agree on data.
func sameDecode(t *testing.T, data []byte) {
	t.Helper()
	var fast, slow llm.Message
	ferr := DecodeMessage(data, &fast)
	serr := slow.UnmarshalJSON(data)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("%s\nDecodeMessage err = %v, llm err = %v", data, ferr, serr)
	}
	if ferr == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s\nDecodeMessage = %#v\nllm           = %#v", data, fast, slow)
	}
}

func TestDecodeMessageMatchesLLM(t *testing.T) {
	for _, in := range oddInputs {
		sameDecode(t, []byte(in))
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, in := range oddInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameDecode(t, data) })
}
