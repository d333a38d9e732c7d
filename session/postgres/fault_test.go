package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/sessiontest"
)

// withParams adds query parameters to a connection URL.
func withParams(u string, kv ...string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	for i := 0; i+1 < len(kv); i += 2 {
		u += sep + kv[i] + "=" + kv[i+1]
		sep = "&"
	}
	return u
}

// holdRowLock locks the session's row from another connection until the
// returned function is called, so an append to it stops in the middle of
// its transaction.
func holdRowLock(t *testing.T, u, id string) (release func()) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM agcore_sessions WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			tx.Rollback(context.Background())
			conn.Close(context.Background())
		})
	}
	t.Cleanup(release)
	return release
}

// waitBlocked waits until a backend of the application is waiting on a lock
// and returns its pid.
func waitBlocked(t *testing.T, app string) int {
	t.Helper()
	admin := adminPool(t)
	for range 500 {
		var pid int
		err := admin.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&pid)
		if err == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the append never waited on the row lock")
	return 0
}

func checkOnce(t *testing.T, s session.Store, id string, tags ...string) {
	t.Helper()
	got, err := s.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	if len(got.Messages)%4 != 0 || got.Turns*4 != len(got.Messages) {
		t.Fatalf("%d messages for %d turns: not whole turns", len(got.Messages), got.Turns)
	}
	for i := 0; i < len(got.Messages); i += 4 {
		tag, _, _ := strings.Cut(strings.TrimPrefix(got.Messages[i].Text(), "["), " ")
		seen[tag]++
		if i+4 > len(got.Messages) {
			t.Fatalf("turn %s cut short", tag)
		}
	}
	for _, tag := range tags {
		if seen[tag] != 1 {
			t.Errorf("turn %s stored %d times, want once", tag, seen[tag])
		}
	}
}

// The backend is terminated (pg_terminate_backend) while the append waits
// inside its transaction: without retries Append returns the server's
// error and stores nothing; a retry with the same turn stores it once.
func TestFaultTerminatedMidAppend(t *testing.T) {
	base := newSchema(t)
	app := "agcore-fault-" + fmt.Sprint(rand.Uint32())
	u := withParams(base, "application_name", app)
	s := open(t, u, postgres.WithRetries(0))
	ctx := t.Context()
	if err := s.Append(ctx, "f", session.Turn{ID: "t0", Messages: sessiontest.Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	release := holdRowLock(t, base, "f")
	done := make(chan error, 1)
	go func() {
		done <- s.Append(ctx, "f", session.Turn{ID: "t1", Messages: sessiontest.Conversation("t1", 4)})
	}()
	pid := waitBlocked(t, app)
	if _, err := adminPool(t).Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var pgErr *pgconn.PgError
	if err == nil {
		t.Fatal("Append whose backend was terminated returned nil")
	}
	if errors.As(err, &pgErr) && pgErr.Code != "57P01" {
		t.Errorf("err = %v, want admin_shutdown (57P01) or a connection error", err)
	}
	if !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("err = %v, want one that errors.Is session.ErrUnavailable", err)
	}
	t.Logf("terminated append: %v", err)
	release()
	checkOnce(t, s, "f", "t0")
	if got, _ := s.Load(ctx, "f"); got.Turns != 1 {
		t.Fatalf("a terminated append stored something: %d turns", got.Turns)
	}
	if err := s.Append(ctx, "f", session.Turn{ID: "t1", Messages: sessiontest.Conversation("t1", 4)}); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, s, "f", "t0", "t1")
}

