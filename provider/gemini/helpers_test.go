package gemini

import (
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
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDir holds real recorded Gemini traffic, committed with its
// provenance rows and licence notices (provider/testdata/providers/
// PROVENANCE.md, LICENSES/), so a plain clone replays it.
const fixtureDir = "../testdata/providers/gemini"

const testKey = "AIzaSy-test-SECRET-0123456789"

var bg = context.Background()

// newTestModel returns a Model talking to url with a test key.
func newTestModel(url string, opts ...Option) *Model {
	return New(append([]Option{WithAPIKey(testKey), WithBaseURL(url), WithModel("gemini-test")}, opts...)...)
}

// serve starts a server that answers every request with status, contentType
// and body, written chunk bytes at a time with a flush after each (0: all at
// once). It records the last request's body and URL when got is not nil.
func serve(t testing.TB, status int, contentType string, body []byte, chunk int, got *recorded) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if got != nil {
			got.body, got.url, got.header = b, r.URL.String(), r.Header.Clone()
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		writeChunked(w, body, chunk)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recorded is what a test server saw of the last request.
type recorded struct {
	body   []byte
	url    string
	header http.Header
}

func writeChunked(w http.ResponseWriter, body []byte, chunk int) {
	f, _ := w.(http.Flusher)
	if chunk <= 0 {
		chunk = len(body)
	}
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		body = body[n:]
	}
}

// drain ranges over a stream and checks the event contract (checkEvents).
func drain(t testing.TB, seq func(func(llm.Event, error) bool)) ([]llm.Event, *llm.Response, error) {
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
	resp := checkEvents(t, evs, failed)
	return evs, resp, failed
}

// checkEvents checks a stream's events: one MessageStart first; block
// events only between their block's start and stop, each block started and
// stopped once, in order; citations only for text blocks, inside them or,
// Gemini's grounding arriving last, after their stop; exactly one
// Complete, last, unless the stream failed; the Complete response is what
// the events assemble to, and each BlockStop carries its final block.
func checkEvents(t testing.TB, evs []llm.Event, failed error) *llm.Response {
	t.Helper()
	type state struct{ started, stopped bool }
	blocks := map[int]*state{}
	var resp *llm.Response
	var asm llm.Assembler
	stops := map[int]llm.Block{}
	late := map[int]bool{} // blocks cited after their stop
	for n, ev := range evs {
		if resp != nil {
			t.Fatalf("event after EventComplete: %+v", ev)
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
			for i, b := range blocks {
				if !b.stopped {
					t.Fatalf("block %d started while block %d is open", ev.Index, i)
				}
			}
			blocks[ev.Index] = &state{started: true}
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventSignatureDelta, llm.EventToolInputDelta, llm.EventBlockStop, llm.EventCitation:
			b := blocks[ev.Index]
			if ev.Type == llm.EventCitation && b != nil && b.stopped {
				late[ev.Index] = true
				break
			}
			if b == nil || b.stopped {
				t.Fatalf("%s for block %d outside its start and stop", ev.Type, ev.Index)
			}
			if ev.Type == llm.EventBlockStop {
				b.stopped = true
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
	for i, b := range blocks {
		if !b.stopped {
			t.Fatalf("block %d never stopped", i)
		}
	}
	asm.SetFinishReason(resp.FinishReason)
	again, err := asm.Finish()
	if err != nil {
		t.Fatal(err)
	}
	again.FinishReason = resp.FinishReason
	if !reflect.DeepEqual(again.Message, resp.Message) || again.ID != resp.ID || again.Model != resp.Model || again.Usage != resp.Usage {
		t.Fatalf("the Complete response differs from what its events assemble to:\n%+v\n%+v", resp, again)
	}
	for i, b := range stops {
		if late[i] {
			// The BlockStop carries the citations yielded before it.
			text, final := b.(llm.Text), resp.Message.Content[i].(llm.Text)
			if text.Text != final.Text || len(text.Citations) > len(final.Citations) ||
				(len(text.Citations) > 0 && !reflect.DeepEqual(text.Citations, final.Citations[:len(text.Citations)])) {
				t.Fatalf("BlockStop %d carries %+v, the response holds %+v", i, b, final)
			}
			continue
		}
		if !reflect.DeepEqual(b, resp.Message.Content[i]) {
			t.Fatalf("BlockStop %d carries %+v, the response holds %+v", i, b, resp.Message.Content[i])
		}
	}
	return resp
}

// goldenResponse is the form a Response is compared in.
type goldenResponse struct {
	ID           string           `json:"id"`
	Model        string           `json:"model"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	Usage        llm.Usage        `json:"usage"`
	Message      llm.Message      `json:"message"`
}

// goldenError is the form an error is compared in.
type goldenError struct {
	Kind       string `json:"kind"`
	Status     int    `json:"status"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	RetryAfter string `json:"retry_after,omitempty"`
}

func goldenOf(resp *llm.Response, err error) any {
	if err != nil {
		var e *llm.Error
		if !errors.As(err, &e) {
			return map[string]string{"untyped_error": err.Error()}
		}
		g := goldenError{Kind: e.Kind.String(), Status: e.StatusCode, Code: e.Code, Message: e.Message}
		if e.RetryAfter > 0 {
			g.RetryAfter = e.RetryAfter.String()
		}
		return g
	}
	return goldenResponse{resp.ID, resp.Model, resp.FinishReason, resp.Usage, resp.Message}
}

// checkGolden compares v, as indented JSON, with testdata/golden/name
// (rewritten with -update).
func checkGolden(t testing.TB, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name)
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
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// mustKind checks err is an *llm.Error of kind that does not hold the key.
func mustKind(t testing.TB, err error, kind llm.ErrorKind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *llm.Error of kind %s", err, err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("kind = %s, want %s (err: %v)", e.Kind, kind, err)
	}
	if s := fmt.Sprint(err); strings.Contains(s, testKey) || strings.Contains(s, "SECRET") {
		t.Fatalf("error text holds the API key: %s", s)
	}
	return e
}

// sseOf frames JSON chunks as Gemini streams them.
func sseOf(chunks ...string) []byte {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return []byte(b.String())
}
