package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/sessiontest"
)

// roundTrips counts what a pool sends the server: statements (each one
// round trip), batches and prepares.
type roundTrips struct{ queries, batches, prepares atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.queries.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.batches.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.prepares.Add(1)
	return ctx
}
func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func (r *roundTrips) reset() { r.queries.Store(0); r.batches.Store(0); r.prepares.Store(0) }

// An append is one statement: one round trip, one commit, once the
// connection has prepared it.
func TestAppendOneRoundTrip(t *testing.T) {
	u := newSchema(t)
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	var rt roundTrips
	cfg.ConnConfig.Tracer = &rt
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := postgres.New(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	turn := func(tag string) session.Turn {
		return session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 10)}
	}
	// Prepare the statements: a new session's, then a known one's.
	for _, tag := range []string{"w1", "w2"} {
		if err := s.Append(ctx, "warm", turn(tag)); err != nil {
			t.Fatal(err)
		}
	}
	rt.reset()
	const n = 5
	for i := range n {
		if err := s.Append(ctx, "known", turn(fmt.Sprint("t", i))); err != nil {
			t.Fatal(err)
		}
	}
	// Another store (another process) appended meanwhile: still one.
	if err := open(t, u).Append(ctx, "known", turn("other")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "known", turn("after")); err != nil {
		t.Fatal(err)
	}
	if q, b, p := rt.queries.Load(), rt.batches.Load(), rt.prepares.Load(); q != n+1 || b != 0 || p != 0 {
		t.Fatalf("%d appends sent %d statements, %d batches, %d prepares; want %d, 0, 0", n+1, q, b, p, n+1)
	}
	if got, err := s.Load(ctx, "known"); err != nil || got.Turns != n+2 {
		t.Fatalf("Load: %v, %+v", err, got)
	}
}
