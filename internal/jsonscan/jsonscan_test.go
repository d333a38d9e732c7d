package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSkipValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		ok   bool
		rest string // what follows the value
	}{
		{`"a"`, true, ""},
		{` "a\"b" ,`, true, " ,"},
		{`"\u00e9\ud83d\ude00"`, true, ""},
		{`"\x"`, false, ""},
		{`"\u12g4"`, false, ""},
		{`"a` + "\x01" + `"`, false, ""},
		{"\"\xff\"", true, ""}, // UTF-8 is not checked
		{`"abc`, false, ""},
		{`{}`, true, ""},
		{`{ "a" : [1, -2.5e+3, true, false, null, {"b":"c"}] }x`, true, "x"},
		{`{"\u0061":1}`, true, ""},
		{`{"a":1,}`, false, ""},
		{`{"a" 1}`, false, ""},
		{`{,}`, false, ""},
		{`[]`, true, ""},
		{`[1,]`, false, ""},
		{`[1 2]`, false, ""},
		{`[`, false, ""},
		{`tru`, false, ""},
		{`true]`, true, "]"},
		{`nul`, false, ""},
		{`0`, true, ""},
		{`-0.5E-7,`, true, ","},
		{`01`, true, "1"}, // a value, then more: the caller's to refuse
		{`-`, false, ""},
		{`1.`, false, ""},
		{`1e`, false, ""},
		{`1e+`, false, ""},
		{`.5`, false, ""},
		{``, false, ""},
		{strings.Repeat("[", 3) + strings.Repeat("]", 3), true, ""},
		{strings.Repeat("[", 4) + strings.Repeat("]", 4), false, ""}, // MaxDepth 3
	}
	for _, tc := range tests {
		s := Scanner{Data: []byte(tc.in), MaxDepth: 3}
		ok := s.SkipValue()
		if ok != tc.ok {
			t.Errorf("SkipValue(%q) = %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		if ok && string(s.Data[s.Pos:]) != tc.rest {
			t.Errorf("SkipValue(%q) left %q, want %q", tc.in, s.Data[s.Pos:], tc.rest)
		}
		if ok && s.Depth != 0 {
			t.Errorf("SkipValue(%q) left depth %d", tc.in, s.Depth)
		}
	}
}

func TestStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string // after the opening quote
		raw       string
		flags     Flags
		rawOK     bool
		validOK   bool
		text      string
		textOK    bool
		unescaped string // AppendUnescaped of raw
		exact     bool
	}{
		{`abc"x`, "abc", 0, true, true, "abc", true, "abc", true},
		{`"`, "", 0, true, true, "", true, "", true},
		{`a\nb\t\"\\\/\b\f\r"`, `a\nb\t\"\\\/\b\f\r`, Escaped, true, true, "a\nb\t\"\\/\b\f\r", true, "a\nb\t\"\\/\b\f\r", true},
		{`\u00e9"`, `\u00e9`, Escaped, true, true, "é", true, "é", true},
		{`\ud83d\ude00"`, `\ud83d\ude00`, Escaped, true, true, "😀", true, "😀", true},
		{`\udc00x"`, `\udc00x`, Escaped, true, true, "", false, "\uFFFDx", false},
		{`\ud83d\u0041"`, `\ud83d\u0041`, Escaped, true, true, "", false, "\uFFFDA", false},
		{`\ud83d"`, `\ud83d`, Escaped, true, true, "", false, "\uFFFD", false},
		{"é\"", "é", NonASCII, true, true, "é", true, "é", true},
		{"\xff\"", "\xff", NonASCII, true, false, "", false, "\xff", true},
		{"\xff\\n\"", "\xff\\n", NonASCII | Escaped, true, false, "", false, "\xff\n", true},
		{`\q"`, "", 0, false, false, "", false, "", true},
		{`\u00"`, "", 0, false, false, "", false, "", true},
		{`\`, "", 0, false, false, "", false, "", true},
		{"a\x1f\"", "", 0, false, false, "", false, "", true},
		{`abc`, "", 0, false, false, "", false, "", true},
	}
	for _, tc := range tests {
		s := Scanner{Data: []byte(tc.in)}
		raw, f, ok := s.RawString()
		if ok != tc.rawOK || string(raw) != tc.raw || f != tc.flags {
			t.Errorf("RawString(%q) = %q, %b, %v; want %q, %b, %v", tc.in, raw, f, ok, tc.raw, tc.flags, tc.rawOK)
		}
		if ok {
			if got, exact := AppendUnescaped([]byte(">"), raw); string(got) != ">"+tc.unescaped || exact != tc.exact {
				t.Errorf("AppendUnescaped(%q) = %q, %v; want %q, %v", raw, got[1:], exact, tc.unescaped, tc.exact)
			}
		}
		s = Scanner{Data: []byte(tc.in)}
		if _, _, ok := s.ValidString(); ok != tc.validOK {
			t.Errorf("ValidString(%q) ok = %v, want %v", tc.in, ok, tc.validOK)
		}
		s = Scanner{Data: []byte(tc.in)}
		text, _, ok := s.Text(nil)
		if ok != tc.textOK || (ok && string(text) != tc.text) {
			t.Errorf("Text(%q) = %q, %v; want %q, %v", tc.in, text, ok, tc.text, tc.textOK)
		}
	}
}

func TestTextIsZeroCopyWithoutEscapes(t *testing.T) {
	t.Parallel()
	data := []byte(`abc" "a\nb" "c\td"`)
	s := Scanner{Data: data}
	text, buf, ok := s.Text(nil)
	if !ok || &text[0] != &data[0] || buf != nil {
		t.Fatalf("Text copied a string without escapes")
	}
	s.Pos += 2
	if text, buf, ok = s.Text(buf); !ok || string(text) != "a\nb" {
		t.Fatalf("Text = %q, %v", text, ok)
	}
	first := &buf[:1][0]
	s.Pos += 2
	if text, buf, ok = s.Text(buf); !ok || string(text) != "c\td" || &buf[:1][0] != first {
		t.Fatalf("Text = %q, %v; or it did not reuse its buffer", text, ok)
	}
}

func TestInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		ok   bool
		rest string
	}{
		{"0", 0, true, ""},
		{"-0", 0, true, ""},
		{"7,", 7, true, ","},
		{"-123}", -123, true, "}"},
		{"999999999", 999999999, true, ""},
		{"1234567890", 0, false, ""},
		{"01", 0, false, ""},
		{"1.0", 0, false, ""},
		{"1e3", 0, false, ""},
		{"1E3", 0, false, ""},
		{"-", 0, false, ""},
		{"", 0, false, ""},
		{" 1", 0, false, ""},
		{"x", 0, false, ""},
	}
	for _, tc := range tests {
		s := Scanner{Data: []byte(tc.in)}
		n, ok := s.Int()
		if n != tc.n || ok != tc.ok || (ok && string(s.Data[s.Pos:]) != tc.rest) {
			t.Errorf("Int(%q) = %d, %v (rest %q); want %d, %v (rest %q)", tc.in, n, ok, s.Data[s.Pos:], tc.n, tc.ok, tc.rest)
		}
	}
}

