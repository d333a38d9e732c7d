package responses

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// normEvent is an event with its strings decoded, for comparing parsers.
type normEvent struct {
	Type, Delta, Text, Arguments, Refusal   string
	OutputIndex, ContentIndex, SummaryIndex int
	Item, Part, Response, Annotation        string
}

func dec(j jstr) string {
	if !j.esc {
		return string(j.raw)
	}
	return string(appendUnescaped(nil, j.raw))
}

func normalize(e *event) normEvent {
	return normEvent{dec(e.typ), dec(e.delta), dec(e.text), dec(e.arguments), dec(e.refusal),
		e.outputIndex, e.contentIndex, e.summaryIndex,
		string(e.item), string(e.part), string(e.response), string(e.annotation)}
}

// agree checks the fast parser against encoding/json on data: whenever the
// fast one accepts, encoding/json accepts and reads the same values.
func agree(t testing.TB, data []byte) (fastOK bool) {
	var fast, std event
	fastOK = parseEventFast(data, &fast)
	stdErr := parseEventStd(data, &std)
	if !fastOK {
		return false
	}
	if stdErr != nil {
		t.Fatalf("the fast parser accepted what encoding/json rejects (%v): %q", stdErr, data)
	}
	if a, b := normalize(&fast), normalize(&std); !reflect.DeepEqual(a, b) {
		t.Fatalf("parsers disagree on %q:\nfast %+v\nstd  %+v", data, a, b)
	}
	return true
}

// fixturePayloads returns the data of every event in the recorded streams.
func fixturePayloads(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(fixtureDir, fixtureSet, "*.sse"))
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
	return out
}

// TestEventParsersAgreeOnFixtures: every recorded event reads the same
// either way, and all of them take the fast path.
func TestEventParsersAgreeOnFixtures(t *testing.T) {
	fast, total := 0, 0
	for _, d := range fixturePayloads(t) {
		total++
		if agree(t, d) {
			fast++
		}
	}
	if total < 800 || fast != total {
		t.Fatalf("%d of %d recorded events took the fast path", fast, total)
	}
}

