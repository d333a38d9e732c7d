package openai

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// The error documents of Chat Completions servers ({"error": {...}},
// Ollama's {"error": "text"}, vLLM's flat {"object": "error", ...}) are
// decoded by provider/internal/adapter, shared with the Responses adapter.
type wireError = adapter.WireError

// inBandError turns an error sent inside a 200 response (a stream's
// {"error": ...} chunk or "event: error", or an error document in place of
// a completion) into a typed error.
func (m *Model) inBandError(we wireError, status int) *llm.Error {
	return adapter.InBandError(&m.client, we, status)
}
