package serve_test

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
)

// TestDrainAloneCutsAClientThatStopsReading: Drain used on its own (no
// http.Server.Shutdown after it to close the connections) still ends a
// turn whose client stopped reading: the handler, blocked writing to it,
// gets its write deadline Options.DrainGrace after the cancellation, so
// the turn ends and a later Drain finds nothing running.
func TestDrainAloneCutsAClientThatStopsReading(t *testing.T) {
	for _, api := range streamRequests {
		t.Run(api.name, func(t *testing.T) {
			var sent atomic.Int64
			h, srv := drainServer(t, endless(32<<10, 256, &sent), 100*time.Millisecond)
			srv.Client().Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err == nil {
					err = c.(*net.TCPConn).SetReadBuffer(4 << 10)
				}
				return c, err
			}
			resp, _ := startStream(t, srv, api.path, api.body)
			defer resp.Body.Close() // never read: the client stopped reading
			last, still := int64(-1), 0
			testwait.For(t, "the handler to block writing", func() bool {
				time.Sleep(50 * time.Millisecond)
				n := sent.Load()
				if n == last {
					still++
				} else {
					last, still = n, 0
				}
				return still >= 4 && n > 0
			})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := h.Drain(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Drain = %v, want the context's error", err)
			}
			// The connection is still open (nothing closed it), yet the
			// turn must have ended: its writes failed at the deadline.
			wait, stop := context.WithTimeout(context.Background(), 20*time.Second) // generous: an A2A turn first works through its queued events (4 s under -race)
			defer stop()
			if err := h.Drain(wait); err != nil {
				t.Fatalf("the turn still runs after Drain's grace, its handler blocked writing to a client that does not read (Drain again = %v)", err)
			}
		})
	}
}

// TestDrainGivesUpOnATurnThatIgnoresCancellation: a drained turn whose
// model ignores the cancellation (a tool or a provider call that does not
// watch its context) cannot hold Drain: it returns once the grace has
// passed after the cancellation.
func TestDrainGivesUpOnATurnThatIgnoresCancellation(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	stubborn := &model{fn: func(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			if !yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{}}, nil) ||
				!yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) ||
				!yield(llm.Event{Type: llm.EventTextDelta, Delta: "working"}, nil) {
				return
			}
			started <- struct{}{}
			<-release // ctx is not watched
			yield(llm.Event{}, llm.Cancelled("fake", context.Canceled))
		}
	}}
	const grace = 200 * time.Millisecond
	h, srv := drainServer(t, stubborn, grace)
	t.Cleanup(func() { close(release) }) // the turn ends with the test, before its server closes
	api := streamRequests[0]
	resp, r := startStream(t, srv, api.path, api.body)
	defer resp.Body.Close()
	go func() { lastEvent(r) }() // the client reads
	testwait.Recv(t, started, "the turn to start")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	drained := make(chan error, 1)
	go func() { drained <- h.Drain(ctx) }()
	select {
	case err := <-drained:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Drain = %v, want the context's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Drain still waits %s after the cancellation, for a turn that ignores it (grace %s)", time.Since(start).Round(time.Millisecond), grace)
	}
	if took := time.Since(start); took < grace {
		t.Errorf("Drain returned after %s, before the grace of %s", took, grace)
	}
}