// With retries (the default) the same fault is invisible: Append retries
// on a new connection and completes.
func TestFaultTerminatedMidAppendRetried(t *testing.T) {
	base := newSchema(t)
	app := "agcore-fault-" + fmt.Sprint(rand.Uint32())
	s := open(t, withParams(base, "application_name", app))
	ctx := t.Context()
	if err := s.Append(ctx, "f", session.Turn{ID: "t0", Messages: sessiontest.Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	release := holdRowLock(t, base, "f")
	done := make(chan error, 1)
	go func() {
		done <- s.Append(ctx, "f", session.Turn{ID: "t1", Messages: sessiontest.Conversation("t1", 4)})
	}()
	pid := waitBlocked(t, app)
	if _, err := adminPool(t).Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, app) // the retry waits on the lock again
	release()
	if err := <-done; err != nil {
		t.Fatalf("retried Append: %v", err)
	}
	checkOnce(t, s, "f", "t0", "t1")
}

// Backends terminated at random moments while appends run: every append
// either returns nil or an error; retrying the failed ones with the same
// turn ids stores every turn exactly once, whole.
func TestFaultRandomTerminations(t *testing.T) {
	base := newSchema(t)
	app := "agcore-chaos-" + fmt.Sprint(rand.Uint32())
	s := open(t, withParams(base, "application_name", app, "pool_max_conns", "4"), postgres.WithRetries(0))
	ctx := t.Context()
	stop := make(chan struct{})
	var killer sync.WaitGroup
	kills := 0
	killer.Go(func() {
		admin := adminPool(t)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rand.IntN(3000)) * time.Microsecond):
			}
			tag, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app)
			if err == nil {
				kills += int(tag.RowsAffected())
			}
		}
	})
	const writers, per = 4, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	var tags []string
	for w := range writers {
		wg.Go(func() {
			for n := range per {
				tag := fmt.Sprintf("w%d-%d", w, n)
				mu.Lock()
				tags = append(tags, tag)
				mu.Unlock()
				if err := s.Append(ctx, "chaos", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
					mu.Lock()
					failed = append(failed, tag)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	for _, tag := range failed {
		for {
			err := s.Append(ctx, "chaos", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)})
			if err == nil {
				break
			}
		}
	}
	t.Logf("%d terminations, %d appends failed and were retried", kills, len(failed))
	checkOnce(t, s, "chaos", tags...)
	if got, _ := s.Load(ctx, "chaos"); got.Turns != writers*per {
		t.Errorf("%d turns, want %d", got.Turns, writers*per)
	}
}

// A statement timeout in the middle of an append: the append fails with
// the server's error, stores nothing, and is not retried (the server
// refused it); a later retry stores it once.
func TestFaultStatementTimeout(t *testing.T) {
	base := newSchema(t)
	s := open(t, withParams(base, "statement_timeout", "200"))
	ctx := t.Context()
	if err := s.Append(ctx, "slow", session.Turn{ID: "t0", Messages: sessiontest.Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	release := holdRowLock(t, base, "slow")
	err := s.Append(ctx, "slow", session.Turn{ID: "t1", Messages: sessiontest.Conversation("t1", 4)})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("err = %v, want query_canceled (57014)", err)
	}
	release()
	checkOnce(t, s, "slow", "t0")
	if err := s.Append(ctx, "slow", session.Turn{ID: "t1", Messages: sessiontest.Conversation("t1", 4)}); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, s, "slow", "t0", "t1")
}

// A full pool under load: appends wait for a connection, within their
// context's deadline; one that cannot get one in time fails with the
// deadline and stores nothing.
func TestFaultFullPool(t *testing.T) {
	base := newSchema(t)
	s := open(t, withParams(base, "pool_max_conns", "2"))
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 32 {
		wg.Go(func() {
			for n := range 5 {
				tag := fmt.Sprintf("w%d-%d", w, n)
				if err := s.Append(ctx, fmt.Sprint("s", w%4), session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Both connections busy: a short deadline fails cleanly.
	r1 := holdRowLock(t, base, "s0")
	hold := make(chan error, 2)
	for i := range 2 {
		go func() {
			hold <- s.Append(ctx, "s0", session.Turn{ID: fmt.Sprint("held", i), Messages: sessiontest.Conversation(fmt.Sprint("held", i), 4)})
		}()
	}
	time.Sleep(200 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err := s.Append(short, "s1", session.Turn{ID: "late", Messages: sessiontest.Conversation("late", 4)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append with the pool full and a short deadline: err = %v, want DeadlineExceeded", err)
	}
	r1()
	for range 2 {
		if err := <-hold; err != nil {
			t.Error(err)
		}
	}
	checkOnce(t, s, "s0")
	checkOnce(t, s, "s1")
	if got, _ := s.Load(ctx, "s1"); got.Turns != 40 {
		t.Errorf("s1 has %d turns, want 40 (the late append stored nothing)", got.Turns)
	}
}
