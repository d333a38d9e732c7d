package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// callTable keeps the calls in flight by progress token, so that a
// progress notification finds its call and restarts its silence clock.
type callTable struct {
	mu    sync.Mutex
	next  uint64
	calls map[string]*pendingCall
}

// pendingCall is one call in flight.
type pendingCall struct {
	ctx     context.Context // the call's: its span gets the server's notifications as events
	tool    string
	timeout time.Duration
	timer   *time.Timer // fires when the server has been silent for timeout
}

// start registers a call whose server must answer (or report progress)
// within timeout, else silent runs. done unregisters it and stops the
// clock.
func (t *callTable) start(ctx context.Context, tool string, timeout time.Duration, silent func()) (token string, done func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == nil {
		t.calls = map[string]*pendingCall{}
	}
	t.next++
	token = fmt.Sprintf("agcore-%d", t.next)
	pc := &pendingCall{ctx: ctx, tool: tool, timeout: timeout, timer: time.AfterFunc(timeout, silent)}
	t.calls[token] = pc
	return token, func() {
		pc.timer.Stop()
		t.mu.Lock()
		delete(t.calls, token)
		t.mu.Unlock()
	}
}

// progress returns the call of a progress token, its clock restarted, or
// nil for a token of no call in flight.
func (t *callTable) progress(token any) *pendingCall {
	s, ok := token.(string)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pc := t.calls[s]
	if pc != nil {
		pc.timer.Reset(pc.timeout)
	}
	return pc
}

// inFlight returns the calls in flight.
func (t *callTable) inFlight() []*pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*pendingCall, 0, len(t.calls))
	for _, pc := range t.calls {
		out = append(out, pc)
	}
	return out
}

// only returns the one call in flight, or nil when there are none or
// several.
func (t *callTable) only() *pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) != 1 {
		return nil
	}
	for _, pc := range t.calls {
		return pc
	}
	return nil
}
