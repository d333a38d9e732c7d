package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

func testCancelled(t *testing.T, s session.Store) {
	mustAppend(t, s, "ctx", turn("t0", 0, llm.UserText("kept")))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Append(ctx, "ctx", turn("t1", 1, llm.UserText("dropped"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context: err = %v, want context.Canceled", err)
	}
	if err := s.Append(ctx, "ctx-new", turn("t1", 1, llm.UserText("dropped"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Append to a new session with a cancelled context: err = %v, want context.Canceled", err)
	}
	if got := mustLoad(t, s, "ctx"); len(got.Messages) != 1 || got.Turns != 1 {
		t.Errorf("a cancelled Append stored something: %+v", got.Messages)
	}
	if _, err := s.Load(t.Context(), "ctx-new"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a cancelled Append created its session: %v", err)
	}
}

func testConcurrent(t *testing.T, s session.Store) {
	const writers, perWriter, msgsPerTurn = 12, 8, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				tag := fmt.Sprintf("w%d-%d", w, i)
				err := s.Append(t.Context(), "busy", session.Turn{
					ID: tag, Time: at(i), Messages: Conversation(tag, msgsPerTurn),
					Usage: llm.Usage{InputTokens: 1}, CostUSD: 0.125,
					State: map[string]json.RawMessage{fmt.Sprintf("w%d", w): json.RawMessage(fmt.Sprint(i))},
				})
				if err != nil {
					errs <- fmt.Errorf("append %s: %w", tag, err)
				}
			}
		})
	}
	// Readers run alongside and must never see half a turn.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				sess, err := s.Load(t.Context(), "busy")
				if errors.Is(err, session.ErrNotFound) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("concurrent Load: %w", err)
					return
				}
				if len(sess.Messages) != sess.Turns*msgsPerTurn {
					errs <- fmt.Errorf("concurrent Load saw %d messages for %d turns", len(sess.Messages), sess.Turns)
					return
				}
				if _, err := s.List(t.Context(), session.ListOptions{Limit: 5}); err != nil {
					errs <- fmt.Errorf("concurrent List: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := mustLoad(t, s, "busy")
	total := writers * perWriter
	if got.Turns != total || len(got.Messages) != total*msgsPerTurn {
		t.Fatalf("after %d concurrent appends: %d turns, %d messages; want %d, %d",
			total, got.Turns, len(got.Messages), total, total*msgsPerTurn)
	}
	if got.Usage.InputTokens != total || got.CostUSD != float64(total)*0.125 || len(got.State) != writers {
		t.Errorf("totals lost updates: usage %d, cost %v, %d state keys", got.Usage.InputTokens, got.CostUSD, len(got.State))
	}
	// Each turn's messages are contiguous and in order, and each writer's
	// turns are in its own order.
	next := make([]int, writers)
	for i := 0; i < len(got.Messages); i += msgsPerTurn {
		var w, n int
		if _, err := fmt.Sscanf(got.Messages[i].Text(), "[w%d-%d ", &w, &n); err != nil {
			t.Fatalf("message %d: %q: %v", i, got.Messages[i].Text(), err)
		}
		tag := fmt.Sprintf("w%d-%d", w, n)
		equalMessages(t, "turn "+tag, got.Messages[i:i+msgsPerTurn], Conversation(tag, msgsPerTurn))
		if n != next[w] {
			t.Fatalf("writer %d: turn %d stored where %d was expected", w, n, next[w])
		}
		next[w]++
	}
}

func testConcurrentDuplicates(t *testing.T, s session.Store) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if err := s.Append(t.Context(), "dups", session.Turn{ID: "same", Time: at(1),
				Messages: Conversation("x", 4), Usage: llm.Usage{InputTokens: 7}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Append of one turn: %v", err)
	}
	got := mustLoad(t, s, "dups")
	if got.Turns != 1 || len(got.Messages) != 4 || got.Usage.InputTokens != 7 {
		t.Errorf("16 concurrent appends of one turn stored %d turns, %d messages, usage %d; want 1, 4, 7",
			got.Turns, len(got.Messages), got.Usage.InputTokens)
	}
}
