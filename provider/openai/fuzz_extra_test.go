package openai

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// fuzzKey stands for the API key in error-body fuzzing: the token KEY in a
// fuzzed body becomes it, so the fuzzer can place the key anywhere.
const fuzzKey = "sk-fuzz-0123456789abcdefSECRET"

// FuzzErrorBody feeds arbitrary error bodies with arbitrary statuses, as an
// HTTP error and as an error document inside a 200 answer: the error is
// always typed, and never holds the API key even when the server echoes it.
func FuzzErrorBody(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
		{401, `{"error":{"message":"Incorrect API key provided: KEY","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{400, `{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}`},
		{500, `{"error":"KEY"}`},
		{502, `<html>bad gateway KEY</html>`},
		{503, `{"object":"error","message":"overloaded","type":"server_error","code":503}`},
		{400, `{"error":{"message":"x","code":400,"status_code":429}}`},
		{200, `{"error":{"message":"boom KEY","code":null}}`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	m := New(WithAPIKey(fuzzKey))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		body = bytes.ReplaceAll(body, []byte("KEY"), []byte(fuzzKey))
		code := 400 + abs(status)%200
		err := m.client.StatusError(&http.Response{StatusCode: code, Header: http.Header{}}, body)
		checkFuzzError(t, err)
		if we, ok := adapter.ParseError(body); ok {
			checkFuzzError(t, m.inBandError(we, 200))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if llm.KindOf(err) == llm.KindUnknown {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if strings.Contains(err.Error(), fuzzKey) {
		t.Fatalf("the error holds the API key: %v", err)
	}
}
