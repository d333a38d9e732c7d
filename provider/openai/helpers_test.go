package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = providertest.Update

// fixtureDir holds real recorded provider traffic, committed with its
// provenance rows and licence notices (provider/testdata/providers/
// PROVENANCE.md, LICENSES/), so a plain clone replays it.
const fixtureDir = "../testdata/providers"

const testKey = "sk-test-0123456789abcdef"

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, rel))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

type recorded = providertest.Recorded

// replay serves body with status and contentType, written in pieces of
// piece bytes (0: at once) with a Flush after each.
func replay(t testing.TB, status int, contentType string, body []byte, piece int) (*httptest.Server, *recorded) {
	t.Helper()
	return providertest.Serve(t, status, contentType, body, piece)
}

func testModel(srv *httptest.Server, opts ...Option) *Model {
	base := []Option{WithBaseURL(srv.URL + "/v1"), WithAPIKey(testKey), WithModel("test-model")}
	return New(append(base, opts...)...)
}

func userRequest() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
}

// drain ranges over a stream, checking the contract every stream keeps
// (providertest.CheckEvents).
var drain = providertest.Drain

// checkEvents checks the events of a stream that completed or (completed
// false) failed.
func checkEvents(t testing.TB, evs []llm.Event, completed bool) {
	t.Helper()
	var failed error
	if !completed {
		failed = llm.ErrIncompleteStream
	}
	providertest.CheckEvents(t, evs, failed)
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
	providertest.CheckGolden(t, filepath.Join("testdata", "golden", name+".json"), got)
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
