package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/observe"
)

type recorder struct {
	phases []observe.Phase
	attrs  map[string]any
	ended  []error
}

func (r *recorder) Start(ctx context.Context, p observe.Phase) (context.Context, observe.Span) {
	r.phases = append(r.phases, p)
	return ctx, r
}

func (r *recorder) Inject(_ context.Context, set func(k, v string)) { set("traceparent", "00-x") }

func (r *recorder) SetInt(k string, v int) { r.attrs[k] = v }
func (r *recorder) SetString(k, v string)  { r.attrs[k] = v }
func (r *recorder) End(err error)          { r.ended = append(r.ended, err) }
func newRecorder() *recorder               { return &recorder{attrs: map[string]any{}} }
func headers() (map[string]string, func(k, v string)) {
	h := map[string]string{}
	return h, func(k, v string) { h[k] = v }
}

func TestWithoutObserverNothingHappens(t *testing.T) {
	ctx := context.Background()
	if observe.From(ctx) != nil {
		t.Fatal("a bare context has an observer")
	}
	if observe.With(ctx, nil) != ctx {
		t.Fatal("With(nil) made a new context")
	}
	got, sp := observe.Start(ctx, observe.PhaseCompaction)
	if got != ctx {
		t.Fatal("Start without an observer changed the context")
	}
	sp.SetInt("a", 1)
	sp.SetString("b", "c")
	sp.End(errors.New("x"))
	h, set := headers()
	observe.Inject(ctx, set)
	if len(h) != 0 {
		t.Fatalf("Inject without an observer wrote %v", h)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_, sp := observe.Start(ctx, observe.PhasePersistence)
		sp.End(nil)
		observe.Inject(ctx, set)
	})
	if allocs != 0 {
		t.Fatalf("the no-observer path allocates %v times", allocs)
	}
}

func TestObserverFromContext(t *testing.T) {
	r := newRecorder()
	ctx := observe.With(context.Background(), r)
	if observe.From(ctx) != observe.Observer(r) {
		t.Fatal("From does not return the observer")
	}
	_, sp := observe.Start(ctx, observe.PhaseCompaction)
	sp.SetInt(observe.AttrCompactionBudget, 10)
	sp.End(nil)
	h, set := headers()
	observe.Inject(ctx, set)
	if len(r.phases) != 1 || r.phases[0] != observe.PhaseCompaction || r.attrs[observe.AttrCompactionBudget] != 10 || len(r.ended) != 1 {
		t.Fatalf("recorded %+v", r)
	}
	if h["traceparent"] != "00-x" {
		t.Fatalf("headers %v", h)
	}
}
