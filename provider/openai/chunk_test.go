package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// normChunk is a chunk with its strings decoded, for comparing parsers.
type normChunk struct {
	ID, Model string
	Choices   []normChoice
	Usage     *llm.Usage
	Err       *wireError
}

type normChoice struct {
	Index                                             int
	Content, ReasoningContent, Reasoning, Refusal, FR string
	Tools                                             []normTool
}

type normTool struct {
	Index          int
	ID, Name, Args string
}

func dec(j jstr) string {
	if !j.esc {
		return string(j.raw)
	}
	return string(appendUnescaped(nil, j.raw))
}

func normalize(c *chunk) normChunk {
	n := normChunk{ID: dec(c.id), Model: dec(c.model), Err: c.err}
	if c.usage != nil {
		u := c.usage.usage()
		n.Usage = &u
	}
	for _, ch := range c.choices {
		nc := normChoice{Index: ch.index, Content: dec(ch.content), ReasoningContent: dec(ch.reasoningContent),
			Reasoning: dec(ch.reasoning), Refusal: dec(ch.refusal), FR: dec(ch.fr)}
		for _, tc := range ch.toolCalls {
			nc.Tools = append(nc.Tools, normTool{tc.index, dec(tc.id), dec(tc.name), dec(tc.args)})
		}
		n.Choices = append(n.Choices, nc)
	}
	return n
}

// agree checks the fast parser against encoding/json on data: whenever
// the fast one accepts, encoding/json accepts and reads the same values.
func agree(t testing.TB, data []byte) (fastOK bool) {
	var fast, std chunk
	fastOK = parseChunkFast(data, &fast)
	stdErr := parseChunkStd(data, &std)
	if !fastOK {
		return false
	}
	if stdErr != nil {
		t.Fatalf("the fast parser accepted what encoding/json rejects (%v): %q", stdErr, data)
	}
	a, b := normalize(&fast), normalize(&std)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("parsers disagree on %q:\nfast %+v\nstd  %+v", data, a, b)
	}
	return true
}

// fixturePayloads returns the data of every event in the recorded streams.
func fixturePayloads(t testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range fixtureDirs {
		files, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*.sse"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && len(d) > 0 && d[0] == '{' {
					out = append(out, bytes.Clone(d))
				}
			}
		}
	}
	return out
}

// TestChunkParsersAgreeOnFixtures: every recorded chunk reads the same
// either way, and the common ones take the fast path.
func TestChunkParsersAgreeOnFixtures(t *testing.T) {
	fast, total := 0, 0
	for _, d := range fixturePayloads(t) {
		total++
		if agree(t, d) {
			fast++
		}
	}
	// Only usage chunks, error chunks and Groq's x_groq chunks may fall back.
	if total < 900 || fast < total-40 {
		t.Fatalf("%d of %d recorded chunks took the fast path", fast, total)
	}
}

func TestChunkParserFallsBackOnOddShapes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool
	}{
		{"a plain delta", `{"id":"a","choices":[{"index":0,"delta":{"content":"x"}}]}`, true},
		{"nulls everywhere", `{"id":null,"model":null,"choices":[{"index":null,"delta":null,"finish_reason":null}],"usage":null,"error":null,"x_groq":null}`, true},
		{"escapes in values", `{"choices":[{"delta":{"content":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\udc00"}}]}`, true},
		{"unknown keys of every type are skipped", `{"a":[1,-2.5e+3,true,false,null,{"b":"c"}],"choices":[{"logprobs":{"x":[]},"delta":{"role":"assistant","content":"y"}}]}`, true},
		{"a usage object goes to encoding/json", `{"choices":[],"usage":{"prompt_tokens":1}}`, false},
		{"an error object goes to encoding/json", `{"error":{"message":"x"}}`, false},
		{"x_groq goes to encoding/json", `{"x_groq":{"id":"r"}}`, false},
		{"a key in another case", `{"Choices":[{"delta":{"content":"x"}}]}`, false},
		{"a key folding to a known one by Unicode", `{"ſhoices":[]}`, false},
		{"a duplicate key", `{"id":"a","id":"b"}`, false},
		{"a duplicate delta", `{"choices":[{"delta":{"content":"a"},"delta":{"refusal":"b"}}]}`, false},
		{"an escaped key", `{"\u0069d":"a"}`, false},
		{"a float index", `{"choices":[{"index":1.0}]}`, false},
		{"an exponent index", `{"choices":[{"index":1e0}]}`, false},
		{"a huge index", `{"choices":[{"index":12345678901}]}`, false},
		{"invalid UTF-8 in content", "{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}", false},
		{"invalid UTF-8 in a skipped value is fine", "{\"x\":\"\xff\",\"choices\":[]}", true},
		{"a raw control character", "{\"choices\":[{\"delta\":{\"content\":\"a\x01\"}}]}", false},
		{"a trailing comma", `{"id":"a",}`, false},
		{"trailing data", `{"id":"a"} x`, false},
		{"a number content", `{"choices":[{"delta":{"content":5}}]}`, false},
		{"object arguments", `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`, false},
		{"a null choice", `{"choices":[null]}`, false},
		{"a bad literal", `{"x":nul}`, false},
		{"a bad number", `{"x":01}`, false},
		{"deep nesting", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agree(t, []byte(tc.in)); got != tc.fast {
				t.Fatalf("fast path = %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzChunkParsers is the differential test of the fast chunk parser.
func FuzzChunkParsers(f *testing.F) {
	for _, d := range fixturePayloads(f) {
		f.Add(d)
	}
	f.Add([]byte(`{"choices":[{"delta":{"content":"\ud83d\ude00\ud800\u0041"}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

// FuzzStream feeds arbitrary bytes as a stream body: no panic, and the
// events keep the stream contract whether it completes or fails.
func FuzzStream(f *testing.F) {
	for _, dir := range fixtureDirs {
		files, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*.sse"))
		for _, p := range files {
			b, _ := os.ReadFile(p)
			if len(b) < 8<<10 {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(frames(hello, stopChunk)))
	m := New(WithAPIKey(""), WithMaxEventSize(1<<16))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStreamReader(m, bytes.NewReader(body))
		var evs []llm.Event
		completed := false
		for i := 0; ; i++ {
			ev, err := s.Next()
			if err != nil {
				break
			}
			evs = append(evs, ev)
			if ev.Type == llm.EventComplete {
				completed = true
			}
			if i > 1<<20 {
				t.Fatal("the stream never ends")
			}
		}
		checkEvents(t, evs, completed)
		if completed {
			for _, tu := range evs[len(evs)-1].Response.Message.ToolUses() {
				if !json.Valid(tu.Input) {
					t.Fatalf("tool input %q is not JSON", tu.Input)
				}
			}
		}
	})
}

// FuzzResponse feeds arbitrary bytes as a blocking response body.
func FuzzResponse(f *testing.F) {
	for _, dir := range fixtureDirs {
		files, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*.json"))
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	m := New(WithAPIKey(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := m.decodeResponse(body, 200)
		if err != nil {
			if llm.KindOf(err) == llm.KindUnknown {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, b := range resp.Message.Content {
			if tu, ok := b.(llm.ToolUse); ok && !json.Valid(tu.Input) {
				t.Fatalf("tool input %q is not JSON", tu.Input)
			}
		}
		if resp.FinishReason == "" {
			t.Fatal("no finish reason")
		}
	})
}
