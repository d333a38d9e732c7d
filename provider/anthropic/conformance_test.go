package anthropic

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

// errorTypes are the Messages API's error types by status.
var errorTypes = map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 502: "api_error", 503: "overloaded_error"}

// TestConformance runs the provider kit over the Messages API.
func TestConformance(t *testing.T) {
	streams, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sse"))
	providertest.Run(t, providertest.Adapter{
		New: func(c providertest.Config) llm.Model {
			opts := []Option{WithBaseURL(c.BaseURL), WithAPIKey(c.APIKey), WithModel("claude-test"), WithHTTPClient(c.HTTPClient)}
			if c.IdleTimeout > 0 {
				opts = append(opts, WithIdleTimeout(c.IdleTimeout))
			}
			return New(opts...)
		},
		Opening: []byte(evStart + evText + evDelta),
		More:    []byte(evDelta),
		ErrorBody: func(status int, msg string) []byte {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": errorTypes[status], "message": msg}})
			return b
		},
		Streams:   streams,
		Usage:     filepath.Join(fixtureDir, "messages-stream-text.sse"),
		ToolCalls: filepath.Join(fixtureDir, "messages-stream-parallel-tool-use.sse"),
		Thinking:  filepath.Join(fixtureDir, "messages-stream-thinking-tool-use.sse"),
		Citations: "citations",
		Inline:    map[string][]byte{"citations": []byte(citationsStream())},
	})
}
