package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

// events frames event payloads as a Responses stream: each with its event
// line (the payload's own type).
func events(payloads ...string) string {
	var sb strings.Builder
	for _, p := range payloads {
		var head struct{ Type string }
		json.Unmarshal([]byte(p), &head)
		if head.Type != "" {
			sb.WriteString("event: " + head.Type + "\n")
		}
		sb.WriteString("data: " + p + "\n\n")
	}
	return sb.String()
}

const (
	created   = `{"type":"response.created","response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`
	msgAdded  = `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`
	hello     = `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hello"}`
	msgDone   = `{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}}`
	completed = `{"type":"response.completed","response":{"id":"resp_1","model":"gpt-5","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":1}}}`
)

func fcAdded(o int, id, name string) string {
	return fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"id":"fc_%d","type":"function_call","call_id":%q,"name":%q,"arguments":""}}`, o, o, id, name)
}

func argsDelta(o int, d string) string {
	q, _ := json.Marshal(d)
	return fmt.Sprintf(`{"type":"response.function_call_arguments.delta","output_index":%d,"delta":%s}`, o, q)
}

// TestStreamFailures: each broken stream ends with its typed error, never a
// panic and never a completion.
func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		opts   []Option
		kind   llm.ErrorKind
		is     error
		inMsg  string
		code   string
		status int
	}{
		{name: "an event that is not JSON", body: events(created, `{"type":"response.output_text.delta","delta":"x"`), kind: llm.KindMalformed, inMsg: "not valid JSON"},
		{name: "an event of the wrong shape", body: events(created, `{"type":"response.output_item.added","output_index":0,"item":"nope"}`), kind: llm.KindMalformed},
		{name: "text data that is no object", body: "data: hello\n\n", kind: llm.KindMalformed, inMsg: "not a JSON object"},
		{name: "a stream without its final event", body: events(created, msgAdded, hello), kind: llm.KindNetwork, is: llm.ErrIncompleteStream, inMsg: "response.completed"},
		{name: "a stream ending in [DONE]", body: events(created, msgAdded, hello) + "data: [DONE]\n\n", kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "a stream cut inside an event", body: events(created, msgAdded, hello) + `data: {"type":"respo`, kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "an empty body", body: "", kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "an error event (flat)", body: events(created, msgAdded, hello, `{"type":"error","code":"server_error","message":"The server had an error.","param":null,"sequence_number":3}`),
			kind: llm.KindServer, code: "server_error", inMsg: "The server had an error.", status: 200},
		{name: "an error event with a rate limit", body: events(created, `{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`),
			kind: llm.KindRateLimited, code: "rate_limit_exceeded", status: 200},
		{name: "an error event with context length", body: events(`{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}`),
			kind: llm.KindContextLength, code: "context_length_exceeded", status: 200},
		{name: "an error event with plain text", body: "event: error\ndata: upstream died\n\n", kind: llm.KindServer, inMsg: "upstream died", status: 200},
		{name: "a failed response", body: events(created, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: flagged."},"output":[]}}`),
			kind: llm.KindInvalidRequest, code: "invalid_prompt", inMsg: "Invalid prompt", status: 200},
		{name: "a failed response without an error", body: events(`{"type":"response.failed","response":{"status":"failed"}}`), kind: llm.KindServer, inMsg: "failed", status: 200},
		{name: "an over-limit event", body: events(created, `{"type":"response.output_text.delta","delta":"`+strings.Repeat("x", 4096)+`"}`), opts: []Option{WithMaxEventSize(1024)}, kind: llm.KindTooLarge},
		{name: "arguments for a call never announced", body: events(created, argsDelta(0, "{}")), kind: llm.KindMalformed, inMsg: "not an open function call"},
		{name: "arguments after other content followed the call", body: events(created, fcAdded(0, "c1", "f"), argsDelta(0, "{"), msgAdded[:0]+
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"hm"}`, argsDelta(0, "}")), kind: llm.KindMalformed},
		{name: "text after its part ended", body: events(created, msgAdded, hello,
			`{"type":"response.content_part.done","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello"}}`, hello), kind: llm.KindMalformed, inMsg: "after the part ended"},
		{name: "text for a function call", body: events(created, fcAdded(0, "c1", "f"), hello), kind: llm.KindMalformed, inMsg: "not a message"},
		{name: "summary for a message", body: events(created, msgAdded, `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"x"}`), kind: llm.KindMalformed},
		{name: "an item announced twice", body: events(created, msgAdded, msgAdded), kind: llm.KindMalformed, inMsg: "twice"},
		{name: "an item that changes its type", body: events(created, msgAdded, `{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}}`), kind: llm.KindMalformed},
		{name: "an item without a type", body: events(created, `{"type":"response.output_item.done","output_index":0,"item":{"id":"x"}}`), kind: llm.KindMalformed, inMsg: "no type"},
		{name: "a huge output index", body: events(created, `{"type":"response.output_text.delta","output_index":99999999,"delta":"x"}`), kind: llm.KindMalformed},
		{name: "a negative output index", body: events(created, `{"type":"response.output_text.delta","output_index":-1,"delta":"x"}`), kind: llm.KindMalformed},
		{name: "a completion without its response", body: events(created, `{"type":"response.completed"}`), kind: llm.KindMalformed, inMsg: "lacks its response"},
		{name: "reasoning finished after other content", body: events(created,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"x"}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"e"}}`), kind: llm.KindMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(tc.body), 0)
			evs, resp, err := drain(t, testModel(srv, tc.opts...).Stream(bg, userRequest()))
			if resp != nil {
				t.Fatalf("completed with %+v after %d events", resp, len(evs))
			}
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != tc.kind {
				t.Fatalf("err = %v, want kind %s", err, tc.kind)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want it to wrap %v", err, tc.is)
			}
			if !strings.Contains(le.Message, tc.inMsg) || le.StatusCode != tc.status || (tc.code != "" && le.Code != tc.code) || le.Provider != "openai" {
				t.Fatalf("err = %+v, want status %d, code %q and a message containing %q", le, tc.status, tc.code, tc.inMsg)
			}
		})
	}
}

