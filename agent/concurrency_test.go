package agent_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

// blockingStep answers "first" once release is closed, after signalling
// started.
func blockingStep(started, release chan struct{}) llmtest.Step {
	return llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &llm.Response{Message: llm.AssistantText("first")}, nil
	})
}

func TestConcurrentRunsOnOneSessionWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		m := llmtest.New(blockingStep(started, release), llmtest.Text("second")).Verify(t)
		store := newStore()
		a := newAgent(t, m, agent.Config{Store: store})
		ctx := context.Background()

		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := a.Run(ctx, user("q1"), withSession("s")); err != nil {
				t.Error(err)
			}
		})
		<-started
		second := make(chan error, 1)
		go func() { _, err := a.Run(ctx, user("q2"), withSession("s")); second <- err }()

		// A run on another session is not held up.
		other := newAgent(t, llmtest.New(llmtest.Text("other")).Verify(t), agent.Config{Store: store})
		if _, err := other.Run(ctx, user("x"), withSession("t")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the second run is as far as it can get
		if m.Calls() != 1 {
			t.Fatalf("the second run reached the model while the first was in progress")
		}
		close(release)
		wg.Wait()
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		// The second run saw the first's whole turn: they did not interleave.
		if got := texts(m.Requests()[1].Messages); !reflect.DeepEqual(got, []string{"user:q1", "assistant:first", "user:q2"}) {
			t.Errorf("second request %q", got)
		}
		if got := texts(store.session(t, "s").Messages); !reflect.DeepEqual(got, []string{"user:q1", "assistant:first", "user:q2", "assistant:second"}) {
			t.Errorf("stored %q", got)
		}
	})
}

func TestARunWaitingForItsSessionCanBeCancelled(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	m := llmtest.New(blockingStep(started, release)).Verify(t)
	store := newStore()
	a := newAgent(t, m, agent.Config{Store: store})
	first := make(chan error, 1)
	go func() { _, err := a.Run(context.Background(), user("q1"), withSession("s")); first <- err }()
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := a.Run(ctx, user("q2"), withSession("s"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting run err = %v, want its context's error", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := len(store.appendCalls()); got != 1 {
		t.Errorf("%d appends, want only the first run's", got)
	}
}
