package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/agcore/agcore/tool"
)

// Shared keeps a Broker's waiting calls and their decisions where every
// process of a deployment sees them (several servers over one store), so
// that a call waiting in one process is listed and decided through any
// other: the decision is recorded there, and the waiting process picks it
// up. package serve/host implements it over a session store's records
// (host.Approvals). Implementations are safe for concurrent use.
type Shared interface {
	// Put records req as waiting until expires, or moves an existing
	// record's expiry on, keeping a decision it holds.
	Put(ctx context.Context, req Request, expires time.Time) error
	// Get returns the request id if it waits undecided (and has not
	// expired).
	Get(ctx context.Context, id string) (Request, bool, error)
	// List returns every request waiting undecided.
	List(ctx context.Context) ([]Request, error)
	// Decide records d for the request id, once: ErrUnknown (wrapped)
	// when it does not wait undecided (never filed, expired, forgotten,
	// or decided already).
	Decide(ctx context.Context, id string, d tool.Decision) error
	// Decision returns the decision recorded for id, if there is one.
	Decision(ctx context.Context, id string) (tool.Decision, bool, error)
	// Remove forgets id.
	Remove(ctx context.Context, id string) error
}

// Defaults of a Broker with a Shared backend.
const (
	// DefaultLease is how long a waiting call's shared record lives
	// without its process renewing it: after the death of that process,
	// the call stops being listed and cannot be decided within it.
	DefaultLease = 15 * time.Second
	// DefaultPoll is how often a waiting call looks for a decision made
	// through another process.
	DefaultPoll = 250 * time.Millisecond
)

// sharedTimeout bounds a Shared operation made without a deadline of the
// caller's (Decide, Get, Pending, and the removal after a wait).
const sharedTimeout = 10 * time.Second

func (b *Broker) lease() time.Duration {
	if b.Lease > 0 {
		return b.Lease
	}
	return DefaultLease
}

func (b *Broker) poll() time.Duration {
	if b.Poll > 0 {
		return b.Poll
	}
	return DefaultPoll
}

// waitShared waits for e's decision, made here (e.decision) or through
// another process (found by polling Shared), for ctx's end or the
// timeout, renewing e's shared record meanwhile.
func (b *Broker) waitShared(ctx context.Context, e *entry, timeout <-chan time.Time) (tool.Decision, error) {
	tick := time.NewTicker(b.poll())
	defer tick.Stop()
	renewEvery := b.lease() / 3
	renewed := time.Now()
	for {
		select {
		case d := <-e.decision:
			return d, nil
		case <-ctx.Done():
			return tool.Decision{}, ctx.Err()
		case <-timeout:
			return tool.Decision{Reason: "nobody approved it within " + b.Timeout.String()}, nil
		case <-tick.C:
		}
		d, ok, err := b.Shared.Decision(ctx, e.req.ID)
		if err == nil && ok {
			b.remove(e.req.ID, e)
			return d, nil // a decision made here too is this one (Decide records first)
		}
		if time.Since(renewed) >= renewEvery {
			// A failed renewal is tried again at the next tick; the record
			// lives a whole lease.
			if err := b.Shared.Put(ctx, e.req, time.Now().Add(b.lease())); err == nil {
				renewed = time.Now()
			}
		}
	}
}

// sharedCtx returns a context for a Shared operation: ctx bounded by
// sharedTimeout.
func sharedCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), sharedTimeout)
}

// randomID returns 16 random hex digits.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
