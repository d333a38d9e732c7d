package structured

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool"
)

func TestCompleteJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		complete bool
	}{
		{``, ``, false},
		{`Sure: `, ``, false},
		{`{`, `{}`, false},
		{`{"ti`, `{}`, false},
		{`{"title"`, `{}`, false},
		{`{"title":`, `{}`, false},
		{`{"title":"The Na`, `{"title":"The Na"}`, false},
		{`{"title":"`, `{"title":""}`, false},
		{`{"title":"a\`, `{"title":"a"}`, false},
		{`{"title":"a\u00`, `{"title":"a"}`, false},
		{`{"title":"a\u00e9`, `{"title":"a\u00e9"}`, false},
		{"{\"title\":\"caf\xc3", `{"title":"caf"}`, false},
		{`{"title":"x","year":19`, `{"title":"x","year":19}`, false},
		{`{"title":"x","year":-`, `{"title":"x"}`, false},
		{`{"title":"x","year":1.`, `{"title":"x"}`, false},
		{`{"title":"x",`, `{"title":"x"}`, false},
		{`{"ok":tr`, `{}`, false},
		{`{"ok":true`, `{"ok":true}`, false},
		{`{"tags":["a","b`, `{"tags":["a","b"]}`, false},
		{`{"tags":["a",`, `{"tags":["a"]}`, false},
		{`{"a":{"b":[{"c":null`, `{"a":{"b":[{"c":null}]}}`, false},
		{"```json\n{\"a\":1}\n```", `{"a":1}`, true},
		{`{"a":1} trailing`, `{"a":1}`, true},
		{`{"a":1,}`, `{"a":1}`, false},
		{`{"a" 1}`, `{}`, false},
		{`[1,2`, `[1,2]`, false},
	}
	for _, tt := range tests {
		out, complete := completeJSON([]byte(tt.in))
		if string(out) != tt.want || complete != tt.complete {
			t.Errorf("completeJSON(%q) = %q, %v; want %q, %v", tt.in, out, complete, tt.want, tt.complete)
		}
		if out != nil && !json.Valid(out) {
			t.Errorf("completeJSON(%q) = %q: not JSON", tt.in, out)
		}
	}
}

// FuzzCompleteJSON: whatever arrives, completeJSON returns valid JSON or
// nothing; every prefix of a valid object closes into valid JSON, and the
// whole object comes back as it is, complete.
func FuzzCompleteJSON(f *testing.F) {
	for _, s := range []string{`{"title":"The Name of the Wind","author":{"first":"P","last":"R"},"rating":7}`,
		`{"a":[1,2.5e3,-0,true,false,null,"\u00e9\ud83d\ude00"]}`, "```json\n{\"value\": 427}\n```", `{"a":"\"\\\/\b\f\n\r\t"}`, `[{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, complete := completeJSON(b)
		if out != nil && !json.Valid(out) {
			t.Fatalf("completeJSON(%q) = %q: not JSON", b, out)
		}
		if !json.Valid(b) || len(b) == 0 || (b[0] != '{' && b[0] != '[') {
			return
		}
		if !complete || string(out) != strings.TrimRight(string(b), " \t\r\n") {
			t.Fatalf("completeJSON(%q) = %q, %v: a whole document should come back complete", b, out, complete)
		}
		for i := range b {
			if p, _ := completeJSON(b[:i]); p != nil && !json.Valid(p) {
				t.Fatalf("prefix %q closed into %q: not JSON", b[:i], p)
			}
		}
	})
}

func TestSchemaPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, path, reason string }{
		{`validating root: required: missing properties: ["author"]`, "", `required: missing properties: ["author"]`},
		{`validating root: validating /properties/title: type: 1 has type "integer", want "string"`, "/title", `type: 1 has type "integer", want "string"`},
		{`validating root: validating /properties/author: validating /$defs/Author: validating /$defs/Author/properties/last: type: x`, "/author/last", "type: x"},
		{`validating root: validating /properties/tags: validating /properties/tags/items: type: 1`, "/tags/*", "type: 1"},
	}
	for _, tt := range tests {
		p, r := schemaPath(tt.msg)
		if p != tt.path || r != tt.reason {
			t.Errorf("schemaPath(%q) = %q, %q; want %q, %q", tt.msg, p, r, tt.path, tt.reason)
		}
	}
}

func TestStrictify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"optional becomes required and nullable",
			`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}`,
			`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":["integer","null"]}},"required":["b","a"],"additionalProperties":false}`, true},
		{"nested objects and $defs; a $ref made nullable through anyOf",
			`{"type":"object","properties":{"author":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"object","properties":{"n":{"type":"string","enum":["x","y"]}}}}}`,
			`{"type":"object","properties":{"author":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"null"}]}},"$defs":{"A":{"type":"object","properties":{"n":{"type":["string","null"],"enum":["x","y",null]}},"required":["n"],"additionalProperties":false}},"required":["author"],"additionalProperties":false}`, true},
		{"a map cannot be strict",
			`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`, ``, false},
	}
	for _, tt := range tests {
		c, err := compileRaw(json.RawMessage(tt.in), "x")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if (c.strict != nil) != tt.ok {
			t.Fatalf("%s: strict = %v, want %v", tt.name, c.strict != nil, tt.ok)
		}
		if tt.ok && string(c.strict.raw) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, c.strict.raw, tt.want)
		}
	}
}

// FuzzAnswer: whatever text a model writes, reading the answer out of it
// (extractJSON, the validation, the error's path) never panics, and an
// answer that validates decodes into the type.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{`{"title":"Dune","author":"F"}`, "```json\n{\"title\":1}\n```", `Sure: {"title":"x","author":"y","year":"z"} ok`, `{`, `}{`, ``, `{"title":"x","author":"y","year":1e2}`} {
		f.Add(s)
	}
	c, err := compile(reflect.TypeFor[Book](), nil, "", tool.SchemaFor[Book])
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw := extractJSON(text)
		if raw == nil {
			return
		}
		for _, fm := range []*form{&c.plain, c.strict} {
			if e := fm.validate(raw); e != nil {
				_ = e.Error()
				continue
			}
			if _, e := decode[Book](raw, 1); e != nil && (e.Kind != ErrSchema || e.Error() == "") {
				t.Fatalf("%s: decode error %+v", raw, e)
			}
		}
	})
}
