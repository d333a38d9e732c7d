package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
)

// Key is the API key the suite gives an adapter; no error may show it.
const Key = "sk-providertest-SECRET-0123456789"

// Config is what the suite builds a model with.
type Config struct {
	// BaseURL is the test server's URL: the adapter sends every request
	// below it, as it would below its provider's base URL.
	BaseURL string
	// APIKey is [Key].
	APIKey string
	// HTTPClient sends the requests (a client of the suite's own, so it
	// can close idle connections before counting goroutines).
	HTTPClient *http.Client
	// IdleTimeout is how long a response may go without a byte; 0 means
	// the adapter's default.
	IdleTimeout time.Duration
}

// Adapter describes the adapter under test. New, Opening, More and
// ErrorBody are required; a recording left empty skips the check that
// needs it (an adapter whose API has no citations names none).
type Adapter struct {
	// New returns the adapter's model configured by c.
	New func(c Config) llm.Model
	// StreamContentType is the Content-Type of the adapter's streams
	// ("text/event-stream" when empty).
	StreamContentType string
	// Opening is the start of a stream in the provider's framing, up to
	// and including an event the adapter yields a text delta for.
	Opening []byte
	// More is one more event of that stream, yielding one more text delta;
	// the suite repeats it.
	More []byte
	// ErrorBody returns the body the provider sends with an error status,
	// holding message.
	ErrorBody func(status int, message string) []byte
	// Streams are recorded streams (file paths), each replayed in every
	// piece size of [Pieces].
	Streams []string
	// Usage is a recorded stream whose answer reports input and output
	// tokens.
	Usage string
	// ToolCalls is a recorded stream whose answer calls tools.
	ToolCalls string
	// Thinking is a recorded stream whose answer holds a signature (of a
	// thinking block or a tool call) the provider requires back.
	Thinking string
	// Citations is a recorded stream whose answer cites its sources.
	Citations string
	// Inline holds streams given in the test itself rather than in files,
	// by the name the fields above use for them.
	Inline map[string][]byte
}

// Run runs the suite against a, each check in a subtest. See the package
// documentation for what it checks.
func Run(t *testing.T, a Adapter) {
	t.Helper()
	if a.New == nil || a.Opening == nil || a.More == nil || a.ErrorBody == nil {
		t.Fatal("providertest: Adapter needs New, Opening, More and ErrorBody")
	}
	if a.StreamContentType == "" {
		a.StreamContentType = "text/event-stream"
	}
	tests := []struct {
		name string
		run  func(t *testing.T, a *Adapter)
	}{
		{"ReplayInEveryPieceSize", testReplay},
		{"ErrorKinds", testErrorKinds},
		{"NoKeyInErrors", testNoKey},
		{"CancelMidStream", testCancel},
		{"BreakClosesTheRequest", testBreak},
		{"ConnectionCutMidStream", testCut},
		{"IdleTimeout", testIdle},
		{"Usage", testUsage},
		{"ToolCalls", testToolCalls},
		{"SignaturesGoBack", testSignatures},
		{"StructuredOutputRequest", testStructured},
		{"Citations", testCitations},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, &a) })
	}
}

// model builds the adapter's model for srv on a client of its own, closed
// when t ends.
func (a *Adapter) model(t *testing.T, srv *httptest.Server, idle time.Duration) llm.Model {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return a.New(Config{BaseURL: srv.URL, APIKey: Key, HTTPClient: &http.Client{Transport: tr}, IdleTimeout: idle})
}

// noLeak fails t, when it ends, if a goroutine started after this call is
// still running. Call it first.
func noLeak(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func userRequest() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
}

// read returns the stream a names path: inline, else the file.
func (a *Adapter) read(t *testing.T, path string) []byte {
	t.Helper()
	if b, ok := a.Inline[path]; ok {
		return b
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading a recording: %v", err)
	}
	return b
}

// replayed returns the Response a's model makes of the recorded stream at
// path, written in pieces of piece bytes, and the request it sent.
func (a *Adapter) replayed(t *testing.T, path string, piece int, req *llm.Request) (*llm.Response, []byte) {
	t.Helper()
	srv, rec := Serve(t, http.StatusOK, a.StreamContentType, a.read(t, path), piece)
	_, resp, err := Drain(t, a.model(t, srv, 0).Stream(context.Background(), req))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	_, _, body := rec.Get()
	return resp, body
}

