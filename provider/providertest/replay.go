package providertest

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
)

// Update is the -update flag of the test binaries that import this
// package: [CheckGolden] rewrites its golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// Pieces are the sizes a recorded body is written in, a Flush after each:
// at once (0), byte by byte, in pieces of 3 and 7 (they split lines, CRLFs and
// multi-byte characters) and of 64.
var Pieces = []int{0, 1, 3, 7, 64}

// Recorded is what a test server saw of the last request.
type Recorded struct {
	mu     sync.Mutex
	url    string
	header http.Header
	body   []byte
	n      int
}

// Get returns the last request's URL (path and query), headers and body.
func (r *Recorded) Get() (url string, header http.Header, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url, r.header, r.body
}

// Count returns how many requests the server has seen.
func (r *Recorded) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Serve starts a server (closed when t ends) that answers every request
// with status, contentType and body, written piece bytes at a time with a
// Flush after each (0: at once), and records the request.
func Serve(t testing.TB, status int, contentType string, body []byte, piece int) (*httptest.Server, *Recorded) {
	t.Helper()
	return ServeWith(t, nil, status, contentType, body, piece)
}

// ServeWith is [Serve] with header set on every answer.
func ServeWith(t testing.TB, header http.Header, status int, contentType string, body []byte, piece int) (*httptest.Server, *Recorded) {
	t.Helper()
	rec := &Recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.url, rec.header, rec.body = r.URL.String(), r.Header.Clone(), b
		rec.n++
		rec.mu.Unlock()
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		WritePieces(w, body, piece)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// WritePieces writes body to w piece bytes at a time (0: at once), with a
// Flush after each, and stops at the first failed write.
func WritePieces(w http.ResponseWriter, body []byte, piece int) {
	f, _ := w.(http.Flusher)
	if piece <= 0 {
		piece = len(body)
	}
	for len(body) > 0 {
		n := min(piece, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		body = body[n:]
	}
}

// Drain ranges over a stream and returns its events (the EventComplete
// included), the Response of its EventComplete and its error, failing t
// when the stream breaks the contract [CheckEvents] states.
func Drain(t testing.TB, seq iter.Seq2[llm.Event, error]) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	var failed error
	for ev, err := range seq {
		if failed != nil {
			t.Fatalf("item after the error %v: %+v, %v", failed, ev, err)
		}
		if err != nil {
			failed = err
			continue
		}
		evs = append(evs, ev)
	}
	resp := CheckEvents(t, evs, failed)
	return evs, resp, failed
}

// CheckEvents checks a stream's events and returns the Response of its
// EventComplete (nil when failed is not nil). The contract: one
// MessageStart, first; each block started once, in index order, one open
// at a time; deltas, citations and its BlockStop only while its block is
// open (a citation may also follow its block's stop: Gemini's grounding
// arrives last); every BlockStop carries the block; exactly one
// EventComplete, last, with a Response, unless the stream failed, and
// nothing after it; every block stopped by then, except a tool call cut
// off by the length limit (it has no arguments to close with, and may be
// dropped from the answer); and the
// events re-assemble ([llm.Assembler]) to the Response's message, each
// BlockStop carrying its final block.
func CheckEvents(t testing.TB, evs []llm.Event, failed error) *llm.Response {
	t.Helper()
	type state struct {
		kind    string
		stopped bool
	}
	blocks := map[int]*state{}
	open := -1
	var resp *llm.Response
	var asm llm.Assembler
	stops := map[int]llm.Block{}
	late := map[int]bool{}
	for n, ev := range evs {
		if resp != nil {
			t.Fatalf("event %s after EventComplete", ev.Type)
		}
		if (n == 0) != (ev.Type == llm.EventMessageStart) {
			t.Fatalf("event %d is %s; a stream starts with one message_start", n, ev.Type)
		}
		switch ev.Type {
		case llm.EventBlockStart:
			if blocks[ev.Index] != nil {
				t.Fatalf("block %d started twice", ev.Index)
			}
			if ev.Index != len(blocks) {
				t.Fatalf("block %d started after %d blocks", ev.Index, len(blocks))
			}
			if open >= 0 {
				t.Fatalf("block %d starts while block %d is open", ev.Index, open)
			}
			kind := ""
			if ev.Block != nil {
				kind = ev.Block.BlockType()
			}
			blocks[ev.Index], open = &state{kind: kind}, ev.Index
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventSignatureDelta, llm.EventToolInputDelta, llm.EventBlockStop, llm.EventCitation:
			b := blocks[ev.Index]
			if ev.Type == llm.EventCitation && b != nil && b.stopped {
				late[ev.Index] = true
				break
			}
			if b == nil || b.stopped || ev.Index != open {
				t.Fatalf("%s for block %d outside its start and stop", ev.Type, ev.Index)
			}
			if ev.Type == llm.EventBlockStop {
				if ev.Block == nil {
					t.Fatalf("block_stop %d carries no block", ev.Index)
				}
				b.stopped, open = true, -1
				stops[ev.Index] = ev.Block
			}
		case llm.EventComplete:
			if ev.Response == nil {
				t.Fatal("EventComplete without a Response")
			}
			resp = ev.Response
			continue
		}
		if err := asm.Add(ev); err != nil {
			t.Fatalf("the events do not assemble: %v", err)
		}
	}
	if failed != nil {
		if resp != nil {
			t.Fatalf("an error after EventComplete: %v", failed)
		}
		return nil
	}
	if resp == nil {
		t.Fatal("stream ended without an error or EventComplete")
	}
	if open >= 0 && !(resp.FinishReason == llm.FinishLength && blocks[open].kind == llm.TypeToolUse) {
		t.Fatalf("complete while block %d is open", open)
	}
	asm.SetFinishReason(resp.FinishReason)
	again, err := asm.Finish()
	if err != nil {
		t.Fatalf("re-assembling the events: %v", err)
	}
	g1, _ := json.Marshal(again.Message)
	g2, _ := json.Marshal(resp.Message)
	if !bytes.Equal(g1, g2) {
		t.Fatalf("the events re-assemble to\n%s\nbut EventComplete carries\n%s", g1, g2)
	}
	for i, b := range stops {
		if i >= len(resp.Message.Content) {
			if resp.FinishReason == llm.FinishLength {
				continue // a tool call cut off by the length limit is dropped
			}
			t.Fatalf("BlockStop %d beyond the response's %d blocks", i, len(resp.Message.Content))
		}
		final := resp.Message.Content[i]
		if late[i] {
			// The BlockStop carries the text and the citations yielded
			// before it.
			text, ok1 := b.(llm.Text)
			whole, ok2 := final.(llm.Text)
			if !ok1 || !ok2 || text.Text != whole.Text || len(text.Citations) > len(whole.Citations) {
				t.Fatalf("BlockStop %d carries %+v, the response holds %+v", i, b, final)
			}
			continue
		}
		s1, _ := json.Marshal(b)
		s2, _ := json.Marshal(final)
		if !bytes.Equal(s1, s2) {
			t.Fatalf("BlockStop %d carries %s, the response holds %s", i, s1, s2)
		}
	}
	return resp
}

// CheckGolden compares got with the file at path, or writes it there when
// the test runs with -update.
func CheckGolden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (run the test with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
