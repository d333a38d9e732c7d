package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDir holds real recorded provider traffic, committed with its
// provenance rows and licence notices (provider/testdata/providers/
// PROVENANCE.md, LICENSES/), so a plain clone replays it.
const fixtureDir = "../../testdata/providers"

const testKey = "sk-test-0123456789abcdef"

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, rel))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

// recorded is what a test server saw of one request.
type recorded struct {
	mu      sync.Mutex
	path    string
	headers http.Header
	body    []byte
}

func (r *recorded) get() (string, http.Header, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path, r.headers, r.body
}

// replay serves body with status and contentType, written in pieces of
// piece bytes (0: at once) with a Flush after each.
func replay(t testing.TB, status int, contentType string, body []byte, piece int) (*httptest.Server, *recorded) {
	t.Helper()
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.path, rec.headers, rec.body = r.URL.Path, r.Header.Clone(), b
		rec.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if piece <= 0 {
			w.Write(body)
			return
		}
		f := w.(http.Flusher)
		for rest := body; len(rest) > 0; {
			n := min(piece, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			f.Flush()
			rest = rest[n:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func testModel(srv *httptest.Server, opts ...Option) *Model {
	base := []Option{WithBaseURL(srv.URL + "/v1"), WithAPIKey(testKey), WithModel("gpt-5")}
	return New(append(base, opts...)...)
}

func userRequest() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
}

// drain ranges over a stream, checking the event rules every stream keeps,
// and returns its events, the completed Response and the final error.
func drain(t testing.TB, seq func(func(llm.Event, error) bool)) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	var resp *llm.Response
	var err error
	for ev, e := range seq {
		if e != nil {
			if err != nil || resp != nil {
				t.Fatalf("an error after the end of the stream: %v", e)
			}
			err = e
			continue
		}
		if err != nil || resp != nil {
			t.Fatalf("event %s after the end of the stream", ev.Type)
		}
		evs = append(evs, ev)
		if ev.Type == llm.EventComplete {
			resp = ev.Response
		}
	}
	checkEvents(t, evs, resp != nil)
	return evs, resp, err
}

// checkEvents verifies the stream contract: one MessageStart first, blocks
// opened once and closed once, one block open at a time, deltas only for
// the open block, and re-assembling the deltas gives the completed message.
func checkEvents(t testing.TB, evs []llm.Event, completed bool) {
	t.Helper()
	if len(evs) == 0 {
		return
	}
	if evs[0].Type != llm.EventMessageStart {
		t.Fatalf("first event is %s, want message_start", evs[0].Type)
	}
	open := -1
	started := map[int]bool{}
	kinds := map[int]string{}
	var a llm.Assembler
	for i, ev := range evs {
		if err := a.Add(ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		switch ev.Type {
		case llm.EventMessageStart:
			if i != 0 {
				t.Fatalf("message_start at %d", i)
			}
		case llm.EventBlockStart:
			if open >= 0 {
				t.Fatalf("block %d starts while block %d is open", ev.Index, open)
			}
			if started[ev.Index] {
				t.Fatalf("block %d started twice", ev.Index)
			}
			started[ev.Index], open = true, ev.Index
			kinds[ev.Index] = ev.Block.BlockType()
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventSignatureDelta, llm.EventToolInputDelta, llm.EventCitation:
			if ev.Index != open {
				t.Fatalf("delta for block %d while %d is open", ev.Index, open)
			}
		case llm.EventBlockStop:
			if ev.Index != open || ev.Block == nil {
				t.Fatalf("block_stop for %d (block %v) while %d is open", ev.Index, ev.Block, open)
			}
			open = -1
		case llm.EventComplete:
			if i != len(evs)-1 {
				t.Fatalf("complete at %d of %d", i, len(evs))
			}
			// A tool call cut off by the length limit is never closed: it
			// has no valid arguments to put in a BlockStop.
			if open >= 0 && !(ev.Response.FinishReason == llm.FinishLength && kinds[open] == llm.TypeToolUse) {
				t.Fatalf("complete while block %d is open", open)
			}
		}
	}
	if !completed {
		return
	}
	final := evs[len(evs)-1].Response
	a.SetFinishReason(final.FinishReason)
	again, err := a.Finish()
	if err != nil {
		t.Fatalf("re-assembling the events: %v", err)
	}
	g1, _ := json.Marshal(again.Message)
	g2, _ := json.Marshal(final.Message)
	if !bytes.Equal(g1, g2) {
		t.Fatalf("the deltas re-assemble to\n%s\nbut complete carries\n%s", g1, g2)
	}
}

// golden is what a replayed fixture is checked against.
type golden struct {
	ID           string          `json:"id,omitempty"`
	Model        string          `json:"model,omitempty"`
	FinishReason string          `json:"finish_reason,omitempty"`
	Usage        *llm.Usage      `json:"usage,omitempty"`
	Message      json.RawMessage `json:"message,omitempty"`
	Error        *goldenError    `json:"error,omitempty"`
}

type goldenError struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

func goldenOf(t testing.TB, resp *llm.Response, err error) golden {
	t.Helper()
	var g golden
	if err != nil {
		var le *llm.Error
		if !errors.As(err, &le) {
			t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
		}
		g.Error = &goldenError{Kind: le.Kind.String(), Status: le.StatusCode, Code: le.Code, Message: le.Message}
		return g
	}
	msg, merr := resp.Message.MarshalJSON()
	if merr != nil {
		t.Fatal(merr)
	}
	u := resp.Usage
	g.ID, g.Model, g.FinishReason, g.Usage, g.Message = resp.ID, resp.Model, string(resp.FinishReason), &u, msg
	return g
}

// checkGolden compares got with testdata/golden/<name>.json, or writes it
// with -update.
func checkGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
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
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from the golden file:\n got: %s\nwant: %s", path, got, want)
	}
}

func marshalGolden(t testing.TB, g golden) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// statusOf reads the HTTP status from an error fixture's name
// ("error-400-...").
func statusOf(name string) int {
	var status int
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, "error-"), "%d", &status); err != nil || !strings.HasPrefix(name, "error-") {
		return http.StatusOK
	}
	return status
}

var bg = context.Background()
