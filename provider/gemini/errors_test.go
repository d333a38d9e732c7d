package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

func statusBody(code int, status, msg string, details ...string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q,"details":[%s]}}`, code, msg, status, strings.Join(details, ","))
}

// TestHTTPErrorsAreTyped: Google's error statuses, reasons and RetryInfo;
// the status table itself is the kit's (TestConformance).
func TestHTTPErrorsAreTyped(t *testing.T) {
	retry := `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}`
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		kind   llm.ErrorKind
		code   string
		retry  time.Duration
	}{
		{"429 RESOURCE_EXHAUSTED waits its RetryInfo delay", 429, nil,
			statusBody(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota", `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]}`, retry),
			llm.KindRateLimited, "RESOURCE_EXHAUSTED", 37 * time.Second},
		{"a Retry-After header wins over RetryInfo", 429, http.Header{"Retry-After": {"3"}},
			statusBody(429, "RESOURCE_EXHAUSTED", "quota", retry), llm.KindRateLimited, "RESOURCE_EXHAUSTED", 3 * time.Second},
		{"a fractional retry delay", 429, nil,
			statusBody(429, "RESOURCE_EXHAUSTED", "quota", `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}`),
			llm.KindRateLimited, "RESOURCE_EXHAUSTED", 1500 * time.Millisecond},
		{"an expired key is auth whatever the status", 400, nil,
			statusBody(400, "INVALID_ARGUMENT", "API key expired. Please renew the API key.", `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_EXPIRED","domain":"googleapis.com"}`),
			llm.KindAuth, "API_KEY_EXPIRED", 0},
		{"an input token count over the maximum is a context-length error", 400, nil,
			statusBody(400, "INVALID_ARGUMENT", "The input token count (1300000) exceeds the maximum number of tokens allowed (1048576)."),
			llm.KindContextLength, "INVALID_ARGUMENT", 0},
		{"FAILED_PRECONDITION is an invalid request", 400, nil, statusBody(400, "FAILED_PRECONDITION", "User location is not supported for the API use."), llm.KindInvalidRequest, "FAILED_PRECONDITION", 0},
		{"504 DEADLINE_EXCEEDED is a server error", 504, nil, statusBody(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."), llm.KindServer, "DEADLINE_EXCEEDED", 0},
		{"Vertex AI's array-wrapped error", 429, nil, "[" + statusBody(429, "RESOURCE_EXHAUSTED", "Resource exhausted. Please try again later.") + "]", llm.KindRateLimited, "RESOURCE_EXHAUSTED", 0},
		{"an echoed key is redacted", 400, nil, statusBody(400, "INVALID_ARGUMENT", "API key not valid: "+testKey), llm.KindAuth, "INVALID_ARGUMENT", 0},
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
				if e.StatusCode != tc.status || e.Code != tc.code || e.RetryAfter != tc.retry || e.Provider != "gemini" || e.Message == "" {
					t.Errorf("%s: got %+v", mode, e)
				}
			}
		})
	}
}

// TestStreamFailures covers what can go wrong after HTTP 200.
func TestStreamFailures(t *testing.T) {
	text := `{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"modelVersion":"gemini-test","responseId":"r1"}`
	tests := []struct {
		name string
		body []byte
		kind llm.ErrorKind
		code string
	}{
		{"an in-band error", sseOf(text, statusBody(500, "INTERNAL", "An internal error has occurred. "+testKey)), llm.KindServer, "INTERNAL"},
		{"an in-band quota error", sseOf(text, statusBody(429, "RESOURCE_EXHAUSTED", "quota")), llm.KindRateLimited, "RESOURCE_EXHAUSTED"},
		{"no finishReason before the end", sseOf(text, text), llm.KindNetwork, ""},
		{"an empty body", nil, llm.KindNetwork, ""},
		{"a chunk that is not JSON", sseOf(text, `{"candidates":[`), llm.KindMalformed, ""},
		{"a chunk of the wrong shape", sseOf(`{"candidates":{"x":1}}`), llm.KindMalformed, ""},
		{"a blocked prompt", sseOf(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":5}}`), llm.KindInvalidRequest, "SAFETY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{0, 3} {
				srv := serve(t, 200, "text/event-stream", tc.body, chunk, nil)
				_, _, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
				e := mustKind(t, err, tc.kind)
				if e.Code != tc.code || e.StatusCode != 200 || e.Provider != "gemini" {
					t.Errorf("got %+v", e)
				}
				if tc.kind == llm.KindNetwork && !errors.Is(err, llm.ErrIncompleteStream) {
					t.Errorf("%v does not wrap ErrIncompleteStream", err)
				}
			}
		})
	}
}

// TestBadGenerateBodies: a blocking answer that is not one is a typed
// error, never a panic or an empty success.
func TestBadGenerateBodies(t *testing.T) {
	for _, tc := range []struct {
		body string
		kind llm.ErrorKind
	}{
		{``, llm.KindMalformed},
		{`[]`, llm.KindMalformed},
		{`{}`, llm.KindMalformed},
		{`{"candidates":[]}`, llm.KindMalformed},
		{`{"candidates":[{"index":1}]}`, llm.KindMalformed},
		{statusBody(500, "INTERNAL", "boom"), llm.KindServer},
	} {
		srv := serve(t, 200, "application/json", []byte(tc.body), 0, nil)
		_, err := newTestModel(srv.URL).Generate(bg, fixtureRequest)
		if e := mustKind(t, err, tc.kind); e.StatusCode != 200 {
			t.Errorf("%s: status %d", tc.body, e.StatusCode)
		}
	}
}

