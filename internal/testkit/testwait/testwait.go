// Package testwait bounds the waits of tests: a wait that does not end in
// time fails the test at once, saying what it waited for and what was
// still running, instead of hanging until go test's 10-minute timeout
// buries the cause in a dump of every goroutine.
//
// It is imported by tests only.
package testwait

import (
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// Timeout is how long Recv and For wait, and how long Close lets a
// server's requests end before it closes their connections.
const Timeout = 10 * time.Second

// Recv receives from ch, failing the test (t.Fatalf) when nothing comes
// within Timeout. what names the awaited value in the failure.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %s for %s; running:\n%s", Timeout, what, stacks())
		var zero T
		return zero
	}
}

// For polls cond until it holds, failing the test (t.Fatalf) when it does
// not within Timeout.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(Timeout); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; running:\n%s", Timeout, what, stacks())
		}
	}
}

// Close closes srv in bounded time. httptest.Server.Close waits for every
// request in progress: when one is still running after Timeout/2, Close
// fails the test naming what runs, closes the client connections (which
// cancels the requests' contexts and fails their writes) and waits
// Timeout/2 more; a handler still running then is left behind.
func Close(t testing.TB, srv *httptest.Server) {
	t.Helper()
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	timer := time.NewTimer(Timeout / 2)
	defer timer.Stop()
	select {
	case <-closed:
		return
	case <-timer.C:
	}
	t.Errorf("a request to the test server was still running %s after the test; running:\n%s", Timeout/2, stacks())
	srv.CloseClientConnections()
	timer.Reset(Timeout / 2)
	select {
	case <-closed:
	case <-timer.C:
		t.Errorf("the request still ran after its connection was closed; left behind")
	}
}

// CloseOnCleanup has srv closed by Close when the test ends, and returns
// it.
func CloseOnCleanup(t testing.TB, srv *httptest.Server) *httptest.Server {
	t.Helper()
	t.Cleanup(func() { Close(t, srv) })
	return srv
}

// stacks returns the running goroutines' stacks, at most 64 KiB.
func stacks() string {
	buf := make([]byte, 64<<10)
	return string(buf[:runtime.Stack(buf, true)])
}
