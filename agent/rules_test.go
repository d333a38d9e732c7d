package agent_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
)

// Rules of the run lifecycle, each proven by a test that fails when the
// rule is broken.

// TestPrefixHashesRecordTheRequestAsSent: the session records the prefix
// hashes of the request the model received, after compression, not of the
// uncompressed one (which the provider never saw, so its cache cannot
// serve it).
func TestPrefixHashesRecordTheRequestAsSent(t *testing.T) {
	t.Parallel()
	store := newStore()
	m := llmtest.New(llmtest.Text("ok")).
		WithInfo(llm.ModelInfo{Name: "m", ContextWindow: 100, ReservedOutput: 25, SafetyMargin: 5}).Verify(t)
	a := newAgent(t, m, agent.Config{Store: store,
		Compaction: &compact.Policy{Strategy: &keepLast{}, Counter: fakeCounter{}}})
	input := []llm.Message{llm.AssistantText("old"), llm.UserText(strings.Repeat("x", 68))} // 71 tokens > 70
	if _, err := a.Run(context.Background(), input, withSession("s")); err != nil {
		t.Fatal(err)
	}
	sent := m.Requests()[0].Messages
	if len(sent) != 1 {
		t.Fatalf("the request was not compressed: %d messages", len(sent))
	}
	want, err := session.PrefixHashes(sent)
	if err != nil {
		t.Fatal(err)
	}
	unsent, _ := session.PrefixHashes(input)
	got := store.session(t, "s").Hashes
	if !slices.Equal(got, want) {
		t.Fatalf("recorded hashes %v, want those of the request as sent %v (uncompressed: %v)", got, want, unsent)
	}
}

// storeWatcher is a context provider whose Invoked looks at the store: how
// many turns it holds for the session at that moment.
type storeWatcher struct {
	store     *fakeStore
	turnsSeen int
}

func (w *storeWatcher) Name() string { return "watcher" }
func (w *storeWatcher) Invoking(context.Context, *agent.Invocation) (agent.Injection, error) {
	return agent.Injection{}, nil
}
func (w *storeWatcher) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error {
	w.turnsSeen = len(w.store.appendCalls())
	return nil
}

// TestInvokedRunsBeforeTheTurnIsPersisted: post-invocation calls every
// provider's Invoked first, then persists the turn.
func TestInvokedRunsBeforeTheTurnIsPersisted(t *testing.T) {
	t.Parallel()
	store := newStore()
	w := &storeWatcher{store: store}
	a := newAgent(t, llmtest.New(llmtest.Text("ok")).Verify(t), agent.Config{Store: store, Providers: []agent.ContextProvider{w}})
	resp, err := a.Run(context.Background(), user("hi"), withSession("s"))
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.PersistErr(); err != nil {
		t.Fatal(err)
	}
	if w.turnsSeen != 0 {
		t.Fatalf("Invoked saw %d persisted turns, want 0: it must run before persistence", w.turnsSeen)
	}
	if n := len(store.appendCalls()); n != 1 {
		t.Fatalf("%d turns persisted, want 1", n)
	}
}

// truncated is a model whose stream ends, without an error, before its
// completion event: a server that closed a stream cleanly too early.
type truncated struct{ llm.Model }

func (truncated) Info() llm.ModelInfo { return llm.ModelInfo{Name: "m"} }
func (truncated) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("not used")
}
func (truncated) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if !yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{}}, nil) {
			return
		}
		if !yield(llm.Event{Type: llm.EventBlockStart, Index: 0, Block: llm.Text{}}, nil) {
			return
		}
		yield(llm.Event{Type: llm.EventTextDelta, Index: 0, Delta: "half an ans"}, nil)
	}
}

// TestAStreamWithoutItsCompletionPersistsNothing: the run fails with
// llm.ErrIncompleteStream, the store gets no turn, providers learn the
// error.
func TestAStreamWithoutItsCompletionPersistsNothing(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		store := newStore()
		p := &provider{name: "p", log: &callLog{}}
		a := newAgent(t, truncated{}, agent.Config{Store: store, Providers: []agent.ContextProvider{p}, Retry: middleware.RetryConfig{MaxAttempts: 1}})
		var err error
		if stream {
			s := a.RunStream(context.Background(), user("hi"), withSession("s"))
			for _, e := range s.Updates() {
				if e != nil {
					err = e
				}
			}
			_, werr := s.Wait()
			if !errors.Is(werr, llm.ErrIncompleteStream) {
				t.Fatalf("Wait: %v, want ErrIncompleteStream", werr)
			}
		} else {
			_, err = a.Run(context.Background(), user("hi"), withSession("s"))
		}
		if !errors.Is(err, llm.ErrIncompleteStream) {
			t.Fatalf("stream %v: err = %v, want ErrIncompleteStream", stream, err)
		}
		if n := len(store.appendCalls()); n != 0 {
			t.Fatalf("stream %v: %d turns persisted, want none", stream, n)
		}
		if out := p.lastOutcome(t); !errors.Is(out.Err, llm.ErrIncompleteStream) || out.Response != nil {
			t.Fatalf("stream %v: Invoked saw %+v, want the error and no response", stream, out)
		}
	}
}
