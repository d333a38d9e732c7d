package responses

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// The error documents of the Responses API (an HTTP error body, a
// stream's error event, a failed response's error) are decoded by
// provider/internal/adapter, shared with the Chat Completions adapter.
type wireError = adapter.WireError

// inBandError turns an error sent inside a 200 response (a stream's error
// event, a failed response, an error document in place of a response)
// into a typed error.
func (m *Model) inBandError(we wireError, status int) *llm.Error {
	return adapter.InBandError(&m.client, we, status)
}
