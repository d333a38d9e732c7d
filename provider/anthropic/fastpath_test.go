package anthropic

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFastPath(t *testing.T) {
	const none = fastNone
	tests := []struct {
		name  string
		data  string
		ok    bool
		typ   fastType
		index int
		kind  deltaKind
		text  string
	}{
		{"a text delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, true, fastDelta, 0, deltaText, "Hi"},
		{"Anthropic's trailing padding", `{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"Hi"}}        `, true, fastDelta, 12, deltaText, "Hi"},
		{"whitespace between tokens", "{ \"type\" : \"content_block_delta\" ,\n\"index\":\t3 , \"delta\" : { \"type\" : \"thinking_delta\" , \"thinking\" : \"x\" } }", true, fastDelta, 3, deltaThinking, "x"},
		{"keys in another order", `{"delta":{"partial_json":"{\"a\"","type":"input_json_delta"},"index":1,"type":"content_block_delta"}`, true, fastDelta, 1, deltaInput, `{"a"`},
		{"a signature delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EtYD+/="}}`, true, fastDelta, 0, deltaSignature, "EtYD+/="},
		{"escapes", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\n\"b\"\\\/\t\u00e9\u4e2d"}}`, true, fastDelta, 0, deltaText, "a\n\"b\"\\/\té中"},
		{"a surrogate pair", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\udc4b"}}`, true, fastDelta, 0, deltaText, "👋"},
		{"raw UTF-8", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"👋 ü"}}`, true, fastDelta, 0, deltaText, "👋 ü"},
		{"an empty text", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`, true, fastDelta, 0, deltaInput, ""},
		{"a block stop", `{"type":"content_block_stop","index":2      }`, true, fastBlockStop, 2, 0, ""},
		{"a message stop", `{"type":"message_stop"    }`, true, fastMessageStop, 0, 0, ""},
		{"a ping", `{"type": "ping"}`, true, fastPing, 0, 0, ""},
		{"a lone surrogate falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d"}}`, false, none, 0, 0, ""},
		{"invalid UTF-8 falls back", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}", false, none, 0, 0, ""},
		{"an unknown key falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":1}`, false, none, 0, 0, ""},
		{"a citations delta falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`, false, none, 0, 0, ""},
		{"a mismatched field falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}`, false, none, 0, 0, ""},
		{"a duplicate key falls back", `{"type":"content_block_delta","index":0,"index":1,"delta":{"type":"text_delta","text":"x"}}`, false, none, 0, 0, ""},
		{"a block stop with a delta falls back", `{"type":"content_block_stop","index":0,"delta":{"type":"text_delta","text":"x"}}`, false, none, 0, 0, ""},
		{"a message stop with an index falls back", `{"type":"message_stop","index":0}`, false, none, 0, 0, ""},
		{"other event types fall back", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, false, none, 0, 0, ""},
		{"a leading zero falls back", `{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`, false, none, 0, 0, ""},
		{"a missing index falls back", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`, false, none, 0, 0, ""},
		{"trailing garbage falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}x`, false, none, 0, 0, ""},
		{"a control character falls back", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\n\"}}", false, none, 0, 0, ""},
		{"truncated JSON falls back", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x`, false, none, 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, _, ok := decodeFast([]byte(tc.data), nil)
			if ok != tc.ok || (ok && ev != (fastEvent{tc.typ, tc.index, tc.kind, tc.text})) {
				t.Errorf("got %+v %v, want %+v %v", ev, ok, fastEvent{tc.typ, tc.index, tc.kind, tc.text}, tc.ok)
			}
			checkFastMatchesJSON(t, []byte(tc.data))
		})
	}
}

// checkFastMatchesJSON fails when the fast path accepts data but decodes it
// differently from encoding/json into the full event struct.
func checkFastMatchesJSON(t *testing.T, data []byte) {
	t.Helper()
	fast, _, ok := decodeFast(data, make([]byte, 0, 8))
	if !ok {
		return
	}
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
	}
	want := wireEvent{Type: fastTypeName[fast.typ], Index: fast.index}
	if fast.typ == fastDelta {
		want.Delta.Type = [...]string{deltaText: "text_delta", deltaThinking: "thinking_delta", deltaInput: "input_json_delta", deltaSignature: "signature_delta"}[fast.kind]
		switch fast.kind {
		case deltaText:
			want.Delta.Text = fast.text
		case deltaThinking:
			want.Delta.Thinking = fast.text
		case deltaInput:
			want.Delta.PartialJSON = fast.text
		case deltaSignature:
			want.Delta.Signature = fast.text
		}
	}
	g, _ := json.Marshal(ev)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("for %q:\nencoding/json %s\n    fast path %s", data, g, w)
	}
}

// TestFixturesDecodeTheSameWithoutTheFastPath replays every stream with
// the fast path off: the results must not change.
func TestFixturesDecodeTheSameWithoutTheFastPath(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		if !strings.HasSuffix(file, ".sse") {
			continue
		}
		t.Run(file, func(t *testing.T) {
			fast, err1 := replayFixture(t, file, 0, "text/event-stream")
			slow, err2 := replayFixture(t, file, 0, "text/event-stream", withoutFastPath())
			a, _ := json.Marshal(goldenOf(fast, err1))
			b, _ := json.Marshal(goldenOf(slow, err2))
			if !bytes.Equal(a, b) {
				t.Errorf("fast path %s\nencoding/json %s", a, b)
			}
		})
	}
}

// FuzzFastPathMatchesEncodingJSON is the differential test of the fast
// path: whatever it accepts, encoding/json must decode to the same event.
func FuzzFastPathMatchesEncodingJSON(f *testing.F) {
	for _, data := range fixtureData(f) {
		f.Add(data)
	}
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u00e9\ud83d\udc4b\n"}}`,
		`{"delta":{"thinking":"x","type":"thinking_delta"},"type":"content_block_delta","index":7}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800\udc00"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastMatchesJSON(t, data)
	})
}

// fixtureData returns the data lines of every recorded stream.
func fixtureData(f *testing.F) [][]byte {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sse"))
	var out [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// withoutFastPath decodes every event with encoding/json (see
// Model.slowPath).
func withoutFastPath() Option { return func(m *Model) { m.slowPath = true } }
