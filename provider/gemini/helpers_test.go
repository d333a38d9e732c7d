package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	providertest.WritePieces(w, body, chunk)
}

// drain ranges over a stream, checking the contract every stream keeps
// (providertest.CheckEvents).
var drain = providertest.Drain

// checkEvents checks a stream's events (providertest.CheckEvents).
var checkEvents = providertest.CheckEvents

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
	providertest.CheckGolden(t, filepath.Join("testdata", "golden", name), got)
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
