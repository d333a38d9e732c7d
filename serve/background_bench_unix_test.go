//go:build unix

package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session/memstore"
)

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Skip("no CPU time here:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// respTurn runs one streamed Responses turn (background or not) and
// reads it to its last event.
func respTurn(client *http.Client, url string, background bool) error {
	body := `{"model":"bench","stream":true,"input":"hello"}`
	if background {
		body = `{"model":"bench","stream":true,"background":true,"input":"hello"}`
	}
	resp, err := client.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(data, []byte("event: response.completed")) {
		return fmt.Errorf("status %d: %.300s", resp.StatusCode, data)
	}
	return nil
}

// BenchmarkBackgroundStreamCPU compares the process CPU time of a
// streamed Responses turn run in the background (its events through the
// event log, batched into the store) with the same turn in the
// foreground, alternating blocks of each over one server and one memory
// store; the foreground turn is the floor. It reports both, their ratio (the target
// is at most 1.10), and the event log's records written per background
// turn (one per 50 ms plus the final one: a turn this short writes one),
// for an answer of 10 deltas (the fixed cost of a background turn
// weighs most) and of 200 (a typical answer's chunks).
func BenchmarkBackgroundStreamCPU(b *testing.B) {
	for _, words := range []int{10, 200} {
		b.Run(fmt.Sprint("deltas=", words), func(b *testing.B) { benchBackgroundCPU(b, words) })
	}
}

// wordy answers at once with n text deltas.
type wordy struct{ n int }

func (m *wordy) Info() llm.ModelInfo { return llm.ModelInfo{Name: "wordy"} }

func (m *wordy) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *wordy) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		text := strings.Repeat("word ", m.n)
		resp := &llm.Response{ID: "r", Model: "wordy", Message: llm.AssistantText(text), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 12, OutputTokens: m.n}}
		if !yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r", Model: "wordy"}}, nil) ||
			!yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) {
			return
		}
		for range m.n {
			if !yield(llm.Event{Type: llm.EventTextDelta, Delta: "word "}, nil) {
				return
			}
		}
		if !yield(llm.Event{Type: llm.EventBlockStop, Block: llm.Text{Text: text}}, nil) ||
			!yield(llm.Event{Type: llm.EventUsage, Usage: &resp.Usage}, nil) {
			return
		}
		yield(llm.Event{Type: llm.EventComplete, Response: resp}, nil)
	}
}

// block is how many turns of one kind run between two readings of the
// process's CPU time: the runtime's own work (the garbage collector's
// workers, the scheduler's spinning threads) runs beside the turns on
// other threads, and over a window of one turn it lands on whichever turn
// it overlaps; over blocks of turns, each kind bears its own.
const block = 50

func benchBackgroundCPU(b *testing.B, words int) {
	store := memstore.New()
	a, err := agent.New(&wordy{n: words}, agent.Config{Name: "bench", Store: store, Compaction: &compact.Policy{Strategy: compact.Off}, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "bench", Agent: a, Store: store})
	if err != nil {
		b.Fatal(err)
	}
	h, err := serve.New(serve.Options{Agents: set, MaxBackground: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	testwait.CloseOnCleanup(b, srv)
	client := srv.Client()
	for range 20 { // warm up both paths
		if err := respTurn(client, srv.URL, false); err != nil {
			b.Fatal(err)
		}
		if err := respTurn(client, srv.URL, true); err != nil {
			b.Fatal(err)
		}
	}
	before, _ := store.ListRecords(b.Context(), runlog.Namespace, "")
	var fg, bg time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += block {
		n := min(block, b.N-done)
		for _, background := range []bool{false, true} {
			start := processCPU(b)
			for range n {
				if err := respTurn(client, srv.URL, background); err != nil {
					b.Fatal(err)
				}
			}
			if d := processCPU(b) - start; background {
				bg += d
			} else {
				fg += d
			}
		}
	}
	b.StopTimer()
	after, _ := store.ListRecords(b.Context(), runlog.Namespace, "")
	b.ReportMetric(float64(fg.Microseconds())/float64(b.N), "foreground-cpu-µs/turn")
	b.ReportMetric(float64(bg.Microseconds())/float64(b.N), "background-cpu-µs/turn")
	b.ReportMetric(float64(bg)/float64(fg), "background/foreground")
	b.ReportMetric(float64(len(after)-len(before))/float64(b.N), "log-writes/turn")
}
