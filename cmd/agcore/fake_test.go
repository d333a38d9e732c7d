package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fake is a model provider served from the test process: each request
// gets the next scripted reply, and every request is recorded.
type fake struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	replies  []reply
	requests []request
}

// reply answers one request.
type reply func(w http.ResponseWriter, r *http.Request)

// request is one recorded request.
type request struct {
	path   string
	header http.Header
	raw    []byte
	body   map[string]any
}

func newFake(t *testing.T, replies ...reply) *fake {
	t.Helper()
	f := &fake{t: t, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := request{path: r.URL.Path, header: r.Header.Clone(), raw: raw}
	_ = json.Unmarshal(raw, &rec.body)
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	var next reply
	if len(f.replies) > 0 {
		next, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	if next == nil {
		f.t.Errorf("fake provider: unexpected request %d to %s", len(f.requests), r.URL.Path)
		http.Error(w, `{"error":{"message":"no scripted reply left","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	next(w, r)
}

// add appends replies to the script.
func (f *fake) add(replies ...reply) {
	f.mu.Lock()
	f.replies = append(f.replies, replies...)
	f.mu.Unlock()
}

// got returns the recorded requests.
func (f *fake) got() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

// messages returns request i's "messages" as JSON text (for substring checks).
func (f *fake) messages(i int) string {
	f.t.Helper()
	reqs := f.got()
	if i >= len(reqs) {
		f.t.Fatalf("only %d requests, want request %d", len(reqs), i+1)
	}
	b, _ := json.Marshal(reqs[i].body["messages"])
	return string(b)
}

// fixture replays a recorded response body from the repository's
// provider fixtures (provider/testdata/providers, with their provenance).
func fixture(t *testing.T, name string) reply {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "provider", "testdata", "providers", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Write(body)
	}
}

// status answers with an HTTP error and a provider-style body.
func status(code int, body string) reply {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// sse writes server-sent events, flushing after each.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

func (s sse) data(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.w.(http.Flusher).Flush()
}

func (s sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.w.(http.Flusher).Flush()
}

// call is a tool call a scripted reply makes.
type call struct {
	id, name, args string
}

// turn is what a scripted OpenAI or Anthropic reply says.
type turn struct {
	thinking string
	text     string
	calls    []call
	// in, out and cached are the usage the reply reports.
	in, out, cached int
	// cut ends the stream after the first text piece, without a finish
	// (a connection lost mid-stream).
	cut bool
	// hang waits, after the first text piece, until the client goes away.
	hang bool
	// gate, when not nil, holds the text after its first piece until it
	// is closed (or the client goes away).
	gate <-chan struct{}
}

// pieces cuts s into chunks of at most n bytes, as a provider streams it.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// openaiReply streams tr as an OpenAI Chat Completions stream.
func openaiReply(tr turn) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		}
		s.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, p := range pieces(tr.thinking, 7) {
			s.data(chunk(map[string]any{"reasoning_content": p}, nil))
		}
		for i, p := range pieces(tr.text, 5) {
			s.data(chunk(map[string]any{"content": p}, nil))
			if i == 0 && tr.cut {
				return // no finish, no [DONE]: the connection is gone
			}
			if i == 0 && tr.hang {
				<-r.Context().Done()
				return
			}
			if i == 0 && tr.gate != nil {
				select {
				case <-tr.gate:
				case <-r.Context().Done():
					return
				}
			}
		}
		for i, c := range tr.calls {
			s.data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
			for _, p := range pieces(c.args, 6) {
				s.data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
			}
		}
		finish := "stop"
		if len(tr.calls) > 0 {
			finish = "tool_calls"
		}
		s.data(chunk(map[string]any{}, finish))
		s.data(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": tr.in, "completion_tokens": tr.out, "total_tokens": tr.in + tr.out,
				"prompt_tokens_details": map[string]any{"cached_tokens": tr.cached}}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// anthropicReply streams tr as an Anthropic Messages stream.
func anthropicReply(tr turn) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
			"usage": map[string]any{"input_tokens": tr.in - tr.cached, "cache_read_input_tokens": tr.cached, "output_tokens": 1}}})
		idx := 0
		block := func(start map[string]any, deltas []map[string]any) {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start})
			for _, d := range deltas {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d})
			}
			s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
			idx++
		}
		if tr.thinking != "" {
			var ds []map[string]any
			for _, p := range pieces(tr.thinking, 7) {
				ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": p})
			}
			ds = append(ds, map[string]any{"type": "signature_delta", "signature": "sig-1"})
			block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
		}
		if tr.text != "" {
			var ds []map[string]any
			for _, p := range pieces(tr.text, 5) {
				ds = append(ds, map[string]any{"type": "text_delta", "text": p})
			}
			block(map[string]any{"type": "text", "text": ""}, ds)
		}
		for _, c := range tr.calls {
			var ds []map[string]any
			for _, p := range pieces(c.args, 6) {
				ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
			block(map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}, ds)
		}
		stop := "end_turn"
		if len(tr.calls) > 0 {
			stop = "tool_use"
		}
		s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop},
			"usage": map[string]any{"output_tokens": tr.out}})
		s.event("message_stop", map[string]any{"type": "message_stop"})
	}
}

// contains reports whether any string of list contains sub.
func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
