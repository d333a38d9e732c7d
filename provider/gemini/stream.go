package gemini

import (
	"context"
	"errors"
	"io"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// streamState reads a streamGenerateContent?alt=sse body: one
// GenerateContentResponse per SSE event.
type streamState struct {
	ctx       context.Context
	transport *httpx.Client // redacts the key from in-band errors
	turn      turn
	chunk     chunk    // reused for every event
	scratch   [][]byte // unescape buffers of the fast path, one per part
	// slow turns the hand-written chunk decoder off (Model.slowPath), so
	// benchmarks and differential tests can compare with encoding/json.
	slow bool
}

// run reads the stream to its end, yielding events; it returns after the
// final event, after an error was yielded, or when yield returns false.
//
// The answer is complete once a chunk carried a finishReason and the body
// ended. A stream whose body ends, or fails, before any finishReason is
// an llm.ErrIncompleteStream error; a transport failure after the
// finishReason (the answer was whole) still completes it.
func (s *streamState) run(dec *sse.Decoder, yield func(llm.Event, error) bool) {
	for {
		ev, err := dec.Next()
		if err != nil {
			switch {
			case s.turn.finished && s.ctx.Err() == nil:
				err = s.redact(s.turn.complete(yield))
			case s.ctx.Err() != nil:
				// The caller cancelled: the body ended because of it,
				// whatever the read saw (EOF included).
				err = s.redact(httpx.TransportError(s.ctx, providerName, err))
			case errors.Is(err, io.EOF):
				e := llm.IncompleteStream(providerName, "a chunk with a finishReason")
				e.StatusCode = 200
				err = e
			default:
				err = s.redact(httpx.TransportError(s.ctx, providerName, err))
			}
			if err != nil {
				yield(llm.Event{}, err)
			}
			return
		}
		if len(ev.Data) == 0 {
			continue // a comment or an event without data
		}
		more, err := s.step(ev.Data, yield)
		if err != nil {
			yield(llm.Event{}, s.redact(err))
			return
		}
		if !more {
			return
		}
	}
}

// redact sets the status of an adapter error found after HTTP 200 and
// removes the key from it.
func (s *streamState) redact(err error) error {
	if err == nil {
		return nil
	}
	var e *llm.Error
	if errors.As(err, &e) && e.StatusCode == 0 && e.Kind != llm.KindCancelled && e.Kind != llm.KindIdleTimeout && e.Kind != llm.KindNetwork {
		e.StatusCode = 200
	}
	return s.transport.Redact(err)
}

// step decodes and maps one chunk.
func (s *streamState) step(data []byte, yield func(llm.Event, error) bool) (bool, error) {
	ok := false
	if !s.slow {
		ok = decodeFast(data, &s.chunk, &s.scratch)
	}
	if !ok {
		if err := decodeChunk(data, &s.chunk); err != nil {
			e := malformed("cannot decode a stream chunk: %v", err)
			e.Err = err
			return false, e
		}
	}
	return s.turn.feed(&s.chunk, yield)
}