func testReplay(t *testing.T, a *Adapter) {
	if len(a.Streams) == 0 {
		t.Skip("no recorded streams")
	}
	for _, path := range a.Streams {
		t.Run(path, func(t *testing.T) {
			body := a.read(t, path)
			var first []byte
			for _, piece := range Pieces {
				if piece == 1 && testing.Short() && len(body) > 16<<10 {
					continue // -short: byte by byte only for small recordings
				}
				srv, _ := Serve(t, http.StatusOK, a.StreamContentType, body, piece)
				_, resp, err := Drain(t, a.model(t, srv, 0).Stream(context.Background(), userRequest()))
				got := outcome(resp, err)
				if first == nil {
					first = got
				} else if string(got) != string(first) {
					t.Fatalf("written in pieces of %d the stream gives\n%s\nbut at once\n%s", piece, got, first)
				}
			}
		})
	}
}

func outcome(resp *llm.Response, err error) []byte {
	if err != nil {
		var e *llm.Error
		if errors.As(err, &e) {
			b, _ := json.Marshal(struct {
				Kind, Code, Message string
				Status              int
			}{e.Kind.String(), e.Code, e.Message, e.StatusCode})
			return b
		}
		return []byte(err.Error())
	}
	b, _ := json.Marshal(struct {
		ID, Model string
		Finish    llm.FinishReason
		Usage     llm.Usage
		Message   llm.Message
	}{resp.ID, resp.Model, resp.FinishReason, resp.Usage, resp.Message})
	return b
}

// errorKinds is the HTTP status table every adapter keeps: the status
// gives the kind when the body says nothing more precise.
var errorKinds = []struct {
	status int
	kind   llm.ErrorKind
	retry  string // the Retry-After header sent
	after  time.Duration
}{
	{400, llm.KindInvalidRequest, "", 0},
	{401, llm.KindAuth, "", 0},
	{403, llm.KindAuth, "", 0},
	{404, llm.KindInvalidRequest, "", 0},
	{429, llm.KindRateLimited, "7", 7 * time.Second},
	{500, llm.KindServer, "", 0},
	{502, llm.KindServer, "", 0},
	{503, llm.KindOverloaded, "", 0},
}

func testErrorKinds(t *testing.T, a *Adapter) {
	for _, tc := range errorKinds {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/stream=%v", tc.status, stream), func(t *testing.T) {
				msg := fmt.Sprintf("providertest says %d", tc.status)
				h := http.Header{}
				if tc.retry != "" {
					h.Set("Retry-After", tc.retry)
				}
				srv, _ := ServeWith(t, h, tc.status, "application/json", a.ErrorBody(tc.status, msg), 0)
				m := a.model(t, srv, 0)
				var err error
				if stream {
					_, _, err = Drain(t, m.Stream(context.Background(), userRequest()))
				} else {
					_, err = m.Generate(context.Background(), userRequest())
				}
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want an *llm.Error", err, err)
				}
				if e.Kind != tc.kind || e.StatusCode != tc.status || !strings.Contains(e.Message, msg) {
					t.Fatalf("err = %+v, want kind %s, status %d and the provider's message %q", e, tc.kind, tc.status, msg)
				}
				if tc.after > 0 && e.RetryAfter != tc.after {
					t.Fatalf("RetryAfter = %v, want %v from the Retry-After header", e.RetryAfter, tc.after)
				}
				if e.Kind.Retryable() != llm.IsRetryable(err) {
					t.Fatalf("IsRetryable(%v) disagrees with its kind", err)
				}
			})
		}
	}
	t.Run("a body that is not the provider's", func(t *testing.T) {
		// A proxy's HTML page is reported by its title, on one line; a
		// plain-text body is kept.
		srv, _ := Serve(t, 500, "text/html", []byte("<html><head><title>502 Bad Gateway</title></head><body><h1>bad gateway</h1><p>nginx</p></body></html>"), 0)
		_, err := a.model(t, srv, 0).Generate(context.Background(), userRequest())
		if llm.KindOf(err) != llm.KindServer || !strings.Contains(err.Error(), "502 Bad Gateway") || strings.Contains(err.Error(), "nginx") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("err = %v, want a server error naming the page's title on one line", err)
		}
		srv, _ = Serve(t, 500, "text/plain", []byte("upstream timed out"), 0)
		_, err = a.model(t, srv, 0).Generate(context.Background(), userRequest())
		if llm.KindOf(err) != llm.KindServer || !strings.Contains(err.Error(), "upstream timed out") {
			t.Fatalf("err = %v, want a server error keeping the body", err)
		}
	})
}

