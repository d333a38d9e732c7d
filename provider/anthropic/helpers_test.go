package anthropic

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
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDir holds real recorded provider traffic, committed with its
// provenance rows and licence notices (provider/testdata/providers/
// PROVENANCE.md, LICENSES/), so a plain clone replays it.
const fixtureDir = "../testdata/providers/anthropic"

const testKey = "sk-ant-test-SECRET-0123456789"

// newTestModel returns a Model talking to url with a test key.
func newTestModel(url string, opts ...Option) *Model {
	return New(append([]Option{WithAPIKey(testKey), WithBaseURL(url), WithModel("claude-test")}, opts...)...)
}

// serve starts a server that answers every request with status, contentType
// and body, written chunk bytes at a time with a flush after each (0: all at
// once). It records the last request body in *got when got is not nil.
func serve(t testing.TB, status int, contentType string, body []byte, chunk int, got *[]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if got != nil {
			*got = b
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("request-id", "req_test_123")
		w.WriteHeader(status)
		writeChunked(w, body, chunk)
	}))
	t.Cleanup(srv.Close)
	return srv
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

// drain ranges over a stream, checking the event contract: nothing after an
// error, exactly one EventComplete and it comes last, block events only for
// started blocks.
func drain(t testing.TB, seq func(func(llm.Event, error) bool)) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	var resp *llm.Response
	var failed error
	started := map[int]bool{}
	for ev, err := range seq {
		if failed != nil {
			t.Fatalf("item after the error %v: %+v, %v", failed, ev, err)
		}
		if resp != nil {
			t.Fatalf("event after EventComplete: %+v", ev)
		}
		if err != nil {
			failed = err
			continue
		}
		switch ev.Type {
		case llm.EventBlockStart:
			if started[ev.Index] {
				t.Fatalf("block %d started twice", ev.Index)
			}
			started[ev.Index] = true
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventSignatureDelta, llm.EventToolInputDelta, llm.EventBlockStop:
			if !started[ev.Index] {
				t.Fatalf("%s for block %d before its start", ev.Type, ev.Index)
			}
		case llm.EventComplete:
			if ev.Response == nil {
				t.Fatal("EventComplete without a Response")
			}
			resp = ev.Response
		}
		evs = append(evs, ev)
	}
	if failed == nil && resp == nil {
		t.Fatal("stream ended without an error or EventComplete")
	}
	return evs, resp, failed
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
	Kind      string `json:"kind"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

func goldenOf(resp *llm.Response, err error) any {
	if err != nil {
		var e *llm.Error
		if !errors.As(err, &e) {
			return map[string]string{"untyped_error": err.Error()}
		}
		return goldenError{e.Kind.String(), e.StatusCode, e.Code, e.Message, e.RequestID}
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

func mustKind(t testing.TB, err error, kind llm.ErrorKind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *llm.Error of kind %s", err, err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("kind = %s, want %s (err: %v)", e.Kind, kind, err)
	}
	if s := fmt.Sprint(err); containsKey(s) {
		t.Fatalf("error text holds the API key: %s", s)
	}
	return e
}

func containsKey(s string) bool {
	return strings.Contains(s, testKey) || strings.Contains(s, "SECRET")
}

var bg = context.Background()

func errorAs(err error, target **llm.Error) bool { return errors.As(err, target) }
