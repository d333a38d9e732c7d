package gemini

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

// errorStatuses are Google's canonical error codes by HTTP status.
var errorStatuses = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNKNOWN", 503: "UNAVAILABLE"}

// TestConformance runs the provider kit over the Gemini API.
func TestConformance(t *testing.T) {
	streams, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sse"))
	providertest.Run(t, providertest.Adapter{
		New: func(c providertest.Config) llm.Model {
			opts := []Option{WithBaseURL(c.BaseURL), WithAPIKey(c.APIKey), WithModel("gemini-test"), WithHTTPClient(c.HTTPClient)}
			if c.IdleTimeout > 0 {
				opts = append(opts, WithIdleTimeout(c.IdleTimeout))
			}
			return New(opts...)
		},
		Opening: sseOf(textChunk("Hello", "")),
		More:    sseOf(textChunk(" again", "")),
		ErrorBody: func(status int, msg string) []byte {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": errorStatuses[status]}})
			return b
		},
		Streams:   streams,
		Usage:     filepath.Join(fixtureDir, "stream-text.sse"),
		ToolCalls: filepath.Join(fixtureDir, "stream-parallel-function-calls-with-ids.sse"),
		Thinking:  filepath.Join(fixtureDir, "stream-thought-summary-function-call.sse"),
		Citations: filepath.Join(fixtureDir, "stream-grounding-google-search.sse"),
	})
}
