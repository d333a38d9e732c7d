package responses

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

// TestConformance runs the provider kit over the Responses API.
func TestConformance(t *testing.T) {
	dir := filepath.Join(fixtureDir, fixtureSet)
	streams, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
	providertest.Run(t, providertest.Adapter{
		New: func(c providertest.Config) llm.Model {
			opts := []Option{WithBaseURL(c.BaseURL + "/v1"), WithAPIKey(c.APIKey), WithModel("gpt-5"), WithHTTPClient(c.HTTPClient)}
			if c.IdleTimeout > 0 {
				opts = append(opts, WithIdleTimeout(c.IdleTimeout))
			}
			return New(opts...)
		},
		Opening: []byte("data: " + hello + "\n\n"),
		More:    []byte("data: " + hello + "\n\n"),
		ErrorBody: func(status int, msg string) []byte {
			return fmt.Appendf(nil, `{"error":{"message":%q,"type":"providertest","param":null,"code":null}}`, msg)
		},
		Streams:   streams,
		Usage:     filepath.Join(dir, "responses-stream-text.sse"),
		ToolCalls: filepath.Join(dir, "responses-stream-parallel-function-calls.sse"),
		Thinking:  filepath.Join(dir, "responses-stream-reasoning-summary-encrypted-function-call.sse"),
		Citations: filepath.Join(dir, "responses-stream-web-search-url-citation.sse"),
	})
}
