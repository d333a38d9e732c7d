package faultserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Format is a wire format the server speaks.
type Format uint8

// The wire formats, chosen by the request path.
const (
	OpenAI    Format = iota // POST .../chat/completions
	Anthropic               // POST .../v1/messages
	Gemini                  // POST .../models/{model}:generateContent or :streamGenerateContent
)

func (f Format) String() string {
	switch f {
	case Anthropic:
		return "anthropic"
	case Gemini:
		return "gemini"
	}
	return "openai"
}

// Fault is how one response misbehaves. The zero value, OK, is a correct
// response.
type Fault uint8

// The faults. "Before content" means after the stream's first event (the
// message start, or OpenAI's role chunk) and before any text or tool call;
// Step.At moves an in-stream fault after some content.
const (
	// OK answers correctly with Step.Reply.
	OK Fault = iota
	// Status answers Step.Status (429, 500, 502, 503, 529, ...) with the
	// format's error body, and a Retry-After header (whole seconds, rounded
	// up) when Step.RetryAfter is set.
	Status
	// InBandError answers HTTP 200 and then an error: in a stream, an error
	// event before content (Anthropic's "event: error" with
	// overloaded_error; an OpenAI {"error": ...} chunk with code
	// "overloaded"); in a blocking answer, an error document as the body.
	InBandError
	// Reset closes the connection with a TCP reset (SO_LINGER 0) after
	// Step.Bytes bytes of the response body (the headers always go out).
	Reset
	// Truncate ends the response early: a stream loses its final events
	// (OpenAI's finish chunk, usage and [DONE]; Anthropic's message_delta and
	// message_stop) and ends cleanly; a blocking body announces its whole
	// Content-Length and the connection closes after half of it.
	Truncate
	// Malformed sends a chunk that is not JSON before content (a stream),
	// or a body that is not JSON (a blocking answer).
	Malformed
	// Oversized sends, before content, one event whose data is Step.Bytes
	// long (a valid text delta); a blocking answer gets a valid body whose
	// text is Step.Bytes long.
	Oversized
	// Stall sends the HTTP 200 headers and then no byte until the client
	// goes away or the server closes.
	Stall
	// StallHeaders sends nothing at all, not even headers, until the client
	// goes away or the server closes.
	StallHeaders
	// HugeBody answers, streamed or not, with a valid non-streamed JSON
	// answer (Content-Type application/json) whose text is Step.Bytes long.
	HugeBody
)

var faultNames = [...]string{OK: "ok", Status: "status", InBandError: "in-band error", Reset: "reset",
	Truncate: "truncate", Malformed: "malformed", Oversized: "oversized event", Stall: "stall",
	StallHeaders: "stall before headers", HugeBody: "huge body"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "unknown"
}

// Step is what the server does for one request.
type Step struct {
	Fault Fault
	// Status is the HTTP status of a Status fault.
	Status int
	// RetryAfter is sent with a Status fault as Retry-After.
	RetryAfter time.Duration
	// Bytes is the reset point of Reset and the size of Oversized and
	// HugeBody; with Status, the error body is padded to about Bytes.
	Bytes int
	// Message, when set, is the error message of Status and InBandError
	// (servers echo all sorts of things back).
	Message string
	// At is how many content events of a stream go out before an
	// InBandError, Malformed or Oversized event (0: before any content).
	At int
	// Delay is a wait before anything is written.
	Delay time.Duration
	// Reply is the answer of OK, and what a faulty stream would have sent.
	Reply Reply
}

// Reply is a correct answer.
type Reply struct {
	// Text is the answer's text, sent in Chunks deltas of about equal size
	// (one when Chunks is 0). Empty text with no tool calls answers "ok".
	Text   string
	Chunks int
	// Interval is the pause before each content event of a stream but the
	// first.
	Interval time.Duration
	// ToolCalls are asked for after the text; the finish reason is then
	// tool use.
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are the usage reported; 0 means 10 and
	// the number of chunks.
	InputTokens, OutputTokens int
}

// ToolCall is one tool call of a Reply. Args is its JSON arguments object.
type ToolCall struct {
	ID, Name, Args string
}

// Request is what the server received, as a handler sees it.
type Request struct {
	N           int    // 1 for the first request the server served
	Format      Format // by the path
	Stream      bool   // the body's "stream" (Gemini: the path's method)
	Model       string // the body's "model" (Gemini: the path's)
	Messages    int    // messages in the body (Gemini: contents)
	ToolResults int    // tool results among them (OpenAI "tool" messages, Anthropic tool_result blocks, Gemini functionResponse parts)
	Header      http.Header
	Body        []byte
}

// Call is one served request and the step it got.
type Call struct {
	Request
	Step Step
}

