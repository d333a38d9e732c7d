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

	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// ErrUnknown is returned by [Broker.Decide] for an id that is not waiting:
// never seen, already decided, or given up because its run ended.
var ErrUnknown = errors.New("approval: no pending call with this id")

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

	mu      sync.Mutex
	pending map[string]*entry
	seq     uint64
}

type entry struct {
	req      Request
	decision chan middleware.Decision // buffered, one send
}

// Approve implements middleware.Approver: it files the call under the
// context's owner and waits for Decide, the context's end (the error is
// the context's) or the timeout (a denial saying so).
func (b *Broker) Approve(ctx context.Context, call tool.Call) (middleware.Decision, error) {
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
		decision: make(chan middleware.Decision, 1),
	}
	if err := b.file(e); err != nil {
		return middleware.Decision{}, err
	}
	defer b.remove(e.req.ID, e)
	if f, ok := ctx.Value(notifyKey{}).(func(Request)); ok && f != nil {
		f(e.req)
	}
	var timeout <-chan time.Time
	if b.Timeout > 0 {
		t := time.NewTimer(b.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case d := <-e.decision:
		return d, nil
	case <-ctx.Done():
		return middleware.Decision{}, ctx.Err()
	case <-timeout:
		return middleware.Decision{Reason: fmt.Sprintf("nobody approved it within %s", b.Timeout)}, nil
	}
}

func (b *Broker) file(e *entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = make(map[string]*entry)
	}
	b.seq++
	if e.req.Owner.Run != "" {
		e.req.ID = e.req.Owner.Run + "/" + e.req.CallID
	} else {
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
// ErrUnknown too: the first one won).
func (b *Broker) Decide(id string, d middleware.Decision) error {
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

// Get returns the waiting request id.
func (b *Broker) Get(id string) (Request, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.pending[id]
	if !ok {
		return Request{}, false
	}
	return e.req, true
}

// Pending returns the waiting requests that match (all when match is
// nil), oldest first, ties by id.
func (b *Broker) Pending(match func(Request) bool) []Request {
	b.mu.Lock()
	out := make([]Request, 0, len(b.pending))
	for _, e := range b.pending {
		if match == nil || match(e.req) {
			out = append(out, e.req)
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y Request) int {
		if c := x.Since.Compare(y.Since); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

var _ middleware.Approver = (*Broker)(nil)
