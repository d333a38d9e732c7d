package approval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agcore/agcore/tool"
)

// ErrUnknown is returned by [Broker.Decide] for an id that is not waiting:
// never seen, already decided, or given up because its run ended. It
// wraps [tool.ErrNotPending].
var ErrUnknown = fmt.Errorf("approval: %w", tool.ErrNotPending)

// Owner says whose turn a call belongs to. A host sets it on the run's
// context with [WithOwner]; the broker copies it into each [Request].
type Owner struct {
	Agent   string // the agent's name
	Session string // the session the turn continues, if any
	Run     string // the run (or task) the call belongs to
	// Principal is who started the turn (a token's name, a user id); a host
	// may let only the same principal decide.
	Principal string
}

// Request is one call waiting for a decision.
type Request struct {
	// ID names the request in Decide: the run and the call id
	// ("RUN/CALL") when the owner has a run, else a broker-unique id.
	ID     string
	CallID string          // the tool call's id, as the model wrote it
	Tool   string          // the tool's name
	Input  json.RawMessage // the call's arguments
	Owner  Owner
	Since  time.Time // when the call started waiting
}

type ownerKey struct{}
type notifyKey struct{}

// WithOwner returns ctx labelled with o: calls made by a run with this
// context are filed under o.
func WithOwner(ctx context.Context, o Owner) context.Context {
	return context.WithValue(ctx, ownerKey{}, o)
}

// OwnerFrom returns the owner set by [WithOwner], if any.
func OwnerFrom(ctx context.Context) (Owner, bool) {
	o, ok := ctx.Value(ownerKey{}).(Owner)
	return o, ok
}

// WithNotify returns ctx with f, which the broker calls (on the calling
// goroutine, before it starts waiting) each time a call of a run with this
// context starts waiting for a decision. f must not block.
func WithNotify(ctx context.Context, f func(Request)) context.Context {
	return context.WithValue(ctx, notifyKey{}, f)
}

// Broker holds the calls waiting for a decision. The zero value is ready to
// use and waits without limit; it is safe for concurrent use.
type Broker struct {
	// Timeout, when positive, denies a call nobody decided within it.
	Timeout time.Duration
	// Now stamps Request.Since; nil means time.Now.
	Now func() time.Time
	// Shared, when set, keeps the waiting calls and their decisions where
	// the other processes of a deployment see them: Pending, Get and
	// Decide then cover every process's calls, a call is decided once
	// whichever process decides it, and the process where it waits picks
	// the decision up within Poll. A call's record lives Lease past its
	// process's last renewal, so the calls of a process that died stop
	// being listed and cannot be decided.
	Shared Shared
	// Lease and Poll tune Shared; zero means DefaultLease and DefaultPoll.
	Lease, Poll time.Duration

	mu      sync.Mutex
	pending map[string]*entry
	seq     uint64
}

type entry struct {
	req      Request
	decision chan tool.Decision // buffered, one send
	// recorded is set (under Broker.mu) once the call's Shared record is
	// written: before that, Pending does not list it, since another
	// process could not see or decide it yet.
	recorded bool
}

// Approve implements tool.Approver: it files the call under the
// context's owner and waits for Decide, the context's end (the error is
// the context's) or the timeout (a denial saying so).
func (b *Broker) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	owner, _ := OwnerFrom(ctx)
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	e := &entry{
		req: Request{
			CallID: call.ID,
			Tool:   call.Name,
			Input:  append(json.RawMessage(nil), call.Input...),
			Owner:  owner,
			Since:  now(),
		},
		decision: make(chan tool.Decision, 1),
	}
	if err := b.file(e); err != nil {
		return tool.Decision{}, err
	}
	defer b.remove(e.req.ID, e)
	if b.Shared != nil {
		if err := b.Shared.Put(ctx, e.req, now().Add(b.lease())); err != nil {
			return tool.Decision{}, fmt.Errorf("approval: recording call %q: %w", e.req.ID, err)
		}
		b.mu.Lock()
		e.recorded = true
		b.mu.Unlock()
		defer func() {
			sctx, cancel := sharedCtx()
			defer cancel()
			_ = b.Shared.Remove(sctx, e.req.ID) // else it expires
		}()
	}
	if f, ok := ctx.Value(notifyKey{}).(func(Request)); ok && f != nil {
		f(e.req)
	}
	var timeout <-chan time.Time
	if b.Timeout > 0 {
		t := time.NewTimer(b.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	if b.Shared != nil {
		return b.waitShared(ctx, e, timeout)
	}
	select {
	case d := <-e.decision:
		return d, nil
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	case <-timeout:
		return tool.Decision{Reason: fmt.Sprintf("nobody approved it within %s", b.Timeout)}, nil
	}
}

func (b *Broker) file(e *entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = make(map[string]*entry)
	}
	b.seq++
	switch {
	case e.req.Owner.Run != "":
		e.req.ID = e.req.Owner.Run + "/" + e.req.CallID
	case b.Shared != nil: // unique across the processes
		e.req.ID = "approval-" + randomID() + "/" + e.req.CallID
	default:
		e.req.ID = fmt.Sprintf("approval-%d/%s", b.seq, e.req.CallID)
	}
	if _, taken := b.pending[e.req.ID]; taken {
		return fmt.Errorf("approval: call %q of run %q is already waiting", e.req.CallID, e.req.Owner.Run)
	}
	b.pending[e.req.ID] = e
	return nil
}