// testNoKey: a server that echoes every request header back in its error
// message gets the key redacted, and a transport error names no key.
func testNoKey(t *testing.T, a *Adapter) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		var all []string
		for k, v := range r.Header {
			all = append(all, k+"="+strings.Join(v, ","))
		}
		all = append(all, "url="+r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(a.ErrorBody(http.StatusUnauthorized, strings.ReplaceAll(strings.Join(all, " "), `"`, "'")))
	}))
	defer srv.Close()
	for _, stream := range []bool{false, true} {
		var err error
		m := a.model(t, srv, 0)
		if stream {
			_, _, err = Drain(t, m.Stream(context.Background(), userRequest()))
		} else {
			_, err = m.Generate(context.Background(), userRequest())
		}
		if !errors.Is(err, llm.ErrAuth) {
			t.Fatalf("stream=%v: err = %v, want an auth error", stream, err)
		}
		if s := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(s, Key) {
			t.Fatalf("stream=%v: the error holds the key: %s", stream, s)
		}
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	_, err := a.model(t, dead, 0).Generate(context.Background(), userRequest())
	if !errors.Is(err, llm.ErrNetwork) || strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), Key) {
		t.Fatalf("err = %v, want a network error without the key", err)
	}
}

// stall serves the stream's opening (unless beforeHeaders) and then waits
// for the client to go away.
func (a *Adapter) stall(t *testing.T, beforeHeaders bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // reading the body lets the server notice the client leaving
		if !beforeHeaders {
			w.Header().Set("Content-Type", a.StreamContentType)
			w.Write(a.Opening)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testCancel(t *testing.T, a *Adapter) {
	noLeak(t)
	srv := a.stall(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	deltas := 0
	for ev, e := range a.model(t, srv, 0).Stream(ctx, userRequest()) {
		if e != nil {
			err = e
			break
		}
		if ev.Type == llm.EventTextDelta {
			deltas++
			cancel()
		}
	}
	if deltas == 0 {
		t.Fatal("Opening yielded no text delta")
	}
	if !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	_, err = a.model(t, srv, 0).Generate(ctx, userRequest())
	if !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate in a cancelled context: err = %v, want a cancellation", err)
	}
}

// testBreak: leaving the range early cancels the request; the server sees
// its client go away, and no goroutine is left.
func testBreak(t *testing.T, a *Adapter) {
	noLeak(t)
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", a.StreamContentType)
		w.Write(a.Opening)
		for {
			if _, err := w.Write(a.More); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	n := 0
	for _, err := range a.model(t, srv, 0).Stream(context.Background(), userRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 5 {
			break
		}
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the request end")
	}
}

// testCut: a connection closed or reset after the opening is a network
// error, and the events before it were delivered.
func testCut(t *testing.T, a *Adapter) {
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprintf("reset=%v", reset), func(t *testing.T) {
			noLeak(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", a.StreamContentType, len(a.Opening), a.Opening)
				buf.Flush()
				if reset {
					conn.(*net.TCPConn).SetLinger(0)
				}
				conn.Close()
			}))
			defer srv.Close()
			evs, resp, err := Drain(t, a.model(t, srv, 0).Stream(context.Background(), userRequest()))
			if resp != nil || !errors.Is(err, llm.ErrNetwork) {
				t.Fatalf("err = %v after %d events, want a network error", err, len(evs))
			}
			if !hasDelta(evs) {
				t.Fatalf("the events before the cut were not delivered: %+v", evs)
			}
		})
	}
}

func hasDelta(evs []llm.Event) bool {
	for _, ev := range evs {
		if ev.Type == llm.EventTextDelta {
			return true
		}
	}
	return false
}

func testIdle(t *testing.T, a *Adapter) {
	for _, beforeHeaders := range []bool{false, true} {
		t.Run(fmt.Sprintf("before headers %v", beforeHeaders), func(t *testing.T) {
			noLeak(t)
			srv := a.stall(t, beforeHeaders)
			_, resp, err := Drain(t, a.model(t, srv, 50*time.Millisecond).Stream(context.Background(), userRequest()))
			if resp != nil || !errors.Is(err, llm.ErrIdleTimeout) {
				t.Fatalf("err = %v, want an idle timeout", err)
			}
		})
	}
}

func testUsage(t *testing.T, a *Adapter) {
	if a.Usage == "" {
		t.Skip("no recording with usage")
	}
	resp, _ := a.replayed(t, a.Usage, 0, userRequest())
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Fatalf("usage = %+v, want input and output tokens", resp.Usage)
	}
}

