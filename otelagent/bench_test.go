package otelagent_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/otelagent"
)

// chunkModel streams the same precomputed answer of n text chunks on every
// call: a model that costs next to nothing, so what is measured is the
// agent and its telemetry.
type chunkModel struct{ events []llm.Event }

func newChunkModel(n int) *chunkModel {
	text := strings.Repeat("x", n)
	resp := &llm.Response{ID: "r", Model: "gpt-test", Message: llm.AssistantText(text), FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 200, OutputTokens: n}}
	evs := []llm.Event{{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r", Model: "gpt-test"}}, {Type: llm.EventBlockStart, Block: llm.Text{}}}
	for i := range n {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Delta: text[i : i+1]})
	}
	u := resp.Usage
	evs = append(evs, llm.Event{Type: llm.EventBlockStop, Block: resp.Message.Content[0]},
		llm.Event{Type: llm.EventUsage, Usage: &u}, llm.Event{Type: llm.EventComplete, Response: resp})
	return &chunkModel{events: evs}
}

func (m *chunkModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *chunkModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range m.events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (m *chunkModel) Info() llm.ModelInfo { return priced }

// telemetryModes are the set-ups compared: no Telemetry at all; a
// Telemetry over the global providers with no SDK installed (what a
// library user who wires otelagent but installs nothing pays); the SDK
// with a batch span processor whose exporter drops everything and a meter
// provider with a reader that is never collected (the cost of recording).
var telemetryModes = []string{"off", "on-unconfigured", "on-noop-exporter"}

func telemetryFor(tb testing.TB, mode string) agent.Telemetry {
	switch mode {
	case "off":
		return nil
	case "on-unconfigured":
		return otelagent.MustNew(otelagent.Config{})
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tb.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	return otelagent.MustNew(otelagent.Config{TracerProvider: tp, MeterProvider: mp})
}

// turn runs one streamed turn, ranging over every update.
func turn(tb testing.TB, a *agent.Agent, msgs []llm.Message) {
	s := a.RunStream(context.Background(), msgs, nil)
	for _, err := range s.Updates() {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkTelemetry measures a streamed agent turn (no tools, no store)
// whose answer is chunks text deltas, with each telemetry set-up. The
// per-turn overhead is the difference between modes at chunks=1; the
// per-chunk overhead is ns/chunk and allocs/chunk at chunks=10000.
//
//	go test -run '^$' -bench Telemetry -benchmem ./otelagent
func BenchmarkTelemetry(b *testing.B) {
	for _, chunks := range []int{1, 10000} {
		for _, mode := range telemetryModes {
			b.Run(fmt.Sprintf("chunks=%d/%s", chunks, mode), func(b *testing.B) {
				a, err := agent.New(newChunkModel(chunks), agent.Config{Name: "bench", Instructions: "Answer briefly.", Telemetry: telemetryFor(b, mode)})
				if err != nil {
					b.Fatal(err)
				}
				msgs := []llm.Message{llm.UserText("What is the capital of France?")}
				b.ReportAllocs()
				for b.Loop() {
					turn(b, a, msgs)
				}
				if chunks > 1 {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(chunks), "ns/chunk")
				}
			})
		}
	}
}

// TestNoAllocationPerChunk: however the telemetry is set up, a longer
// answer costs no more allocations with it than without it: the chat span
// is per call, never per chunk.
func TestNoAllocationPerChunk(t *testing.T) {
	testenv.Short(t, "measures allocations")
	perChunk := func(mode string) float64 {
		tel := telemetryFor(t, mode)
		allocs := func(n int) float64 {
			a, err := agent.New(newChunkModel(n), agent.Config{Telemetry: tel})
			if err != nil {
				t.Fatal(err)
			}
			msgs := []llm.Message{llm.UserText("hi")}
			return testing.AllocsPerRun(10, func() { turn(t, a, msgs) })
		}
		// Per run, sync.Pool (which drops items at random under the race
		// detector) and the SDK add a few allocations of noise; an
		// allocation per chunk would add 9,800.
		return (allocs(10000) - allocs(200)) / 9800
	}
	off := perChunk("off")
	for _, mode := range telemetryModes[1:] {
		if on := perChunk(mode); on > off+0.01 {
			t.Errorf("%s: %.4f allocations per chunk, %.4f without telemetry", mode, on, off)
		}
	}
}

// BenchmarkChatStream isolates the per-chunk cost of the model middleware:
// a 10,000-chunk stream ranged bare, and through Telemetry.Middleware with
// each set-up ("off" is the bare model).
//
//	go test -run '^$' -bench ChatStream -benchmem ./otelagent
func BenchmarkChatStream(b *testing.B) {
	const chunks = 10000
	for _, mode := range telemetryModes {
		b.Run(mode, func(b *testing.B) {
			var model llm.Model = newChunkModel(chunks)
			if tel := telemetryFor(b, mode); tel != nil {
				model = tel.ModelMiddleware()(model)
			}
			req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				for _, err := range model.Stream(ctx, req) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
		})
	}
}