func TestEventParserFallsBackOnOddShapes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool
	}{
		{"a text delta", `{"type":"response.output_text.delta","content_index":0,"delta":"Hi","item_id":"msg_1","logprobs":[],"obfuscation":"x","output_index":0,"sequence_number":4}`, true},
		{"nulls everywhere", `{"type":null,"delta":null,"output_index":null,"item":null,"part":null,"response":null,"annotation":null}`, true},
		{"escapes in values", `{"delta":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\udc00"}`, true},
		{"nested objects stay raw", `{"item":{"a":[1,{"b":null}]},"part":{},"response":{"x":"y"},"annotation":{"type":"url_citation"}}`, true},
		{"an error event's keys are skipped", `{"type":"error","code":"x","message":"y","param":null}`, true},
		{"a key in another case", `{"Delta":"x"}`, false},
		{"a key folding to a known one by Unicode", `{"teﾘt":"x","ſummary_index":1}`, false},
		{"a duplicate key", `{"delta":"a","delta":"b"}`, false},
		{"an escaped key", `{"\u0064elta":"a"}`, false},
		{"a float index", `{"output_index":1.0}`, false},
		{"a huge index", `{"output_index":12345678901}`, false},
		{"invalid UTF-8 in a delta", "{\"delta\":\"\xff\"}", false},
		{"invalid UTF-8 in a skipped value is fine", "{\"x\":\"\xff\",\"delta\":\"a\"}", true},
		{"a string item", `{"item":"x"}`, false},
		{"an array part", `{"part":[]}`, false},
		{"a number delta", `{"delta":5}`, false},
		{"a trailing comma", `{"delta":"a",}`, false},
		{"trailing data", `{"delta":"a"} x`, false},
		{"deep nesting", `{"item":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agree(t, []byte(tc.in)); got != tc.fast {
				t.Fatalf("fast path = %v, want %v", got, tc.fast)
			}
		})
	}
}

// agreeResponse checks scanResponse against encoding/json on data, as
// agree does for events.
func agreeResponse(t testing.TB, data []byte) (fastOK bool) {
	var fast, std wireResponse
	fastOK = scanResponse(data, &fast)
	stdErr := json.Unmarshal(data, &std)
	if !fastOK {
		return false
	}
	if stdErr != nil {
		t.Fatalf("the response scanner accepted what encoding/json rejects (%v): %q", stdErr, data)
	}
	if adapter.IsNull(std.Error) && adapter.IsNull(fast.Error) {
		std.Error, fast.Error = nil, nil
	}
	if a, b := jsonOf(fast), jsonOf(std); a != b || string(bytes.TrimSpace(fast.Error)) != string(bytes.TrimSpace(std.Error)) {
		t.Fatalf("parsers disagree on %q:\nfast %s\nstd  %s", data, a, b)
	}
	return true
}

// TestResponseScannerAgreesOnFixtures: every recorded response object (a
// JSON body or a stream's lifecycle event) reads the same either way, and
// takes the fast path.
func TestResponseScannerAgreesOnFixtures(t *testing.T) {
	var objs [][]byte
	for _, d := range fixturePayloads(t) {
		var e event
		if parseEventFast(d, &e) && e.response != nil {
			objs = append(objs, e.response)
		}
	}
	for _, name := range responseFixtures(t) {
		if strings.HasPrefix(name, "responses-") && strings.HasSuffix(name, ".json") {
			objs = append(objs, readFixture(t, fixtureSet+"/"+name))
		}
	}
	for _, o := range objs {
		if !agreeResponse(t, o) {
			t.Errorf("the response scanner fell back on %.200s", o)
		}
	}
	if len(objs) < 30 {
		t.Fatalf("only %d response objects", len(objs))
	}
	for _, odd := range []string{`{"id":1}`, `{"output":[1]}`, `{"output":{}}`, `{"ID":"x"}`, `{"id":"a","id":"b"}`, `{"usage":{"input_tokens":"x"}}`, `{"output":[{}],}`} {
		if agreeResponse(t, []byte(odd)) {
			t.Errorf("the response scanner accepted %s", odd)
		}
	}
	for _, ok := range []string{`{"output":null,"usage":null,"error":{"code":"x"},"incomplete_details":{"reason":"max_output_tokens"}}`, ` { "output" : [ { } , {"type":"message"} ] } `} {
		if !agreeResponse(t, []byte(ok)) {
			t.Errorf("the response scanner fell back on %s", ok)
		}
	}
}

// FuzzEventParsers is the differential test of the fast event parser.
func FuzzEventParsers(f *testing.F) {
	for _, d := range fixturePayloads(f) {
		if len(d) < 4<<10 {
			f.Add(d)
		}
	}
	f.Add([]byte(`{"delta":"\ud83d\ude00\ud800\u0041","output_index":3}`))
	f.Add([]byte(`{"item":{"type":"function_call","arguments":"{\"x\":1}"},"type":"response.output_item.added"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

// FuzzStream feeds arbitrary bytes as a stream body: no panic, and the
// events keep the stream contract whether the stream completes or fails.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, fixtureSet, "*.sse"))
	for _, p := range files {
		// Small seeds only: the fuzzer minimizes every input that finds
		// new coverage, and minimizing a large one stalls the run.
		b, _ := os.ReadFile(p)
		if len(b) < 5<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(events(created, msgAdded, hello, completed)))
	f.Add([]byte(events(created, fcAdded(0, "c1", "f"), argsDelta(0, `{"a":`), argsDelta(0, "1}"),
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":1,"summary_index":1,"delta":"x"}`,
		`{"type":"response.output_text.annotation.added","output_index":2,"content_index":0,"annotation":{"type":"url_citation","start_index":0,"end_index":1,"url":"u"}}`,
		`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"web_search_call","id":"ws"}]}}`)))
	m := New(WithAPIKey(""), WithMaxEventSize(1<<16))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStreamReader(m, bytes.NewReader(body))
		var evs []llm.Event
		completed := false
		for i := 0; ; i++ {
			ev, err := s.Next()
			if err != nil {
				if err != errStreamDone && llm.KindOf(m.client.TransportError(bg, err)) == llm.KindUnknown {
					t.Fatalf("untyped error %v", err)
				}
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

// FuzzResponse feeds arbitrary bytes as a non-streamed response body: the
// response scanner agrees with encoding/json, and decoding gives a typed
// error or a sound Response.
func FuzzResponse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, fixtureSet, "*.json"))
	for _, p := range files {
		if b, _ := os.ReadFile(p); len(b) < 16<<10 && !strings.HasSuffix(p, ".request.json") {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":"}]}`))
	m := New(WithAPIKey(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		agreeResponse(t, body)
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
			if tx, ok := b.(llm.Text); ok {
				for _, c := range tx.Citations {
					if c.Start < 0 || c.End < c.Start || c.End > len(tx.Text) {
						t.Fatalf("citation %+v outside %q", c, tx.Text)
					}
				}
			}
		}
		if resp.FinishReason == "" {
			t.Fatal("no finish reason")
		}
	})
}

// fuzzKey stands for the API key in error-body fuzzing: the token KEY in a
// fuzzed body becomes it, so the fuzzer can place the key anywhere.
const fuzzKey = "sk-fuzz-0123456789abcdefSECRET"

// FuzzErrorBody feeds arbitrary error bodies with arbitrary statuses, as an
// HTTP error and as an in-band error (an error event, a failed response):
// the error is always typed, and never holds the API key even when the
// server echoes it.
func FuzzErrorBody(f *testing.F) {
	for _, name := range []string{"error-400-decimal-below-min-value.json", "error-401-invalid-api-key.json", "error-429-insufficient-quota.json"} {
		b, _ := os.ReadFile(filepath.Join(fixtureDir, fixtureSet, name))
		f.Add(429, b)
	}
	for _, s := range []struct {
		status int
		body   string
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
		{401, `{"error":{"message":"Incorrect API key provided: KEY","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{200, `{"type":"error","code":"KEY","message":"boom KEY","param":null}`},
		{200, `{"error":"KEY"}`},
		{502, `<html>bad gateway KEY</html>`},
		{400, `{"error":{"message":"x","code":400}}`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	m := New(WithAPIKey(fuzzKey))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		body = bytes.ReplaceAll(body, []byte("KEY"), []byte(fuzzKey))
		code := 400 + abs(status)%200
		checkFuzzError(t, m.client.StatusError(&http.Response{StatusCode: code, Header: http.Header{}}, body))
		if we, ok := adapter.ParseError(body); ok {
			checkFuzzError(t, m.inBandError(we, 200))
		}
		s := &streamReader{m: m, open: -1}
		checkFuzzError(t, s.streamError(body))
		checkFuzzError(t, s.failed(&wireResponse{Status: "failed", Error: json.RawMessage(bytes.TrimSpace(body))}))
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if llm.KindOf(err) == llm.KindUnknown {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if strings.Contains(err.Error(), fuzzKey) {
		t.Fatalf("the error holds the API key: %v", err)
	}
}
