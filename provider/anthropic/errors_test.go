package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

// TestHTTPErrorsAreTyped: the Messages API's error types and request ids;
// the status table itself is the kit's (TestConformance).
func TestHTTPErrorsAreTyped(t *testing.T) {
	body := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_body"}`, typ, msg)
	}
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		kind       llm.ErrorKind
		code       string
		retryAfter time.Duration
		requestID  string
	}{
		{"429 is rate limited with its Retry-After", 429, http.Header{"Retry-After": {"7"}, "Request-Id": {"req_h"}},
			body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), llm.KindRateLimited, "rate_limit_error", 7 * time.Second, "req_h"},
		{"529 is overloaded", 529, nil, body("overloaded_error", "Overloaded"), llm.KindOverloaded, "overloaded_error", 0, "req_body"},
		{"overloaded_error is overloaded whatever the status", 500, nil, body("overloaded_error", "Overloaded"), llm.KindOverloaded, "overloaded_error", 0, "req_body"},
		{"504 timeout_error is a server error", 504, nil, body("timeout_error", "Request timed out"), llm.KindServer, "timeout_error", 0, "req_body"},
		{"prompt is too long is a context-length error", 400, nil,
			body("invalid_request_error", "prompt is too long: 210534 tokens > 200000 maximum"), llm.KindContextLength, "invalid_request_error", 0, "req_body"},
		{"input plus max_tokens over the context limit is a context-length error", 400, nil,
			body("invalid_request_error", "input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000"), llm.KindContextLength, "invalid_request_error", 0, "req_body"},
		{"413 request_too_large is a context-length error", 413, nil, body("request_too_large", "Request exceeds the maximum size"), llm.KindContextLength, "request_too_large", 0, "req_body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			for _, mode := range []string{"generate", "stream"} {
				var err error
				if mode == "generate" {
					_, err = newTestModel(srv.URL).Generate(bg, fixtureRequest)
				} else {
					_, _, err = drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
				}
				e := mustKind(t, err, tc.kind)
				if e.StatusCode != tc.status || e.Code != tc.code || e.RetryAfter != tc.retryAfter || e.RequestID != tc.requestID || e.Provider != "anthropic" {
					t.Errorf("%s: got status %d code %q retry %v request %q provider %q", mode, e.StatusCode, e.Code, e.RetryAfter, e.RequestID, e.Provider)
				}
				if e.Message == "" {
					t.Errorf("%s: no message", mode)
				}
			}
		})
	}
}

const (
	evStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	evText  = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	evDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	evStop  = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	evEnd   = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

func inBand(typ string) string {
	return fmt.Sprintf("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":%q,\"message\":\"%s happened\"}}\n\n", typ, typ)
}

func toolStream(input, stop string) string {
	return evStart +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + input + "}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + stop + "\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

// TestBadStreamsGiveTypedErrors feeds broken streams after an HTTP 200.
func TestBadStreamsGiveTypedErrors(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		opts   []Option
		kind   llm.ErrorKind
		is     error // also matched with errors.Is
	}{
		{"a malformed JSON chunk is malformed", evStart + evText + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de\n\n", nil,
			llm.KindMalformed, llm.ErrMalformed},
		{"a stream without message_stop is an incomplete network error", evStart + evText + evDelta, nil,
			llm.KindNetwork, llm.ErrIncompleteStream},
		{"an empty 200 body is an incomplete stream", "", nil, llm.KindNetwork, llm.ErrIncompleteStream},
		{"in-band overloaded_error after 200 is overloaded", evStart + evText + evDelta + inBand("overloaded_error"), nil,
			llm.KindOverloaded, llm.ErrOverloaded},
		{"in-band rate_limit_error is rate limited", evStart + inBand("rate_limit_error"), nil, llm.KindRateLimited, llm.ErrRateLimited},
		{"in-band api_error is a server error", evStart + inBand("api_error"), nil, llm.KindServer, llm.ErrServer},
		{"an unknown in-band error type is a server error", inBand("brand_new_error"), nil, llm.KindServer, llm.ErrServer},
		{"an event over the size limit is too large", evStart + evText + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" +
			strings.Repeat("x", 4096) + "\"}}\n\n" + evEnd, []Option{WithMaxEventSize(1024)}, llm.KindTooLarge, llm.ErrTooLarge},
		{"a delta for a block never started is malformed", evStart + evDelta + evEnd, nil, llm.KindMalformed, nil},
		{"a delta of the wrong kind for its block is malformed", evStart + evText +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"x\"}}\n\n" + evEnd,
			nil, llm.KindMalformed, nil},
		{"a delta after its block's stop is malformed", evStart + evText + evStop + evDelta + evEnd, nil, llm.KindMalformed, nil},
		{"a block stopped twice is malformed", evStart + evText + evStop + evStop + evEnd, nil, llm.KindMalformed, nil},
		{"a block started twice is malformed", evStart + evText + evText + evEnd, nil, llm.KindMalformed, nil},
		{"a huge block index is malformed", evStart + strings.Replace(evText, `"index":0`, `"index":99999999`, 1) + evEnd, nil, llm.KindMalformed, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, 200, "text/event-stream", []byte(tc.stream), 0, nil)
			_, _, err := drain(t, newTestModel(srv.URL, tc.opts...).Stream(bg, fixtureRequest))
			e := mustKind(t, err, tc.kind)
			if e.StatusCode != 200 && tc.kind != llm.KindTooLarge {
				t.Errorf("status %d, want 200 kept for an error after the stream began", e.StatusCode)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			if tc.kind == llm.KindNetwork && !errors.Is(err, llm.ErrNetwork) {
				t.Errorf("errors.Is(%v, ErrNetwork) = false", err)
			}
		})
	}
}

