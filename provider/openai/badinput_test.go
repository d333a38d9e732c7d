package openai

import (
	"context"
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

// frames frames JSON payloads as data events.
func frames(payloads ...string) string {
	var sb strings.Builder
	for _, p := range payloads {
		sb.WriteString("data: ")
		sb.WriteString(p)
		sb.WriteString("\n\n")
	}
	return sb.String()
}

const (
	hello     = `{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`
	stopChunk = `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
)

// TestStreamFailures: each broken stream ends with its typed error, never a
// panic and never a completion.
func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		opts   []Option
		kind   llm.ErrorKind
		is     error  // also errors.Is this, when set
		inMsg  string // the message contains this
		status int
	}{
		{name: "a malformed JSON chunk is a malformed error", body: frames(hello, `{"id":"c1","choices":[{"index":0,"delta":{"content":"x"}`), kind: llm.KindMalformed, inMsg: "not valid JSON"},
		{name: "a chunk of the wrong shape is a malformed error", body: frames(`{"choices":"nope"}`), kind: llm.KindMalformed},
		{name: "a stream without a final event is incomplete", body: frames(hello), kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "a stream cut inside an event is incomplete", body: frames(hello) + `data: {"id":"c1","choi`, kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "an empty 200 body is incomplete", body: "", kind: llm.KindNetwork, is: llm.ErrIncompleteStream},
		{name: "an error chunk after 200 is a server error", body: frames(hello, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`), kind: llm.KindServer, inMsg: "server had an error", status: 200},
		{name: "an error event after 200", body: frames(hello) + "event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"overloaded_error\"}}\n\n", kind: llm.KindOverloaded, status: 200},
		{name: "an error event with plain text", body: "event: error\ndata: upstream died\n\n", kind: llm.KindServer, inMsg: "upstream died", status: 200},
		{name: "an in-band context length error", body: frames(`{"error":{"message":"This model's maximum context length is 65536 tokens.","code":"context_length_exceeded"}}`), kind: llm.KindContextLength, status: 200},
		{name: "an in-band rate limit", body: frames(`{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`), kind: llm.KindRateLimited, status: 200},
		{name: "an over-limit event is too large", body: frames(hello, `{"choices":[{"index":0,"delta":{"content":"`+strings.Repeat("x", 4096)+`"}}]}`), opts: []Option{WithMaxEventSize(1024)}, kind: llm.KindTooLarge},
		{name: "a tool fragment after other content is malformed", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"content":"hm"}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}`,
		), kind: llm.KindMalformed},
		{name: "a tool call that never gets a name is malformed", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		) + "data: [DONE]\n\n", kind: llm.KindMalformed, inMsg: "never got a name"},
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
			if !strings.Contains(le.Message, tc.inMsg) || le.StatusCode != tc.status {
				t.Fatalf("err = %+v, want status %d and a message containing %q", le, tc.status, tc.inMsg)
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
		tools  []llm.ToolUse
		finish llm.FinishReason
	}{
		{name: "a finish reason without [DONE] completes", body: frames(hello, stopChunk), text: "Hello", finish: llm.FinishStop},
		{name: "[DONE] without a finish reason completes", body: frames(hello) + "data: [DONE]\n\n", text: "Hello", finish: llm.FinishStop},
		{name: "comments, empty data and unknown event types are skipped",
			body: ": keep-alive\n\ndata:\n\nevent: ping\ndata: {}\n\n" + frames(hello, stopChunk), text: "Hello", finish: llm.FinishStop},
		{name: "CRLF framing", body: strings.ReplaceAll(frames(hello, stopChunk), "\n", "\r\n"), text: "Hello", finish: llm.FinishStop},
		{name: "calls that all use index 0 are told apart by id", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"n\":1}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"n\":2}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		), tools: []llm.ToolUse{call("a", "f", `{"n":1}`), call("b", "g", `{"n":2}`)}, finish: llm.FinishToolUse},
		{name: "arguments before the name are kept", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{\"n\""}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		), tools: []llm.ToolUse{call("a", "f", `{"n":1}`)}, finish: llm.FinishToolUse},
		{name: "several calls in one delta", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":""}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		), tools: []llm.ToolUse{call("a", "f", `{}`), call("b", "g", `{}`)}, finish: llm.FinishToolUse},
		{name: "text between and after tool calls", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"content":"one "}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"content":"two "}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"content":"three"}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		), text: "one two three", tools: []llm.ToolUse{call("a", "f", `{}`), call("b", "g", `{}`)}, finish: llm.FinishToolUse},
		{name: "stop with tool calls is tool use", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`,
		), tools: []llm.ToolUse{call("a", "f", `{}`)}, finish: llm.FinishToolUse},
		{name: "a tool call cut off by the length limit is dropped", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"content":"Let me"}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"q\":\"unfin"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
		), text: "Let me", finish: llm.FinishLength},
		{name: "other choices are ignored", body: frames(
			`{"id":"c","choices":[{"index":1,"delta":{"content":"B"}},{"index":0,"delta":{"content":"A"}}]}`, stopChunk,
		), text: "A", finish: llm.FinishStop},
		{name: "escapes and surrogate pairs decode", body: frames(
			`{"id":"c","choices":[{"index":0,"delta":{"content":"a\"b\\c\n\u00e9\ud83d\ude00\ud800x"}}]}`, stopChunk,
		), text: "a\"b\\c\né😀\uFFFDx", finish: llm.FinishStop},
		{name: "an unknown finish reason", body: frames(hello, `{"choices":[{"index":0,"delta":{},"finish_reason":"insufficient_system_resource"}]}`), text: "Hello", finish: llm.FinishUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(tc.body), 0)
			_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, resp, want{text: tc.text, tools: tc.tools, finish: tc.finish})
		})
	}
}

// TestHTTPErrors: the error bodies of the compatible servers and the
// codes that refine a status; the status table itself is the kit's
// (TestConformance).
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
		{"context length exceeded by code", 400, nil, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.KindContextLength, "context_length_exceeded", "too long", 0},
		{"context length exceeded by message (DeepSeek)", 400, nil, `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 200000 tokens.","type":"invalid_request_error","code":"invalid_request_error"}}`, llm.KindContextLength, "invalid_request_error", "This model's maximum", 0},
		{"an empty body gives the status text", 502, nil, "", llm.KindServer, "", "Bad Gateway", 0},
		{"Ollama's string error", 404, nil, `{"error":"model \"llama9\" not found"}`, llm.KindInvalidRequest, "", `model "llama9" not found`, 0},
		{"vLLM's flat error", 400, nil, `{"object":"error","message":"bad temperature","type":"BadRequestError","code":400}`, llm.KindInvalidRequest, "400", "bad temperature", 0},
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
		{"an error document with status 200", `{"error":{"message":"upstream failed","code":502}}`, nil, llm.KindServer},
		{"a body over the limit", `{"choices":[{"message":{"content":"` + strings.Repeat("x", 2048) + `"}}]}`, []Option{WithMaxBodySize(1024)}, llm.KindTooLarge},
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

func TestInsufficientQuotaIsNotARetryableRateLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`))
	}))
	defer srv.Close()
	m := New(WithBaseURL(srv.URL), WithAPIKey("k"), WithModel("gpt-4o"))
	_, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if !errors.Is(err, llm.ErrAuth) || llm.IsRetryable(err) {
		t.Fatalf("err = %v, want a non-retryable auth-class error", err)
	}
}