// TestStreamQuirks: odd but valid streams complete with the right answer.
func TestStreamQuirks(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		text   string
		think  string
		sig    string
		tools  []llm.ToolUse
		finish llm.FinishReason
	}{
		{name: "only the final event: the output is taken from it", body: events(
			`{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Whole"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"}]}}`),
			text: "Whole", tools: []llm.ToolUse{call("c1", "f", `{"a":1}`)}, finish: llm.FinishToolUse},
		{name: "no deltas: the .done events give the text", body: events(created, msgAdded,
			`{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"From done"}`, completed), text: "From done", finish: llm.FinishStop},
		{name: "deltas that stop short are completed by the finished item", body: events(created, msgAdded, hello, msgDone[:0]+
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","content":[{"type":"output_text","text":"Hello world"}]}}`, completed),
			text: "Hello world", finish: llm.FinishStop},
		{name: "arguments given whole in the finished item", body: events(created, fcAdded(0, "c1", "f"),
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"x\":2}"}}`, completed),
			tools: []llm.ToolUse{call("c1", "f", `{"x":2}`)}, finish: llm.FinishToolUse},
		{name: "a call without a call_id gets its item id", body: events(created,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_7","type":"function_call","name":"f","arguments":"{}"}}`, completed),
			tools: []llm.ToolUse{call("fc_7", "f", `{}`)}, finish: llm.FinishToolUse},
		{name: "summary parts are set apart by a blank line", body: events(created,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"One."}`,
			`{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`,
			`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Two."}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"One."},{"type":"summary_text","text":"Two."}],"encrypted_content":"final"}}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Hello"}`, completed),
			think: "One.\n\nTwo.", sig: "final", text: "Hello", finish: llm.FinishStop},
		{name: "reasoning text of an open-weight model", body: events(created,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"Hmm."}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Hmm."}]}}`,
			completed), think: "Hmm.", finish: llm.FinishStop},
		{name: "comments, keep-alives and unknown events are skipped", body: ": ping\n\ndata:\n\n" + events(created,
			`{"type":"response.something_new","output_index":0}`, msgAdded, hello, completed), text: "Hello", finish: llm.FinishStop},
		{name: "the type comes from the event line when the data has none", body: "event: response.output_text.delta\ndata: {\"output_index\":0,\"delta\":\"Hi\"}\n\n" + events(completed),
			text: "Hi", finish: llm.FinishStop},
		{name: "CRLF framing", body: strings.ReplaceAll(events(created, msgAdded, hello, completed), "\n", "\r\n"), text: "Hello", finish: llm.FinishStop},
		{name: "escapes and surrogate pairs decode", body: events(created, msgAdded,
			`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a\"b\\c\n\u00e9\ud83d\ude00\ud800x"}`, completed),
			text: "a\"b\\c\né😀\uFFFDx", finish: llm.FinishStop},
		{name: "two text parts make two blocks", body: events(created, msgAdded, hello,
			`{"type":"response.output_text.delta","output_index":0,"content_index":1,"delta":" again"}`, completed), text: "Hello again", finish: llm.FinishStop},
		{name: "a call cut off by the length limit is dropped", body: events(created, msgAdded, hello, fcAdded(1, "c1", "f"), argsDelta(1, `{"q":"unfin`),
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}`),
			text: "Hello", finish: llm.FinishLength},
		{name: "content filtered", body: events(created, msgAdded, hello,
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`), text: "Hello", finish: llm.FinishContentFilter},
		{name: "an incomplete response without a reason", body: events(created, msgAdded, hello, `{"type":"response.incomplete","response":{}}`), text: "Hello", finish: llm.FinishUnknown},
		{name: "token counts with fractions and nulls", body: events(created, msgAdded, hello,
			`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5.0,"output_tokens":null}}}`), text: "Hello", finish: llm.FinishStop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(tc.body), 0)
			_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != tc.text || resp.FinishReason != tc.finish {
				t.Fatalf("text %q finish %s, want %q %s", resp.Message.Text(), resp.FinishReason, tc.text, tc.finish)
			}
			var think, sig string
			for _, b := range resp.Message.Content {
				if th, ok := b.(llm.Thinking); ok {
					think, sig = th.Text, th.Signature
				}
			}
			if think != tc.think || sig != tc.sig {
				t.Fatalf("thinking %q signature %q, want %q %q", think, sig, tc.think, tc.sig)
			}
			got := resp.Message.ToolUses()
			if fmt.Sprint(got) != fmt.Sprint(tc.tools) {
				t.Fatalf("tools = %v, want %v", got, tc.tools)
			}
		})
	}
}