// TestArgumentsThatAreNoObject: a call whose args is not an object (which
// Gemini's schema does not allow) is kept as a malformed call, which the
// tool invoker answers with an error result.
func TestArgumentsThatAreNoObject(t *testing.T) {
	srv := serve(t, 200, "application/json", []byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`), 0, nil)
	resp, err := newTestModel(srv.URL).Generate(bg, fixtureRequest)
	if err != nil {
		t.Fatal(err)
	}
	if uses := resp.Message.ToolUses(); len(uses) != 1 || resp.FinishReason != llm.FinishToolUse {
		t.Fatalf("got %+v", resp)
	} else if text, bad := uses[0].Malformed(); !bad || text != "[1]" {
		t.Errorf("Malformed() = %q, %v", text, bad)
	}
}

// TestKeyStaysInItsHeader: the key goes only in x-goog-api-key, never in
// the URL, and no error holds it, even one a server echoes.
func TestKeyStaysInItsHeader(t *testing.T) {
	var got recorded
	srv := serve(t, 400, "application/json", []byte(statusBody(400, "INVALID_ARGUMENT", "API key not valid: "+testKey+" in "+testKey)), 0, &got)
	_, err := newTestModel(srv.URL).Generate(bg, fixtureRequest)
	mustKind(t, err, llm.KindAuth)
	if strings.Contains(got.url, testKey) || got.header.Get("X-Goog-Api-Key") != testKey || got.header.Get("Authorization") != "" {
		t.Errorf("sent %s with headers %v", got.url, got.header)
	}
	if got.url != "/v1beta/models/gemini-test:generateContent" {
		t.Errorf("posted to %s", got.url)
	}
	// A user's header cannot replace the key.
	srv = serve(t, 200, "text/event-stream", finalChunk, 0, &got)
	if _, _, err := drain(t, newTestModel(srv.URL, WithHeader("x-goog-api-key", "other"), WithHeader("X-Extra", "1")).Stream(bg, fixtureRequest)); err != nil {
		t.Fatal(err)
	}
	if got.header.Values("X-Goog-Api-Key")[0] != testKey || len(got.header.Values("X-Goog-Api-Key")) != 1 || got.header.Get("X-Extra") != "1" {
		t.Errorf("headers %v", got.header)
	}
}

// TestTransportErrorsAreTyped: connection failures, stalls and
// cancellation, for both calls.
func TestTransportErrorsAreTyped(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") == "" {
			w.WriteHeader(200) // a blocking answer whose body never comes
			http.NewResponseController(w).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop)
	m := newTestModel(hang.URL, WithIdleTimeout(100*time.Millisecond))
	_, err := m.Generate(bg, fixtureRequest)
	mustKind(t, err, llm.KindIdleTimeout)
	_, _, err = drain(t, m.Stream(bg, fixtureRequest))
	mustKind(t, err, llm.KindIdleTimeout)

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = newTestModel(hang.URL).Generate(ctx, fixtureRequest)
	mustKind(t, err, llm.KindCancelled)
	_, _, err = drain(t, newTestModel(hang.URL).Stream(ctx, fixtureRequest))
	mustKind(t, err, llm.KindCancelled)

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = newTestModel(closed.URL).Generate(bg, fixtureRequest)
	mustKind(t, err, llm.KindNetwork)
}

// TestConfigurationErrorsSendNothing: no key for Google's endpoint, a bad
// base URL, a bad model name or request fail before anything is sent.
func TestConfigurationErrorsSendNothing(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "")
	t.Setenv("GEMINI_BASE_URL", "")
	_, err := New().Generate(bg, fixtureRequest)
	mustKind(t, err, llm.KindAuth)
	for _, base := range []string{"generativelanguage.googleapis.com", "ftp://x", "http://"} {
		_, err := New(WithAPIKey(testKey), WithBaseURL(base)).Generate(bg, fixtureRequest)
		mustKind(t, err, llm.KindInvalidRequest)
		_, _, err = drain(t, New(WithAPIKey(testKey), WithBaseURL(base)).Stream(bg, fixtureRequest))
		mustKind(t, err, llm.KindInvalidRequest)
	}
	for _, model := range []string{"gemini 2.5", "../etc", "gemini?key=x", "a#b"} {
		_, err := New(WithAPIKey(testKey), WithBaseURL("http://127.0.0.1:1")).Generate(bg, &llm.Request{Model: model, Messages: fixtureRequest.Messages})
		mustKind(t, err, llm.KindInvalidRequest)
	}
	_, err = New(WithAPIKey(testKey), WithBaseURL("http://127.0.0.1:1")).Generate(bg, nil)
	mustKind(t, err, llm.KindInvalidRequest)
}