// TestToolInputThatIsNotJSONIsKept: a finished answer whose tool call
// arguments are not JSON completes; the call keeps the text the model sent
// (llm.ToolUse.Malformed), announced by its BlockStop, so the invoker can
// answer it with an error result instead of failing the turn.
func TestToolInputThatIsNotJSONIsKept(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", []byte(toolStream(`"{\"a\":"`, "tool_use")), 0, nil)
	evs, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolUses()
	if len(calls) != 1 {
		t.Fatalf("calls %v, want the one malformed call", calls)
	}
	if text, bad := calls[0].Malformed(); !bad || text != `{"a":` {
		t.Fatalf("Malformed() = %q, %v", text, bad)
	}
	stops := 0
	for _, ev := range evs {
		if ev.Type == llm.EventBlockStop {
			stops++
		}
	}
	if stops != 1 {
		t.Fatalf("%d BlockStops, want the call's one", stops)
	}
}

func TestToolCallCutOffByMaxTokensIsDropped(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", []byte(toolStream(`"{\"a\":"`, "max_tokens")), 0, nil)
	evs, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishLength || len(resp.Message.ToolUses()) != 0 {
		t.Errorf("finish %s, calls %v; want length and no call", resp.FinishReason, resp.Message.ToolUses())
	}
	for _, ev := range evs {
		if ev.Type == llm.EventBlockStop {
			t.Errorf("a cut-off call was announced by BlockStop: %+v", ev.Block)
		}
	}
}

func TestBlockingResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind llm.ErrorKind
	}{
		{"a body that is not JSON is malformed", `{"id":`, llm.KindMalformed},
		{"an error object with status 200 is typed", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, llm.KindOverloaded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, 200, "application/json", []byte(tc.body), 0, nil)
			_, err := newTestModel(srv.URL).Generate(bg, fixtureRequest)
			e := mustKind(t, err, tc.kind)
			if e.StatusCode != 200 || e.RequestID != "req_test_123" {
				t.Errorf("status %d request id %q", e.StatusCode, e.RequestID)
			}
		})
	}
}

// TestUnknownEventsAndBlocksAreKept: pings and unknown events are skipped,
// unknown blocks become extensions holding their whole JSON, and a tool
// input given whole in content_block_start is used.
func TestUnknownEventsAndBlocksAreKept(t *testing.T) {
	stream := evStart +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: brand_new\ndata: {\"type\":\"brand_new\",\"x\":1}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"go\\\"}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"f\",\"input\":{\"a\":1}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"pause_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := serve(t, 200, "text/event-stream", []byte(stream), 0, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		llm.Extension{Kind: "server_tool_use", Data: []byte(`{"id":"srvtoolu_1","input":{"query":"go"},"name":"web_search","type":"server_tool_use"}`)},
		llm.Extension{Kind: "web_search_tool_result", Data: []byte(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`)},
		llm.ToolUse{ID: "toolu_9", Name: "f", Input: []byte(`{"a":1}`)},
	}
	if fmt.Sprint(resp.Message.Content) != fmt.Sprint(want) {
		t.Errorf("content =\n%s\nwant\n%s", resp.Message.Content, want)
	}
	if resp.FinishReason != llm.FinishUnknown {
		t.Errorf("pause_turn finish = %s, want %s", resp.FinishReason, llm.FinishUnknown)
	}
	// Sent back, the extensions are the API's own blocks again.
	body := wire(t, msgs(llm.UserText("q"), resp.Message))
	if got := fmt.Sprint(body["messages"].([]any)[1].(map[string]any)["content"].([]any)[0]); !strings.Contains(got, "srvtoolu_1") {
		t.Errorf("server_tool_use not sent back: %s", got)
	}
}