// TestCitationOffsets: annotation indexes count characters; citations
// count bytes, and stay inside the text whatever the server says.
func TestCitationOffsets(t *testing.T) {
	text := "Grüße 😀 from Zürich."
	anns := []json.RawMessage{
		json.RawMessage(`{"type":"url_citation","url":"u1","title":"T","start_index":8,"end_index":20}`),
		json.RawMessage(`{"type":"url_citation","url":"u2","start_index":15,"end_index":9999}`),
		json.RawMessage(`{"type":"url_citation","url":"u3","start_index":-3,"end_index":5}`),
		json.RawMessage(`{"type":"url_citation","url":"u4","start_index":6,"end_index":2}`),
		json.RawMessage(`{"type":"container_file_citation","container_id":"cntr","file_id":"cfile","filename":"out.csv","start_index":0,"end_index":5}`),
		json.RawMessage(`{"type":"file_path","file_id":"f2","index":7}`),
		json.RawMessage(`{"type":"unknown_kind"}`),
		json.RawMessage(`not json`),
	}
	cs := citations(text, anns)
	want := []struct{ src, span string }{
		{"u1", "from Zürich."}, {"u2", "rich."}, {"u3", "Grüße"}, {"u4", ""}, {"cfile", "Grüße"}, {"f2", ""},
	}
	if len(cs) != len(want) {
		t.Fatalf("citations = %+v", cs)
	}
	for i, c := range cs {
		src := c.URL + c.FileID
		if src != want[i].src || text[c.Start:c.End] != want[i].span {
			t.Errorf("citation %d = %+v covering %q, want %s %q", i, c, text[c.Start:c.End], want[i].src, want[i].span)
		}
	}
	if cs[5].Start != len("Grüße 😀") || cs[4].Title != "out.csv" || cs[4].Kind != llm.CitationFile {
		t.Errorf("file citations = %+v %+v", cs[4], cs[5])
	}
}

