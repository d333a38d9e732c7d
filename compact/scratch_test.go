package compact

import (
	"context"
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
)

type spyStrategy struct {
	inner   Pipeline
	prevOut []llm.Message
	log     map[string]int
	t       *testing.T
}

func (s *spyStrategy) Compress(ctx context.Context, msgs []llm.Message, budget int, c TokenCounter) ([]llm.Message, error) {
	out, rep, err := s.inner.CompressReport(ctx, msgs, budget, c)
	if s.prevOut != nil {
		stable := len(s.prevOut) <= len(out) && reflect.DeepEqual(s.prevOut, out[:len(s.prevOut)])
		if !stable {
			key := ""
			for _, st := range rep.Steps {
				key += st.Strategy + ":" + st.Detail + " | "
			}
			s.log["break"]++
			s.t.Logf("break at %d (prev %d): %s", commonPrefix(s.prevOut, out), len(s.prevOut), key)
		}
	}
	s.prevOut = out
	return out, err
}

func TestScratch(t *testing.T) {
	sp := &spyStrategy{inner: DefaultPipeline(nil), log: map[string]int{}, t: t}
	simulateSession(t, 60, 32000, sp, O200k(), 42)
	t.Log(sp.log)
}
