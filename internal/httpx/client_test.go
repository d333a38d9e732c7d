package httpx

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

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "sk-test-0123456789SECRET"

// server starts a test server running h, closed when the test ends; release
// is closed before the server closes, so a handler that waits on it (or on
// its request's context) lets Close finish.
func server(t *testing.T, h func(w http.ResponseWriter, r *http.Request, release <-chan struct{})) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r, release)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv
}

// wait blocks until the request ends or the test releases the handler.
func wait(r *http.Request, release <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-release:
	}
}

// TestPostTimeouts checks the header wait and the body guard: a stream's
// wait for its response headers is bounded by the idle timeout (a
// KindIdleTimeout error wrapping sse.ErrIdleTimeout with ErrHeaderTimeout's
// text); a blocking call waits for its headers as long as ctx allows; any
// body that stalls after its headers fails its Read with sse.ErrIdleTimeout.
func TestPostTimeouts(t *testing.T) {
	const idle = 100 * time.Millisecond
	tests := []struct {
		name    string
		stream  bool
		handler func(w http.ResponseWriter, r *http.Request, release <-chan struct{})
		postErr bool // Post fails with the header timeout
		readErr error
	}{
		{"a stream whose headers never come times out", true,
			func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) { wait(r, release) }, true, nil},
		{"a stream whose headers come late times out", true,
			func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
				select {
				case <-time.After(5 * idle):
				case <-r.Context().Done():
					return
				}
				w.Write([]byte("data: x\n\n"))
			}, true, nil},
		{"a blocking call waits longer than the idle timeout for its headers", false,
			func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
				time.Sleep(3 * idle)
				w.Write([]byte(`{"ok":true}`))
			}, false, nil},
		{"a stream whose body stalls fails its read", true,
			func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
				w.Write([]byte("data: x\n\n"))
				http.NewResponseController(w).Flush()
				wait(r, release)
			}, false, sse.ErrIdleTimeout},
		{"a blocking body that stalls fails its read", false,
			func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
				w.Write([]byte(`{"ok"`))
				http.NewResponseController(w).Flush()
				wait(r, release)
			}, false, sse.ErrIdleTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := server(t, tc.handler)
			c := &Client{Provider: "p", Endpoint: srv.URL, Idle: idle}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			resp, err := c.Post(ctx, []byte(`{}`), tc.stream)
			if tc.postErr {
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != llm.KindIdleTimeout || !errors.Is(err, sse.ErrIdleTimeout) ||
					!errors.Is(err, llm.ErrIdleTimeout) || !errors.Is(err, ErrHeaderTimeout) || e.Message != ErrHeaderTimeout.Error() || e.Provider != "p" {
					t.Fatalf("err = %#v, want the header timeout", err)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Fatalf("gave up after %v", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			if !errors.Is(err, tc.readErr) {
				t.Fatalf("read err = %v, want %v", err, tc.readErr)
			}
			if tc.readErr != nil {
				if terr := c.TransportError(ctx, err); llm.KindOf(terr) != llm.KindIdleTimeout || errors.Is(terr, ErrHeaderTimeout) {
					t.Fatalf("TransportError(%v) = %v, want a body idle timeout", err, terr)
				}
			}
		})
	}
}

// TestPostCancelledWhileWaiting checks that the caller's cancellation is
// KindCancelled, not a header timeout.
func TestPostCancelledWhileWaiting(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) { wait(r, release) })
	c := &Client{Provider: "p", Endpoint: srv.URL, Idle: time.Minute}
	for _, stream := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := c.Post(ctx, nil, stream)
		cancel()
		if !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("stream %v: err = %v, want cancelled", stream, err)
		}
	}
}

// TestClosingAStreamCancelsItsRequest: closing a stream's body ends the
// request, which the server sees as its context ending.
func TestClosingAStreamCancelsItsRequest(t *testing.T) {
	done := make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.Write([]byte("data: x\n\n"))
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			close(done)
		case <-release:
		}
	})
	c := &Client{Provider: "p", Endpoint: srv.URL}
	resp, err := c.Post(context.Background(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's request did not end when the body was closed")
	}
}

