package gemini

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// TestACancelledStreamIsCancelledEvenAtEOF: when the caller cancels, the
// body may end with a plain EOF before any finishReason; that is the
// caller's cancellation, not an incomplete stream (the cancellation suite
// caught the network error once under load).
func TestACancelledStreamIsCancelledEvenAtEOF(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := streamState{ctx: ctx, transport: &httpx.Client{}}
	s.turn.init("gemini-test")
	var got error
	s.run(sse.NewDecoder(bytes.NewReader([]byte(sseOf(textChunk("half an ans", "")))), sse.Options{}), func(_ llm.Event, err error) bool {
		if err != nil {
			got = err
		}
		return true
	})
	if !errors.Is(got, llm.ErrCancelled) {
		t.Fatalf("err = %v, want llm.ErrCancelled", got)
	}
}
