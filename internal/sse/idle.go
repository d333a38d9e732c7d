package sse

import (
	"errors"
	"io"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long an IdleReader waits for a byte by default.
const DefaultIdleTimeout = 120 * time.Second

// ErrIdleTimeout is returned by an IdleReader when no byte arrived within
// its timeout.
var ErrIdleTimeout = errors.New("sse: no data received within the idle timeout")

// IdleReader wraps a response body: if a Read waits longer than the timeout
// for data, the body is closed (unblocking the Read) and Read returns
// ErrIdleTimeout from then on.
type IdleReader struct {
	rc      io.ReadCloser
	timeout time.Duration
	timer   *time.Timer
	fired   atomic.Bool
}

// NewIdleReader returns rc guarded by timeout (DefaultIdleTimeout if <= 0).
// Close the IdleReader to stop its timer and close rc.
func NewIdleReader(rc io.ReadCloser, timeout time.Duration) *IdleReader {
	if timeout <= 0 {
		timeout = DefaultIdleTimeout
	}
	ir := &IdleReader{rc: rc, timeout: timeout}
	ir.timer = time.AfterFunc(timeout, ir.expire)
	ir.timer.Stop()
	return ir
}

func (ir *IdleReader) expire() {
	ir.fired.Store(true)
	ir.rc.Close()
}

// Read reads from the body. The idle clock runs only while Read waits, so a
// slow consumer is never mistaken for a stalled server.
func (ir *IdleReader) Read(p []byte) (int, error) {
	if ir.fired.Load() {
		return 0, ErrIdleTimeout
	}
	ir.timer.Reset(ir.timeout)
	n, err := ir.rc.Read(p)
	ir.timer.Stop()
	if err != nil && ir.fired.Load() {
		return n, ErrIdleTimeout
	}
	return n, err
}

// Close stops the timer and closes the body.
func (ir *IdleReader) Close() error {
	ir.timer.Stop()
	return ir.rc.Close()
}
