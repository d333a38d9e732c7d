package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

func call(id string) tool.Call {
	return tool.Call{ID: id, Name: "delete_file", Input: json.RawMessage(`{"path":"a"}`)}
}

// waitPending returns the broker's pending requests once there are n.
func waitPending(t *testing.T, b *approval.Broker, n int) []approval.Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := b.Pending(nil); len(p) == n {
			return p
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("pending never reached %d: %+v", n, b.Pending(nil))
	return nil
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		decide  *tool.Decision // nil: nobody decides
		cancel  bool
		want    tool.Decision
		wantErr error
	}{
		{name: "approved", decide: &tool.Decision{Approved: true}, want: tool.Decision{Approved: true}},
		{name: "denied", decide: &tool.Decision{Reason: "no"}, want: tool.Decision{Reason: "no"}},
		{name: "timed out", timeout: 20 * time.Millisecond, want: tool.Decision{Reason: "nobody approved it within 20ms"}},
		{name: "cancelled", cancel: true, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &approval.Broker{Timeout: tt.timeout}
			ctx, cancel := context.WithCancel(approval.WithOwner(context.Background(), approval.Owner{Agent: "a", Session: "s", Run: "r1"}))
			defer cancel()
			type result struct {
				d   tool.Decision
				err error
			}
			done := make(chan result, 1)
			go func() {
				d, err := b.Approve(ctx, call("c1"))
				done <- result{d, err}
			}()
			if tt.timeout == 0 {
				p := waitPending(t, b, 1)
				if p[0].ID != "r1/c1" || p[0].Owner.Session != "s" || p[0].Tool != "delete_file" || string(p[0].Input) != `{"path":"a"}` {
					t.Fatalf("pending = %+v", p[0])
				}
				if tt.decide != nil {
					if err := b.Decide("r1/c1", *tt.decide); err != nil {
						t.Fatal(err)
					}
				}
				if tt.cancel {
					cancel()
				}
			}
			r := <-done
			if !errors.Is(r.err, tt.wantErr) || r.d != tt.want {
				t.Fatalf("got %+v, %v; want %+v, %v", r.d, r.err, tt.want, tt.wantErr)
			}
			if p := b.Pending(nil); len(p) != 0 {
				t.Fatalf("still pending after the end: %+v", p)
			}
			if err := b.Decide("r1/c1", tool.Decision{Approved: true}); !errors.Is(err, approval.ErrUnknown) {
				t.Fatalf("a decision after the end = %v, want ErrUnknown", err)
			}
		})
	}
}

func TestDecideUnknownAndTwice(t *testing.T) {
	var b approval.Broker // the zero value works
	if err := b.Decide("nope", tool.Decision{}); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("Decide(unknown) = %v", err)
	}
	ctx := approval.WithOwner(context.Background(), approval.Owner{Run: "r"})
	done := make(chan tool.Decision, 1)
	go func() { d, _ := b.Approve(ctx, call("c")); done <- d }()
	waitPending(t, &b, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, ok := range []bool{true, false} {
		wg.Go(func() { errs <- b.Decide("r/c", tool.Decision{Approved: ok}) })
	}
	wg.Wait()
	close(errs)
	var won, lost int
	for err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, approval.ErrUnknown):
			lost++
		default:
			t.Fatal(err)
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("won %d, lost %d; want one of each", won, lost)
	}
	<-done
}

func TestNotifyAndFilter(t *testing.T) {
	var b approval.Broker
	var mu sync.Mutex
	var seen []string
	notify := func(r approval.Request) { mu.Lock(); seen = append(seen, r.ID); mu.Unlock() }
	ctxA := approval.WithNotify(approval.WithOwner(context.Background(), approval.Owner{Session: "A", Run: "ra"}), notify)
	ctxB := approval.WithOwner(context.Background(), approval.Owner{Session: "B", Run: "rb"})
	var wg sync.WaitGroup
	wg.Go(func() { b.Approve(ctxA, call("1")) })
	wg.Go(func() { b.Approve(ctxB, call("1")) })
	waitPending(t, &b, 2)
	onlyA := b.Pending(func(r approval.Request) bool { return r.Owner.Session == "A" })
	if len(onlyA) != 1 || onlyA[0].ID != "ra/1" {
		t.Fatalf("filtered = %+v", onlyA)
	}
	if r, ok := b.Get("rb/1"); !ok || r.Owner.Session != "B" {
		t.Fatalf("Get = %+v, %v", r, ok)
	}
	b.Decide("ra/1", tool.Decision{Approved: true})
	b.Decide("rb/1", tool.Decision{Approved: true})
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "ra/1" {
		t.Fatalf("notified %v, want only ra/1", seen)
	}
}

func TestSameCallTwiceIsRefused(t *testing.T) {
	var b approval.Broker
	ctx, cancel := context.WithCancel(approval.WithOwner(context.Background(), approval.Owner{Run: "r"}))
	defer cancel()
	go b.Approve(ctx, call("c"))
	waitPending(t, &b, 1)
	if _, err := b.Approve(ctx, call("c")); err == nil || !strings.Contains(err.Error(), "already waiting") {
		t.Fatalf("second Approve of one call = %v", err)
	}
}

// TestThroughAnAgent parks a real agent's tool call, decides it from
// another goroutine, and checks what the model was told.
func TestThroughAnAgent(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			var ran bool
			del := tool.MustFunc("delete_file", "Delete a file.", func(_ context.Context, in struct {
				Path string `json:"path"`
			}) (string, error) {
				ran = true
				return "deleted " + in.Path, nil
			}, tool.WithApproval())
			model := llmtest.New(
				llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`)),
				llmtest.Text("done"),
			).Verify(t)
			b := &approval.Broker{}
			a, err := agent.New(model, agent.Config{Tools: []tool.Tool{del}, Approver: b})
			if err != nil {
				t.Fatal(err)
			}
			parked := make(chan approval.Request, 1)
			ctx := approval.WithNotify(approval.WithOwner(context.Background(), approval.Owner{Run: "turn-1"}),
				func(r approval.Request) { parked <- r })
			go func() {
				r := <-parked
				b.Decide(r.ID, tool.Decision{Approved: approve, Reason: "the reviewer said no"})
			}()
			resp, err := a.Run(ctx, []llm.Message{llm.UserText("delete x")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ran != approve {
				t.Fatalf("tool ran = %v, want %v", ran, approve)
			}
			second := model.Requests()[1]
			last := second.Messages[len(second.Messages)-1]
			res, _ := json.Marshal(last)
			if approve != strings.Contains(string(res), "deleted x") || !approve && !strings.Contains(string(res), "the reviewer said no") {
				t.Fatalf("the model was told %s", res)
			}
			if resp.Text() != "done" {
				t.Fatalf("answer = %q", resp.Text())
			}
		})
	}
}
