package redis_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sessiontest"
)

// roundTrips counts the commands and pipelines a client sends, each one
// round trip.
type roundTrips struct{ cmds, pipelines atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.cmds.Add(1)
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.pipelines.Add(1)
		return next(ctx, cmds)
	}
}

// An append to a session the store created, appended to or loaded last
// is one command (EVALSHA); so is the first append of a new session.
func TestAppendOneRoundTrip(t *testing.T) {
	c := client(t)
	var rt roundTrips
	c.AddHook(&rt)
	p := newPrefix(t)
	s, err := redis.New(t.Context(), c, redis.WithPrefix(p))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	turn := func(tag string) session.Turn {
		return session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 10)}
	}
	if err := s.Append(ctx, "warm", turn("w")); err != nil { // the server may not have the script yet
		t.Fatal(err)
	}
	rt.cmds.Store(0)
	rt.pipelines.Store(0)
	const n = 5
	for i := range n {
		if err := s.Append(ctx, "known", turn(fmt.Sprint("t", i))); err != nil {
			t.Fatal(err)
		}
	}
	if c, p := rt.cmds.Load(), rt.pipelines.Load(); c != n || p != 0 {
		t.Fatalf("%d appends sent %d commands and %d pipelines; want %d, 0", n, c, p, n)
	}
	// Another store appended meanwhile: one more round trip, whose reply
	// is the session's version the turn is built on again.
	if err := open(t, p).Append(ctx, "known", turn("other")); err != nil {
		t.Fatal(err)
	}
	rt.cmds.Store(0)
	if err := s.Append(ctx, "known", turn("after")); err != nil {
		t.Fatal(err)
	}
	if c := rt.cmds.Load(); c != 2 {
		t.Fatalf("an append after another store's sent %d commands, want 2", c)
	}
}
