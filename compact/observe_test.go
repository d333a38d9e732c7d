package compact_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/observe"
)

// phaseRecorder records the phase spans a policy opens.
type phaseRecorder struct{ spans []*phaseSpan }

type phaseSpan struct {
	phase observe.Phase
	attrs map[string]any
	err   error
	ended bool
}

func (r *phaseRecorder) Start(ctx context.Context, p observe.Phase) (context.Context, observe.Span) {
	s := &phaseSpan{phase: p, attrs: map[string]any{}}
	r.spans = append(r.spans, s)
	return ctx, s
}
func (r *phaseRecorder) Inject(context.Context, func(string, string)) {}
func (s *phaseSpan) SetInt(k string, v int)                           { s.attrs[k] = v }
func (s *phaseSpan) SetString(k, v string)                            { s.attrs[k] = v }
func (s *phaseSpan) End(err error)                                    { s.err, s.ended = err, true }

// TestFitTracesCompressionsOnly: a request that fits opens no span; one
// that is compressed opens one compaction span with the strategy, the
// budget and the sizes before and after; a failed compression ends its span
// with the error.
func TestFitTracesCompressionsOnly(t *testing.T) {
	msgs := toolSession(12, 200)
	n := compact.Estimator{}.CountMessages(msgs)
	rec := &phaseRecorder{}
	ctx := observe.With(context.Background(), rec)

	p := &compact.Policy{Counter: compact.Estimator{}, Budget: n, Logger: quiet(), Strategy: compact.Truncate{KeepLast: 2, Step: 1}}
	if _, err := p.Fit(ctx, &llm.Request{Messages: msgs}, llm.ModelInfo{}); err != nil {
		t.Fatal(err)
	}
	if len(rec.spans) != 0 {
		t.Fatalf("a request that fits opened %d spans", len(rec.spans))
	}

	p = &compact.Policy{Counter: compact.Estimator{}, Budget: n / 2, Logger: quiet(), Strategy: compact.Truncate{KeepLast: 2, Step: 1}}
	got, err := p.Fit(ctx, &llm.Request{Messages: msgs}, llm.ModelInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.spans) != 1 {
		t.Fatalf("one compression opened %d spans", len(rec.spans))
	}
	s := rec.spans[0]
	if s.phase != observe.PhaseCompaction || !s.ended || s.err != nil {
		t.Fatalf("span %+v", s)
	}
	if s.attrs[observe.AttrCompactionBudget] != n/2 || s.attrs[observe.AttrCompactionTokensBefore] != n ||
		s.attrs[observe.AttrCompactionMessagesBefore] != len(msgs) || s.attrs[observe.AttrCompactionMessagesAfter] != len(got.Messages) ||
		s.attrs[observe.AttrCompactionStrategy] == "" {
		t.Errorf("attributes %v", s.attrs)
	}
	if after, _ := s.attrs[observe.AttrCompactionTokensAfter].(int); after <= 0 || after > n/2 {
		t.Errorf("tokens after = %v, want within the budget %d", s.attrs[observe.AttrCompactionTokensAfter], n/2)
	}

	p = &compact.Policy{Counter: compact.Estimator{}, Budget: n / 2, Logger: quiet(),
		Strategy: &strategyFunc{fn: func(context.Context, []llm.Message, int, compact.TokenCounter) ([]llm.Message, error) {
			return nil, errStrategy
		}}}
	if _, err := p.Fit(ctx, &llm.Request{Messages: msgs}, llm.ModelInfo{}); err != nil {
		t.Fatal(err) // over the budget, within no known window: sent as it is
	}
	if len(rec.spans) != 2 || !errors.Is(rec.spans[1].err, errStrategy) {
		t.Fatalf("a failed compression: %+v", rec.spans[len(rec.spans)-1])
	}
}