func TestPunctuation(t *testing.T) {
	t.Parallel()
	s := Scanner{Data: []byte(" \t\r\n{ nullx")}
	if c := s.SkipSpace(); c != '{' || s.Pos != 4 {
		t.Fatalf("SkipSpace = %q at %d", c, s.Pos)
	}
	if s.Consume('[') || s.Pos != 4 {
		t.Fatalf("Consume took the wrong byte")
	}
	if !s.Consume('{') || s.Pos != 5 {
		t.Fatalf("Consume missed its byte")
	}
	if s.Literal("null") {
		t.Fatalf("Literal skipped white space")
	}
	if c := s.Next(); c != 'n' || !s.Literal("ull") || s.Literal("x ") {
		t.Fatalf("Next or Literal went wrong")
	}
	if s.AtEnd() || s.Next() != 'x' || !s.AtEnd() || s.Next() != 0 {
		t.Fatalf("AtEnd or Next at the end went wrong")
	}
	s = Scanner{MaxDepth: 1}
	if !s.Enter() || s.Enter() {
		t.Fatalf("Enter ignored MaxDepth")
	}
	s.Leave()
	s.Leave()
	if s.Depth != 0 {
		t.Fatalf("Leave did not undo Enter")
	}
}

// FuzzScanner checks the primitives against encoding/json: SkipValue
// accepts exactly the valid JSON texts, and a string that Text or
// AppendUnescaped decodes decodes as encoding/json decodes it.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,{"b":"c"}]}`, `"a\nb\u00e9\ud83d\ude00"`, `"\udc00"`,
		"\"\xff\"", `01`, `[1,]`, `-0.0E+1`, `"\u0041\"\\\/\b\f\r\t"`, `123456789`, `-12`, `1.5`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{Data: data, MaxDepth: 20000}
		valid := s.SkipValue() && s.AtEnd()
		if valid != json.Valid(data) {
			t.Fatalf("SkipValue says valid = %v, encoding/json %v: %q", valid, !valid, data)
		}
		if s.Depth != 0 && valid {
			t.Fatalf("depth %d after %q", s.Depth, data)
		}

		if len(data) > 0 && data[0] == '"' {
			var want string
			wantErr := json.Unmarshal(data, &want)
			s := Scanner{Data: data, Pos: 1}
			raw, _, ok := s.RawString()
			whole := ok && s.AtEnd()
			if whole != (wantErr == nil) {
				t.Fatalf("RawString ok = %v, encoding/json error %v: %q", whole, wantErr, data)
			}
			if !whole {
				return
			}
			if len(raw) > 0 && &raw[0] != &data[1] {
				t.Fatalf("RawString copied")
			}
			dec, exact := AppendUnescaped(nil, raw)
			if utf8.Valid(raw) && string(dec) != want {
				t.Fatalf("AppendUnescaped(%q) = %q, encoding/json %q", raw, dec, want)
			}
			s = Scanner{Data: data, Pos: 1}
			text, _, ok := s.Text(nil)
			if ok != (exact && utf8.Valid(raw)) {
				t.Fatalf("Text ok = %v on %q", ok, data)
			}
			if ok && string(text) != want {
				t.Fatalf("Text(%q) = %q, encoding/json %q", data, text, want)
			}
		}

		s = Scanner{Data: data}
		if n, ok := s.Int(); ok && s.AtEnd() {
			var want int
			if err := json.Unmarshal(data, &want); err != nil || n != want {
				t.Fatalf("Int(%q) = %d, encoding/json %d, %v", data, n, want, err)
			}
		}
	})
}
