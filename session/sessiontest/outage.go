package sessiontest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/session"
)

// Outage proves a store over a network survives its server going away
// and coming back. It appends a first turn to session id, then runs two
// writers appending 4-message turns and a reader loading the session while
// outage takes the server down and brings it back (outage returns once the
// server is up again), and goes on until the same Store has appended 10
// turns after it. It checks that:
//
//   - every call that failed returned an error that errors.Is
//     session.ErrUnavailable, and some did (the outage was seen);
//   - the Store reconnected by itself;
//   - when durable is set, every acknowledged turn is still stored (the
//     server keeps what it acknowledged across a crash);
//   - retrying the failed appends with their turn ids stores every turn
//     exactly once, whole.
//
// It returns how many appends ran and failed, for the test's log.
func Outage(t *testing.T, s session.Store, id string, durable bool, outage func()) (appends, failedAppends, failedLoads int) {
	t.Helper()
	ctx := t.Context()
	if err := s.Append(ctx, id, session.Turn{ID: "t0", Messages: Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	var (
		mu                  sync.Mutex
		tags, failed, acked []string
		otherErrs           []error
		okAfter, loadFailed int
		over                bool
	)
	note := func(err error, what string) {
		if err != nil && !errors.Is(err, session.ErrUnavailable) {
			otherErrs = append(otherErrs, fmt.Errorf("%s: %w", what, err))
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tag := fmt.Sprintf("w%d-%d", w, n)
				err := s.Append(ctx, id, session.Turn{ID: tag, Messages: Conversation(tag, 4)})
				mu.Lock()
				tags = append(tags, tag)
				if err == nil {
					acked = append(acked, tag)
					if over {
						okAfter++
					}
				} else {
					failed = append(failed, tag)
					note(err, "append "+tag)
				}
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := s.Load(ctx, id); err != nil {
				mu.Lock()
				loadFailed++
				note(err, "load")
				mu.Unlock()
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	outage()
	mu.Lock()
	over = true
	mu.Unlock()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := okAfter
		mu.Unlock()
		if n >= 10 || time.Now().After(deadline) {
			break
		}
	}
	close(stop)
	wg.Wait()
	for _, err := range otherErrs {
		t.Errorf("an error that is not session.ErrUnavailable: %v", err)
	}
	if okAfter < 10 {
		t.Fatalf("only %d appends succeeded after the outage: the store did not reconnect", okAfter)
	}
	if len(failed) == 0 || loadFailed == 0 {
		t.Fatalf("%d appends and %d loads failed: the test did not see the outage", len(failed), loadFailed)
	}
	if durable {
		have := countTurns(t, s, id)
		for _, tag := range acked {
			if have[tag] == 0 {
				t.Errorf("acknowledged turn %s was lost in the outage", tag)
			}
		}
	}
	for _, tag := range failed {
		if err := s.Append(ctx, id, session.Turn{ID: tag, Messages: Conversation(tag, 4)}); err != nil {
			t.Fatalf("retrying %s after the outage: %v", tag, err)
		}
	}
	have := countTurns(t, s, id)
	for _, tag := range append(tags, "t0") {
		if have[tag] != 1 {
			t.Errorf("turn %s stored %d times, want once", tag, have[tag])
		}
	}
	if len(have) != len(tags)+1 {
		t.Errorf("%d distinct turns stored, want %d", len(have), len(tags)+1)
	}
	return len(tags), len(failed), loadFailed
}

// countTurns loads session id, checks it holds whole 4-message turns
// (Conversation's shape), and counts each turn's tag.
func countTurns(t *testing.T, s session.Store, id string) map[string]int {
	t.Helper()
	got, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns*4 != len(got.Messages) {
		t.Fatalf("%d messages for %d turns: not whole turns", len(got.Messages), got.Turns)
	}
	seen := make(map[string]int, got.Turns)
	for i := 0; i < len(got.Messages); i += 4 {
		tag, _, _ := strings.Cut(strings.TrimPrefix(got.Messages[i].Text(), "["), " ")
		seen[tag]++
	}
	return seen
}
