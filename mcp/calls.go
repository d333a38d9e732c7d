package mcp

import (
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
	tool    string
	timeout time.Duration
	timer   *time.Timer // fires when the server has been silent for timeout
}

// start registers a call whose server must answer (or report progress)
// within timeout, else silent runs. done unregisters it and stops the
// clock.
func (t *callTable) start(tool string, timeout time.Duration, silent func()) (token string, done func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == nil {
		t.calls = map[string]*pendingCall{}
	}
	t.next++
	token = fmt.Sprintf("agcore-%d", t.next)
	pc := &pendingCall{tool: tool, timeout: timeout, timer: time.AfterFunc(timeout, silent)}
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