// TestHTTPErrors: the error bodies and codes that refine a status; the
// status table itself is the kit's (TestConformance).
func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		kind   llm.ErrorKind
		code   string
		msg    string
		retry  time.Duration
	}{
		{"429 with retry-after-ms", 429, map[string]string{"Retry-After-Ms": "1500"}, `{"error":{"message":"slow"}}`, llm.KindRateLimited, "", "slow", 1500 * time.Millisecond},
		{"429 for an exhausted quota is auth", 429, nil, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`, llm.KindAuth, "insufficient_quota", "You exceeded", 0},
		{"context length exceeded", 400, nil, `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.KindContextLength, "context_length_exceeded", "Your input", 0},
		{"an empty body gives the status text", 502, nil, "", llm.KindServer, "", "Bad Gateway", 0},
		{"a string error", 404, nil, `{"error":"no such model"}`, llm.KindInvalidRequest, "", "no such model", 0},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.ReadAll(r.Body)
					for k, v := range tc.header {
						w.Header().Set(k, v)
					}
					w.Header().Set("X-Request-Id", "req_42")
					w.WriteHeader(tc.status)
					w.Write([]byte(tc.body))
				}))
				defer srv.Close()
				m := testModel(srv)
				var err error
				if stream {
					_, _, err = drain(t, m.Stream(bg, userRequest()))
				} else {
					_, err = m.Generate(bg, userRequest())
				}
				var le *llm.Error
				if !errors.As(err, &le) {
					t.Fatalf("err = %v", err)
				}
				if le.Kind != tc.kind || le.StatusCode != tc.status || le.Code != tc.code || !strings.HasPrefix(le.Message, tc.msg) || le.RetryAfter != tc.retry || le.RequestID != "req_42" {
					t.Fatalf("err = %+v", le)
				}
				if tc.code == "insufficient_quota" && llm.IsRetryable(err) {
					t.Fatal("an exhausted quota is retryable")
				}
			})
		}
	}
}

func TestGenerateFailures(t *testing.T) {
	tests := []struct {
		name string
		body string
		opts []Option
		kind llm.ErrorKind
	}{
		{"a body that is not JSON", "not json", nil, llm.KindMalformed},
		{"a JSON body that is no response", `{"hello":"world"}`, nil, llm.KindMalformed},
		{"an error document with status 200", `{"error":{"message":"upstream failed","code":"server_error"}}`, nil, llm.KindServer},
		{"a failed response", `{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"slow"},"output":[]}`, nil, llm.KindRateLimited},
		{"an output item of the wrong shape", `{"id":"r","status":"completed","output":[{"type":"message","content":"text"}]}`, nil, llm.KindMalformed},
		{"a body over the limit", `{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"` + strings.Repeat("x", 2048) + `"}]}]}`, []Option{WithMaxBodySize(1024)}, llm.KindTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, http.StatusOK, "application/json", []byte(tc.body), 0)
			_, err := testModel(srv, tc.opts...).Generate(bg, userRequest())
			if llm.KindOf(err) != tc.kind {
				t.Fatalf("err = %v, want %s", err, tc.kind)
			}
		})
	}
}