// Server is a running fault server. Its methods are safe for concurrent
// use.
type Server struct {
	// URL is the server's base address, http://127.0.0.1:port.
	URL string

	ts      *httptest.Server
	closing chan struct{}
	once    sync.Once
	n       atomic.Int64

	mu      sync.Mutex
	queue   []Step
	handler func(Request) Step
	calls   []Call
	record  bool
}

// Option configures a Server.
type Option func(*Server)

// WithHandler decides the step of each request the script does not cover.
// It may be called concurrently.
func WithHandler(h func(Request) Step) Option { return func(s *Server) { s.handler = h } }

// WithoutRecording keeps the server from recording calls (for load tests);
// Requests still counts them.
func WithoutRecording() Option { return func(s *Server) { s.record = false } }

// New starts a server on 127.0.0.1. Close it when done.
func New(opts ...Option) *Server {
	s := &Server{closing: make(chan struct{}), record: true}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.ts.URL
	return s
}

// OpenAIBaseURL is the base URL for an OpenAI-compatible client ({URL}/v1).
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// AnthropicBaseURL is the base URL for an Anthropic client.
func (s *Server) AnthropicBaseURL() string { return s.URL }

// GeminiBaseURL is the base URL for a Gemini client.
func (s *Server) GeminiBaseURL() string { return s.URL }

// Enqueue appends steps to the script: each request takes the next one.
func (s *Server) Enqueue(steps ...Step) {
	s.mu.Lock()
	s.queue = append(s.queue, steps...)
	s.mu.Unlock()
}

// Pending returns how many scripted steps no request has taken yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns how many requests the server has received.
func (s *Server) Requests() int { return int(s.n.Load()) }

// Calls returns the recorded calls, in the order they arrived.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Reset empties the script and forgets the calls and the count.
func (s *Server) Reset() {
	s.mu.Lock()
	s.queue, s.calls = nil, nil
	s.n.Store(0)
	s.mu.Unlock()
}

// Close stops stalled and paused responses and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// maxRequestBody bounds what the server reads of a request.
const maxRequestBody = 64 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body}
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req.Format = OpenAI
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		req.Format = Anthropic
	case strings.Contains(r.URL.Path, "/models/") && (strings.HasSuffix(r.URL.Path, ":generateContent") || strings.HasSuffix(r.URL.Path, ":streamGenerateContent")):
		req.Format = Gemini
		path := r.URL.Path[strings.LastIndex(r.URL.Path, "/models/")+len("/models/"):]
		req.Model, req.Stream = strings.CutSuffix(path, ":streamGenerateContent")
		req.Model = strings.TrimSuffix(req.Model, ":generateContent")
	default:
		http.NotFound(w, r)
		return
	}
	parseRequest(&req)
	req.N = int(s.n.Add(1))
	step := s.next(req)
	if s.record {
		s.mu.Lock()
		s.calls = append(s.calls, Call{Request: req, Step: step})
		s.mu.Unlock()
	}
	if !s.wait(r, step.Delay) {
		return
	}
	rs := &responder{s: s, w: w, r: r, req: &req, step: &step}
	rs.respond()
}

func (s *Server) next(req Request) Step {
	s.mu.Lock()
	if len(s.queue) > 0 {
		st := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return st
	}
	h := s.handler
	s.mu.Unlock()
	if h != nil {
		return h(req)
	}
	return Step{}
}

// wait pauses d; it returns false if the client went away or the server is
// closing first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// block waits until the client goes away or the server closes.
func (s *Server) block(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
}

// parseRequest fills the fields of req read from its body; a body that does
// not parse leaves them zero.
func parseRequest(req *Request) {
	if req.Format == Gemini {
		parseGemini(req)
		return
	}
	var wire struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(req.Body, &wire) != nil {
		return
	}
	req.Model, req.Stream, req.Messages = wire.Model, wire.Stream, len(wire.Messages)
	for _, m := range wire.Messages {
		if req.Format == OpenAI {
			if m.Role == "tool" {
				req.ToolResults++
			}
			continue
		}
		if c := bytes.TrimSpace(m.Content); len(c) > 0 && c[0] == '[' {
			var blocks []struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(c, &blocks) == nil {
				for _, b := range blocks {
					if b.Type == "tool_result" {
						req.ToolResults++
					}
				}
			}
		}
	}
}

// parseGemini counts a Gemini request's contents and functionResponse
// parts.
func parseGemini(req *Request) {
	var wire struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(req.Body, &wire) != nil {
		return
	}
	req.Messages = len(wire.Contents)
	for _, c := range wire.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				req.ToolResults++
			}
		}
	}
}