func (b *Broker) remove(id string, e *entry) {
	b.mu.Lock()
	if b.pending[id] == e {
		delete(b.pending, id)
	}
	b.mu.Unlock()
}

// Decide answers the waiting call id with d. It returns ErrUnknown when no
// call with this id is waiting (a second decision of the same call is
// ErrUnknown too: the first one won). With Shared, the decision is
// recorded there first, so it holds whichever process decides.
func (b *Broker) Decide(id string, d tool.Decision) error {
	ctx, cancel := sharedCtx()
	defer cancel()
	return b.DecideContext(ctx, id, d)
}

// DecideContext is Decide with a context for the Shared backend.
func (b *Broker) DecideContext(ctx context.Context, id string, d tool.Decision) error {
	if b.Shared != nil {
		err := b.Shared.Decide(ctx, id, d)
		switch {
		case errors.Is(err, ErrUnknown):
			// Decided already, or not recorded at all (its record expired
			// while its process lives): only the latter, waiting here, is
			// decided here, once.
			if _, decided, derr := b.Shared.Decision(ctx, id); derr != nil || decided {
				return fmt.Errorf("%w: %q", ErrUnknown, id)
			}
		case err != nil:
			return fmt.Errorf("approval: recording the decision of %q: %w", id, err)
		default:
			// Recorded: the waiting process, this one or another, takes
			// it. Here it is handed over at once.
			b.mu.Lock()
			e, ok := b.pending[id]
			if ok {
				delete(b.pending, id)
			}
			b.mu.Unlock()
			if ok {
				e.decision <- d
			}
			return nil
		}
	}
	b.mu.Lock()
	e, ok := b.pending[id]
	if ok {
		delete(b.pending, id)
	}
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknown, id)
	}
	e.decision <- d
	return nil
}

// Get returns the waiting request id: one of this process, or with
// Shared one of any process.
func (b *Broker) Get(id string) (Request, bool) {
	b.mu.Lock()
	e, ok := b.pending[id]
	b.mu.Unlock()
	if ok {
		return e.req, true
	}
	if b.Shared == nil {
		return Request{}, false
	}
	ctx, cancel := sharedCtx()
	defer cancel()
	req, ok, err := b.Shared.Get(ctx, id)
	if err != nil || !ok {
		return Request{}, false
	}
	return req, true
}

// Pending returns the waiting requests that match (all when match is
// nil), oldest first, ties by id: this process's and, with Shared, every
// other process's (if Shared cannot be read, this process's only). With
// Shared, a call is listed once its record is written, so each request
// Pending returns can be decided through any process.
func (b *Broker) Pending(match func(Request) bool) []Request {
	b.mu.Lock()
	out := make([]Request, 0, len(b.pending))
	seen := make(map[string]bool, len(b.pending))
	for _, e := range b.pending {
		if b.Shared != nil && !e.recorded {
			// Not yet decidable through another process: listing it now
			// would send a client there to decide what it cannot see.
			continue
		}
		seen[e.req.ID] = true
		if match == nil || match(e.req) {
			out = append(out, e.req)
		}
	}
	b.mu.Unlock()
	if b.Shared != nil {
		ctx, cancel := sharedCtx()
		all, err := b.Shared.List(ctx)
		cancel()
		if err == nil {
			for _, req := range all {
				if !seen[req.ID] && (match == nil || match(req)) {
					out = append(out, req)
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y Request) int {
		if c := x.Since.Compare(y.Since); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

var _ tool.Approver = (*Broker)(nil)
