package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// TestACancelledStreamIsCancelledEvenAtEOF: a body that ends with a plain
// EOF after the caller cancelled is the caller's cancellation, not an
// incomplete stream.
func TestACancelledStreamIsCancelledEvenAtEOF(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := newTestModel("http://x.invalid")
	s := streamState{ctx: ctx, transport: &m.transport}
	var got error
	s.run(sse.NewDecoder(strings.NewReader(evStart+evText+evDelta), sse.Options{}), func(_ llm.Event, err error) bool {
		if err != nil {
			got = err
		}
		return true
	})
	if !errors.Is(got, llm.ErrCancelled) {
		t.Fatalf("err = %v, want llm.ErrCancelled", got)
	}
}
