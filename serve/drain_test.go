package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session/memstore"
)

// endless streams text deltas of size bytes until its context ends (or,
// when limit is positive, until it sent limit deltas: then it waits for
// the end), counting them in sent.
func endless(size, limit int, sent *atomic.Int64) *model {
	delta := strings.Repeat("x", size)
	return &model{fn: func(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			if !yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{}}, nil) ||
				!yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) {
				return
			}
			for n := 0; ctx.Err() == nil; n++ {
				if limit > 0 && n == limit {
					<-ctx.Done()
					break
				}
				if !yield(llm.Event{Type: llm.EventTextDelta, Delta: delta}, nil) {
					return
				}
				if sent != nil {
					sent.Add(1)
				}
				if size < 1024 {
					time.Sleep(time.Millisecond) // a model's pace, not a busy loop
				}
			}
			yield(llm.Event{}, llm.Cancelled("fake", ctx.Err()))
		}
	}}
}

// drainServer is a server whose one agent, "endless", streams forever,
// with the web page mounted, served by an http.Server as a program runs it.
func drainServer(t *testing.T, m *model, grace time.Duration) (*serve.Handler, *httptest.Server) {
	t.Helper()
	broker := &approval.Broker{}
	store := memstore.New()
	a, err := agent.New(m, agent.Config{Name: "endless", Store: store, Approver: broker, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "endless", Agent: a, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	page, err := web.New(set, broker, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := a2aserve.New(set, broker, a2aserve.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.New(serve.Options{Agents: set, Broker: broker, Web: page, A2A: a2a, DrainGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	return h, testwait.CloseOnCleanup(t, httptest.NewServer(h))
}

// streamRequests are a streamed turn of each API, and how each says that
// the server cancelled it.
var streamRequests = []struct {
	name, path, body string
	// last checks the stream's last event (its "event:" name and data).
	last func(name, data string) error
}{
	{"chat", "/v1/chat/completions", `{"model":"endless","stream":true,"messages":[{"role":"user","content":"go"}]}`,
		func(_, data string) error {
			var v struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal([]byte(data), &v) != nil || v.Error.Code != "shutting_down" {
				return fmt.Errorf("the last event is not the shutting_down error chunk: %.200s", data)
			}
			return nil
		}},
	{"responses", "/v1/responses", `{"model":"endless","stream":true,"input":"go"}`,
		func(name, data string) error {
			var v struct {
				Type     string
				Response struct {
					Status string
					Error  struct{ Code string }
				}
			}
			if name != "response.failed" || json.Unmarshal([]byte(data), &v) != nil || v.Type != "response.failed" ||
				v.Response.Status != "failed" || v.Response.Error.Code != "shutting_down" {
				return fmt.Errorf("the last event is not response.failed with shutting_down: %s %.200s", name, data)
			}
			return nil
		}},
	{"a2a", "/a2a/endless", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"go"}]}}}`,
		func(_, data string) error {
			var v struct {
				Result struct {
					Kind   string
					Final  bool
					Status struct{ State string }
				}
			}
			if json.Unmarshal([]byte(data), &v) != nil || v.Result.Kind != "status-update" || !v.Result.Final || v.Result.Status.State != "failed" {
				return fmt.Errorf("the last event is not the final failed status: %.300s", data)
			}
			return nil
		}},
	{"web", "/api/chat", `{"agent":"endless","message":"go"}`,
		func(name, data string) error {
			if name != "error" || !strings.Contains(data, `"type":"error"`) {
				return fmt.Errorf("the last event is not the error event: %s %.200s", name, data)
			}
			return nil
		}},
}

// startStream sends req's turn and returns its response once the first
// text has arrived, with a reader of its events.
func startStream(t *testing.T, srv *httptest.Server, path, body string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.CSRFHeader, "1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return resp, bufio.NewReader(resp.Body)
}

// lastEvent reads an event stream to its end and returns its last event,
// or the error that ended it (io.ErrUnexpectedEOF: a body cut short).
func lastEvent(r *bufio.Reader) (name, data string, err error) {
	var cur string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return name, data, nil
		}
		if err != nil {
			return name, data, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			cur = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			name, data, cur = cur, strings.TrimPrefix(line, "data: "), ""
		}
	}
}

// TestDrainEndsStreams: a turn the drain cancels still ends its stream
// properly, every time: the API's failure event, then the end of the body
// (no event lost, no chunked terminator missing). The server is stopped
// as agcore serve stops it (Handler.Shutdown with a context already over).
func TestDrainEndsStreams(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 10
	}
	for _, api := range streamRequests {
		t.Run(api.name, func(t *testing.T) {
			var failed atomic.Bool // one broken stream says it all: the rest skip
			for i := range runs {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					if failed.Load() {
						t.Skip("an earlier run failed")
					}
					t.Cleanup(func() {
						if t.Failed() {
							failed.Store(true)
						}
					})
					h, srv := drainServer(t, endless(8, 0, nil), 0)
					resp, r := startStream(t, srv, api.path, api.body)
					defer resp.Body.Close()
					// The turn streams; the reader keeps reading.
					if _, err := r.ReadString('\n'); err != nil {
						t.Fatal(err)
					}
					type end struct {
						name, data string
						err        error
					}
					ended := make(chan end, 1)
					go func() {
						n, d, err := lastEvent(r)
						ended <- end{n, d, err}
					}()
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					if err := h.Shutdown(ctx, srv.Config); !errors.Is(err, context.Canceled) {
						t.Errorf("Shutdown = %v, want the context's error", err)
					}
					got := testwait.Recv(t, ended, "the end of the stream")
					if got.err != nil {
						t.Fatalf("the stream ended with %v (its last event: %s %.100s)", got.err, got.name, got.data)
					}
					if err := api.last(got.name, got.data); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

// TestShutdownWithAClientThatStopsReading: a client that stops reading a
// long streamed answer (its socket buffers full, the handler blocked
// writing) cannot keep Shutdown from returning.
func TestShutdownWithAClientThatStopsReading(t *testing.T) {
	for _, api := range streamRequests {
		t.Run(api.name, func(t *testing.T) {
			// 256 deltas of 32 KiB: more than every buffer on the way holds
			// (the web and A2A handlers queue what their writers cannot
			// send), with a client whose socket takes 4 KiB.
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
			defer resp.Body.Close()
			// Wait until the model's deltas stop: the handler is blocked on
			// a write the client does not read (or the model is done).
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
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			stopped := make(chan error, 1)
			go func() { stopped <- h.Shutdown(ctx, srv.Config) }()
			if err := testwait.Recv(t, stopped, "Shutdown to return"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Shutdown = %v", err)
			}
		})
	}
}