// TestPostStatusErrors checks non-2xx responses: the decoder's error
// completed with the provider, status, Retry-After and fallbacks, the body
// cut at ErrorBodyLimit, and the secret redacted.
func TestPostStatusErrors(t *testing.T) {
	big := strings.Repeat("x", ErrorBodyLimit+4096)
	tests := []struct {
		name    string
		status  int
		header  http.Header
		body    string
		decode  func(*http.Response, []byte) *llm.Error
		kind    llm.ErrorKind
		code    string
		msg     string // the message, or its prefix when it ends in "…"
		retry   time.Duration
		bodyLen int // the length DecodeError saw, when a decoder is given
	}{
		{"no decoder: the status's kind and the body as the message", 503, nil, "upstream down", nil,
			llm.KindOverloaded, "", "upstream down", 0, 0},
		{"no decoder and no body: the status text", 500, nil, "", nil,
			llm.KindServer, "", "Internal Server Error", 0, 0},
		{"a long non-JSON body is a snippet", 502, nil, strings.Repeat("é", 400), nil,
			llm.KindServer, "", strings.Repeat("é", 250) + "…", 0, 0},
		{"Retry-After is read", 429, http.Header{"Retry-After": {"3"}}, `{}`, nil,
			llm.KindRateLimited, "", "{}", 3 * time.Second, 0},
		{"the decoder's kind, code and message win", 400, nil, `{"error":"long prompt"}`,
			func(_ *http.Response, b []byte) *llm.Error {
				return &llm.Error{Kind: llm.KindContextLength, Code: "context_length", Message: "long prompt"}
			}, llm.KindContextLength, "context_length", "long prompt", 0, len(`{"error":"long prompt"}`)},
		{"a decoder's unknown kind falls back to the status", 401, nil, `x`,
			func(_ *http.Response, b []byte) *llm.Error { return &llm.Error{Message: "who are you"} },
			llm.KindAuth, "", "who are you", 0, 1},
		{"a nil decoded error falls back to the status", 404, nil, `gone`,
			func(_ *http.Response, b []byte) *llm.Error { return nil }, llm.KindInvalidRequest, "", "gone", 0, 4},
		{"the error body is cut at ErrorBodyLimit", 500, nil, big,
			func(_ *http.Response, b []byte) *llm.Error { return &llm.Error{Message: fmt.Sprint(len(b))} },
			llm.KindServer, "", fmt.Sprint(ErrorBodyLimit), 0, ErrorBodyLimit},
		{"an echoed secret is redacted from message and code", 401, nil, `{"key":"` + testSecret + `"}`,
			func(_ *http.Response, b []byte) *llm.Error {
				return &llm.Error{Code: "bad_" + testSecret, Message: "invalid key " + testSecret}
			}, llm.KindAuth, "bad_xxxxx", "invalid key xxxxx", 0, len(`{"key":"` + testSecret + `"}`)},
		{"an echoed secret is redacted from a snippet", 502, nil, "<html><title>key " + testSecret + "</title></html>", nil,
			llm.KindServer, "", "key xxxxx", 0, 0},
		{"the decoder's wait stands without a Retry-After header", 429, nil, `{}`,
			func(*http.Response, []byte) *llm.Error {
				return &llm.Error{Message: "slow down", RetryAfter: 37 * time.Second}
			},
			llm.KindRateLimited, "", "slow down", 37 * time.Second, 2},
		{"a Retry-After header wins over the decoder's wait", 429, http.Header{"Retry-After": {"5"}}, `{}`,
			func(*http.Response, []byte) *llm.Error {
				return &llm.Error{Message: "slow down", RetryAfter: 37 * time.Second}
			},
			llm.KindRateLimited, "", "slow down", 5 * time.Second, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := server(t, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			for _, stream := range []bool{false, true} {
				seen := -1
				c := &Client{Provider: "p", Endpoint: srv.URL, Secret: testSecret}
				if tc.decode != nil {
					c.DecodeError = func(resp *http.Response, body []byte) *llm.Error {
						seen = len(body)
						return tc.decode(resp, body)
					}
				}
				resp, err := c.Post(context.Background(), []byte(`{}`), stream)
				if resp != nil {
					t.Fatalf("a %d gave a response", tc.status)
				}
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, not an *llm.Error", err)
				}
				msgOK := e.Message == tc.msg
				if strings.HasSuffix(tc.msg, "…") {
					msgOK = strings.HasPrefix(e.Message, strings.TrimSuffix(tc.msg, "…")) && strings.HasSuffix(e.Message, "…")
				}
				if e.Kind != tc.kind || e.Code != tc.code || !msgOK || e.RetryAfter != tc.retry || e.StatusCode != tc.status || e.Provider != "p" {
					t.Errorf("stream %v: got %+v", stream, e)
				}
				if tc.decode != nil && seen != tc.bodyLen {
					t.Errorf("stream %v: the decoder saw %d bytes, want %d", stream, seen, tc.bodyLen)
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Errorf("stream %v: the error holds the secret: %v", stream, err)
				}
			}
		})
	}
}