func testToolCalls(t *testing.T, a *Adapter) {
	if a.ToolCalls == "" {
		t.Skip("no recording with tool calls")
	}
	for _, piece := range []int{0, 7} {
		resp, _ := a.replayed(t, a.ToolCalls, piece, userRequest())
		ids := map[string]bool{}
		for _, b := range resp.Message.Content {
			u, ok := b.(llm.ToolUse)
			if !ok {
				continue
			}
			if u.ID == "" || u.Name == "" || ids[u.ID] {
				t.Fatalf("tool call %+v: want a name and an id of its own", u)
			}
			ids[u.ID] = true
			var args map[string]any
			if err := json.Unmarshal(u.Input, &args); err != nil {
				t.Fatalf("tool call %s: arguments %s are no JSON object: %v", u.Name, u.Input, err)
			}
		}
		if len(ids) == 0 {
			t.Fatalf("no tool call in %s: %+v", a.ToolCalls, resp.Message)
		}
		if resp.FinishReason != llm.FinishToolUse {
			t.Fatalf("finish reason %q, want %q", resp.FinishReason, llm.FinishToolUse)
		}
	}
}

// testSignatures: every signature of a recorded answer goes back, unchanged,
// when the answer is sent back as history.
func testSignatures(t *testing.T, a *Adapter) {
	if a.Thinking == "" {
		t.Skip("no recording with signatures")
	}
	resp, _ := a.replayed(t, a.Thinking, 7, userRequest())
	var sigs []string
	var results []llm.Block
	for _, b := range resp.Message.Content {
		switch b := b.(type) {
		case llm.Thinking:
			if b.Signature != "" {
				sigs = append(sigs, b.Signature)
			}
		case llm.ToolUse:
			if b.Signature != "" {
				sigs = append(sigs, b.Signature)
			}
			results = append(results, llm.ToolResult{ToolUseID: b.ID, Content: []llm.Block{llm.Text{Text: "done"}}})
		}
	}
	if len(sigs) == 0 {
		t.Fatalf("no signature in %s: %+v", a.Thinking, resp.Message)
	}
	history := []llm.Message{llm.UserText("hi"), resp.Message}
	if len(results) > 0 {
		history = append(history, llm.Message{Role: llm.RoleUser, Content: results})
	} else {
		history = append(history, llm.UserText("go on"))
	}
	_, sent := a.replayed(t, a.Thinking, 0, &llm.Request{Messages: history})
	for _, s := range sigs {
		q, _ := json.Marshal(s)
		if !strings.Contains(string(sent), string(q)) {
			t.Fatalf("signature %.40s... did not go back; sent %s", s, sent)
		}
	}
}

// testStructured: a JSON-schema response format reaches the request, its
// schema whole, for a model whose API constrains answers natively.
func testStructured(t *testing.T, a *Adapter) {
	srv, rec := Serve(t, http.StatusOK, a.StreamContentType, nil, 0)
	m := a.model(t, srv, 0)
	if m.Info().Structured == llm.StructuredNone {
		t.Skip("the model has no native structured output")
	}
	schema := json.RawMessage(`{"type":"object","properties":{"providertest_field":{"type":"string"}},"required":["providertest_field"],"additionalProperties":false}`)
	req := userRequest()
	req.ResponseFormat = &llm.ResponseFormat{Type: "json_schema", Name: "providertest_answer", Schema: schema}
	for range m.Stream(context.Background(), req) {
	}
	_, _, body := rec.Get()
	if rec.Count() == 0 {
		t.Fatal("the request was not sent")
	}
	if !strings.Contains(string(body), `"providertest_field"`) || !strings.Contains(string(body), `"required"`) {
		t.Fatalf("the schema is not in the request: %s", body)
	}
}

func testCitations(t *testing.T, a *Adapter) {
	if a.Citations == "" {
		t.Skip("no recording with citations")
	}
	resp, _ := a.replayed(t, a.Citations, 7, userRequest())
	for _, b := range resp.Message.Content {
		if text, ok := b.(llm.Text); ok && len(text.Citations) > 0 {
			for _, c := range text.Citations {
				if c.Kind == "" || (c.URL == "" && c.Title == "" && c.CitedText == "" && c.Document == 0 && c.FileID == "" && c.Kind != llm.CitationDocument) {
					t.Fatalf("citation %+v names no source", c)
				}
			}
			return
		}
	}
	t.Fatalf("no citation in %s: %+v", a.Citations, resp.Message)
}
