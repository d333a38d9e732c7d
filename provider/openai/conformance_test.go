package openai

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/providertest"
)

// TestConformance runs the provider kit over Chat Completions and the
// OpenAI-compatible recordings.
func TestConformance(t *testing.T) {
	var streams []string
	for _, dir := range fixtureDirs {
		m, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*.sse"))
		streams = append(streams, m...)
	}
	providertest.Run(t, providertest.Adapter{
		New: func(c providertest.Config) llm.Model {
			opts := []Option{WithBaseURL(c.BaseURL + "/v1"), WithAPIKey(c.APIKey), WithModel("test-model"), WithHTTPClient(c.HTTPClient), WithStructuredOutput(llm.StructuredStrict)}
			if c.IdleTimeout > 0 {
				opts = append(opts, WithIdleTimeout(c.IdleTimeout))
			}
			return New(opts...)
		},
		Opening: []byte("data: " + hello + "\n\n"),
		More:    []byte("data: " + hello + "\n\n"),
		ErrorBody: func(status int, msg string) []byte {
			return fmt.Appendf(nil, `{"error":{"message":%q,"type":"providertest","code":null}}`, msg)
		},
		Streams:   streams,
		Usage:     filepath.Join(fixtureDir, "openai/chat-stream-text-usage.sse"),
		ToolCalls: filepath.Join(fixtureDir, "openai/chat-stream-parallel-tool-calls.sse"),
		Citations: "url-citation",
		Thinking:  "gemini-signed-call",
		Inline: map[string][]byte{"url-citation": []byte(urlCitationStream()),
			"gemini-signed-call": []byte(signedCallStream(geminiSignedCall))},
	})
}
