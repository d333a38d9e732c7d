package anthropic

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// fuzzKey stands for the API key in error fuzzing: the token KEY in a
// fuzzed body becomes it, so the fuzzer can place the key anywhere.
const fuzzKey = "sk-ant-fuzz-0123456789SECRET"

// FuzzErrorBody feeds arbitrary error bodies with arbitrary statuses, as an
// HTTP error, as a blocking 200 answer and as an in-band stream error: the
// error is always typed, and never holds the API key even when the server
// echoes it.
func FuzzErrorBody(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key KEY"},"request_id":"req_1"}`},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"KEY"}}`},
		{502, `<html>bad gateway KEY</html>`},
		{500, ``},
	} {
		f.Add(s.status, []byte(s.body))
	}
	m := New(WithAPIKey(fuzzKey))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		body = bytes.ReplaceAll(body, []byte("KEY"), []byte(fuzzKey))
		code := 400 + abs(status)%200
		err := m.transport.StatusError(&http.Response{StatusCode: code, Header: http.Header{}}, body)
		checkFuzzError(t, err)
		if _, err := parseResponse(body); err != nil {
			checkFuzzError(t, m.transport.Redact(err))
		}
		ev := append([]byte("event: error\ndata: "), bytes.ReplaceAll(body, []byte("\n"), nil)...)
		s := streamState{ctx: context.Background(), transport: &m.transport}
		s.run(sse.NewDecoder(bytes.NewReader(append(ev, "\n\n"...)), sse.Options{}), func(_ llm.Event, err error) bool {
			if err != nil {
				checkFuzzError(t, err)
			}
			return true
		})
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
	if llm.KindOf(err) == llm.KindUnknown {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if strings.Contains(err.Error(), fuzzKey) {
		t.Fatalf("the error holds the API key: %v", err)
	}
}
