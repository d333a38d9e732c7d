package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// decided is what a waiting Approve returned.
type decided struct {
	tool.Decision
	err error
}

// TestApprovalsAcrossBrokers: two brokers over one store's records, as
// two server processes: a call waiting in one is listed and decided
// through the other, once, with the decision's content (a form's answer).
func TestApprovalsAcrossBrokers(t *testing.T) {
	st := memstore.New()
	a := &approval.Broker{Shared: host.Approvals(st), Poll: 5 * time.Millisecond}
	b := &approval.Broker{Shared: host.Approvals(st), Poll: 5 * time.Millisecond}
	ctx := approval.WithOwner(t.Context(), approval.Owner{Agent: "agcore", Session: "s", Run: "run1", Principal: "alice"})
	// The waiting call reports through got, never through t: a test that
	// stopped early must not be failed from this goroutine after it ended
	// (which panics and stops the package's other tests).
	got := make(chan decided, 1)
	go func() {
		d, err := a.Approve(ctx, tool.Call{ID: "c1", Name: "write_file", Input: json.RawMessage(`{"path":"x"}`)})
		got <- decided{d, err}
	}()
	var pending []approval.Request
	for deadline := time.Now().Add(5 * time.Second); len(pending) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the call never showed in the other broker")
		}
		pending = b.Pending(nil)
		time.Sleep(time.Millisecond)
	}
	if len(pending) != 1 || pending[0].ID != "run1/c1" || pending[0].Owner.Principal != "alice" || pending[0].Tool != "write_file" {
		t.Fatalf("pending = %+v", pending)
	}
	if q, ok := b.Get("run1/c1"); !ok || q.CallID != "c1" {
		t.Fatalf("Get = %+v, %v", q, ok)
	}
	if err := b.Decide("run1/c1", tool.Decision{Approved: true, Content: `{"name":"Ada"}`}); err != nil {
		t.Fatal(err)
	}
	if err := b.Decide("run1/c1", tool.Decision{Reason: "again"}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("a second decision: %v, want ErrUnknown", err)
	}
	if err := a.Decide("run1/c1", tool.Decision{Reason: "again"}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("a second decision in the waiting process: %v, want ErrUnknown", err)
	}
	select {
	case d := <-got:
		if d.err != nil || !d.Approved || d.Content != `{"name":"Ada"}` {
			t.Fatalf("decision = %+v, %v", d.Decision, d.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting broker never picked the decision up")
	}
	if p := b.Pending(nil); len(p) != 0 {
		t.Fatalf("still pending after the decision: %+v", p)
	}
}

// TestApprovalOfADeadProcessExpires: a record nobody renews (its process
// died) stops being listed and cannot be decided.
func TestApprovalOfADeadProcessExpires(t *testing.T) {
	st := memstore.New()
	shared := host.Approvals(st)
	q := approval.Request{ID: "run2/c1", CallID: "c1", Tool: "write_file", Since: time.Now(), Owner: approval.Owner{Run: "run2"}}
	if err := shared.Put(context.Background(), q, time.Now().Add(50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b := &approval.Broker{Shared: shared}
	if p := b.Pending(nil); len(p) != 1 {
		t.Fatalf("pending = %+v", p)
	}
	time.Sleep(100 * time.Millisecond)
	if p := b.Pending(nil); len(p) != 0 {
		t.Fatalf("an expired call is listed: %+v", p)
	}
	if err := b.Decide("run2/c1", tool.Decision{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("deciding an expired call: %v, want ErrUnknown", err)
	}
}

// gatedShared holds Put until release is closed, telling entered first.
type gatedShared struct {
	approval.Shared
	entered chan struct{}
	release chan struct{}
}

func (g gatedShared) Put(ctx context.Context, q approval.Request, expires time.Time) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Shared.Put(ctx, q, expires)
}

// TestPendingListsOnlyWhatOthersCanDecide: while a call's shared record
// is being written, the waiting process does not list it either: a
// client that saw it listed here could send its decision to another
// process, which would not find the call (the flake once seen in the
// CLI's TestServeReplicas/postgres: "approve" sent to replica B came back
// input-required).
func TestPendingListsOnlyWhatOthersCanDecide(t *testing.T) {
	st := memstore.New()
	g := gatedShared{Shared: host.Approvals(st), entered: make(chan struct{}, 1), release: make(chan struct{})}
	a := &approval.Broker{Shared: g, Poll: 5 * time.Millisecond}
	b := &approval.Broker{Shared: host.Approvals(st), Poll: 5 * time.Millisecond}
	notified := make(chan struct{})
	ctx := approval.WithOwner(t.Context(), approval.Owner{Agent: "agcore", Run: "run3", Principal: "alice"})
	ctx = approval.WithNotify(ctx, func(approval.Request) { close(notified) })
	// The waiting call reports through got, never through t: a test that
	// stopped early must not be failed from this goroutine after it ended
	// (which panics and stops the package's other tests).
	got := make(chan decided, 1)
	go func() {
		d, err := a.Approve(ctx, tool.Call{ID: "c1", Name: "write_file"})
		got <- decided{d, err}
	}()
	<-g.entered
	if p := a.Pending(nil); len(p) != 0 {
		t.Fatalf("listed before its shared record exists: %+v", p)
	}
	close(g.release)
	<-notified
	if p := a.Pending(nil); len(p) != 1 {
		t.Fatalf("waiting process lists %+v after the record, want the call", p)
	}
	p := b.Pending(nil)
	if len(p) != 1 {
		t.Fatalf("other process lists %+v, want the call", p)
	}
	if err := b.Decide(p[0].ID, tool.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if d.err != nil || !d.Approved {
			t.Fatalf("decision = %+v, %v", d.Decision, d.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the decision never reached the waiting process")
	}
}