// TestPostHeaders checks what a request carries: the defaults, the
// adapter's headers, the user's replacing them, and the credential set
// last.
func TestPostHeaders(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		header http.Header
		want   map[string][]string
	}{
		{"blocking defaults", false, nil, map[string][]string{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "User-Agent": {"agcore"}}},
		{"stream defaults", true, nil, map[string][]string{"Accept": {"text/event-stream"}}},
		{"the adapter's own and the user's", true,
			MergeHeader(http.Header{"Anthropic-Version": {"2023-06-01"}}, http.Header{"Anthropic-Beta": {"a", "b"}}, "X-Api-Key", "k"),
			map[string][]string{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"a", "b"}, "X-Api-Key": {"k"}}},
		{"a user header replaces the adapter's and a default", false,
			MergeHeader(http.Header{"Anthropic-Version": {"1"}}, http.Header{"Anthropic-Version": {"2"}, "User-Agent": {"me"}}, "X-Api-Key", "k"),
			map[string][]string{"Anthropic-Version": {"2"}, "User-Agent": {"me"}}},
		{"a user header cannot replace the credential", false,
			MergeHeader(nil, http.Header{"Authorization": {"Basic abc"}}, "Authorization", "Bearer k"),
			map[string][]string{"Authorization": {"Bearer k"}}},
		{"without a credential the user's stays", false,
			MergeHeader(nil, http.Header{"Authorization": {"Basic abc"}}, "Authorization", ""),
			map[string][]string{"Authorization": {"Basic abc"}}},
		{"no credential, no header", false, MergeHeader(nil, nil, "Authorization", ""), map[string][]string{"Authorization": nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got http.Header
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.Header.Clone()
				// A RoundTripper that edits the header in place must not
				// reach the Client's Header or the next request.
				for _, vs := range r.Header {
					vs[0] = "edited"
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})}
			c := &Client{Provider: "p", HTTP: client, Endpoint: "http://h/x", Header: tc.header}
			for range 2 {
				resp, err := c.Post(context.Background(), []byte(`{}`), tc.stream)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				for k, v := range tc.want {
					if fmt.Sprint(got[k]) != fmt.Sprint(v) {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPostTransportErrors: a failure to send is KindNetwork, names neither
// the secret nor the endpoint's query string.
func TestPostTransportErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	tests := []struct {
		name     string
		endpoint string
		client   *http.Client
	}{
		{"a dead server with a key in the query", dead.URL + "/v1?key=" + testSecret, nil},
		{"a transport that echoes the secret", "http://h/v1", &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, errors.New("proxy refused " + testSecret)
		})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				c := &Client{Provider: "p", HTTP: tc.client, Endpoint: tc.endpoint, Secret: testSecret}
				_, err := c.Post(context.Background(), nil, stream)
				if !errors.Is(err, llm.ErrNetwork) || strings.Contains(fmt.Sprintf("%v %+v", err, err), testSecret) {
					t.Errorf("stream %v: err = %v", stream, err)
				}
			}
		})
	}
}

func TestRedact(t *testing.T) {
	c := &Client{Secret: testSecret}
	tests := []struct {
		name      string
		c         *Client
		err       error
		msg, code string
	}{
		{"message and code", c, &llm.Error{Message: "a " + testSecret + " b " + testSecret, Code: testSecret},
			"a xxxxx b xxxxx", "xxxxx"},
		{"a wrapped error", c, fmt.Errorf("ctx: %w", &llm.Error{Message: testSecret}), "xxxxx", ""},
		{"a short secret is left alone", &Client{Secret: "sk-1"}, &llm.Error{Message: "ask-1 task-1"}, "ask-1 task-1", ""},
		{"no secret", &Client{}, &llm.Error{Message: "x"}, "x", ""},
		{"a nil Client", nil, &llm.Error{Message: testSecret}, testSecret, ""},
	}
	for _, tc := range tests {
		got := tc.c.Redact(tc.err)
		if got != tc.err {
			t.Errorf("%s: Redact returned another error", tc.name)
		}
		var e *llm.Error
		errors.As(got, &e)
		if e.Message != tc.msg || e.Code != tc.code {
			t.Errorf("%s: got message %q code %q", tc.name, e.Message, e.Code)
		}
	}
	plain := errors.New(testSecret)
	if c.Redact(plain) != plain || c.Redact(nil) != nil {
		t.Error("a non-llm error changed")
	}
}

func TestMergeHeader(t *testing.T) {
	own := http.Header{"Anthropic-Version": {"1"}, "X-Keep": {"k"}}
	user := http.Header{}
	user.Add("anthropic-version", "2")
	user.Add("x-api-key", "user")
	h := MergeHeader(own, user, "x-api-key", "secret")
	want := http.Header{"Anthropic-Version": {"2"}, "X-Keep": {"k"}, "X-Api-Key": {"secret"}}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", h, want)
	}
	h["X-Keep"][0] = "changed"
	if own["X-Keep"][0] != "k" {
		t.Fatal("MergeHeader shares its input's values")
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"  short \n", "short"},
		{strings.Repeat("a", 500), strings.Repeat("a", 500)},
		{strings.Repeat("a", 501), strings.Repeat("a", 500) + "…"},
		{"a" + strings.Repeat("é", 300), "a" + strings.Repeat("é", 249) + "…"}, // never cut inside a rune
		{"", ""},
		{"<!DOCTYPE html>\n<html><head><title>501\n  Not Implemented &amp; more</title></head><body>" + strings.Repeat("x", 900) + "</body></html>", "501 Not Implemented & more"},
		{"<html><body><h1>Bad <b>gateway</b></h1>\n<p>nginx</p></body></html>", "Bad gateway"},
		{"<html><body>" + strings.Repeat("y\n", 400) + "</body></html>", "an HTML page"},
		{"<b>not a page</b>", "<b>not a page</b>"},
	}
	for _, tc := range tests {
		if got := Snippet([]byte(tc.in)); got != tc.want {
			t.Errorf("Snippet(%.20q…) = %.20q… (%d bytes), want %d bytes", tc.in, got, len(got), len(tc.want))
		}
	}
}
