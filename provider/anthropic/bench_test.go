package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// The streaming benchmarks replay an Anthropic stream of n small
// text_delta events ("hello " each, framed and padded as the API sends
// them). BenchmarkStreamAnthropic runs the whole adapter (request encoding,
// http.Client, idle guard, SSE decoding, event mapping, assembly, the final
// Response) over an in-memory http.RoundTripper, so the numbers are the
// library's own cost; BenchmarkStreamAnthropicHTTP adds a loopback httptest
// server. BenchmarkStreamFloor is the floor they are measured against: split
// the same bytes into SSE lines and decode each data line with encoding/json
// into a struct holding only delta.text.

var benchSizes = []int{100, 1000, 10000}

func streamBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`event: message_start` + "\n" + `data: {"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"msg_bench","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":15,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}` + "\n\n")
	b.WriteString(`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
	for range n {
		b.WriteString(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello "}}    ` + "\n\n")
	}
	b.WriteString(`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n")
	fmt.Fprintf(&b, `event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n", n)
	b.WriteString(`event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n")
	return b.Bytes()
}

// memTransport answers every request with a stream held in memory.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200,
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}},
		Body:       io.NopCloser(bytes.NewReader(m.body)),
		Request:    r,
	}, nil
}

var benchRequest = &llm.Request{Messages: []llm.Message{llm.UserText("Say hello many times.")}}

// perChunk reports wall time, CPU time (process-wide, so GC counts), bytes
// and allocations per streamed chunk.
func perChunk(b *testing.B, n int, run func()) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := processCPU()
	for b.Loop() {
		run()
	}
	cpu = processCPU() - cpu
	runtime.ReadMemStats(&after)
	chunks := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/chunks, "ns/chunk")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/chunks, "cpu-ns/chunk")
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/chunks, "B/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/chunks, "allocs/chunk")
}

func consume(b *testing.B, m *Model, n int) {
	for ev, err := range m.Stream(bg, benchRequest) {
		if err != nil {
			b.Fatal(err)
		}
		if ev.Type == llm.EventComplete && len(ev.Response.Message.Text()) != 6*n {
			b.Fatalf("assembled %d bytes, want %d", len(ev.Response.Message.Text()), 6*n)
		}
	}
}

func BenchmarkStreamAnthropic(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			m := newTestModel("http://bench.invalid", WithHTTPClient(&http.Client{Transport: memTransport{streamBody(n)}}))
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

// BenchmarkStreamAnthropicEncodingJSON is the adapter with the fast path
// off: every event decoded by encoding/json into the full event struct.
func BenchmarkStreamAnthropicEncodingJSON(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			m := newTestModel("http://bench.invalid", WithHTTPClient(&http.Client{Transport: memTransport{streamBody(n)}}), withoutFastPath())
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

func BenchmarkStreamAnthropicHTTP(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			body := streamBody(n)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				w.Write(body)
			}))
			defer srv.Close()
			m := newTestModel(srv.URL, WithHTTPClient(srv.Client()))
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

// floorEvent is the least a client must decode from a delta.
type floorEvent struct {
	Delta struct {
		Text string `json:"text"`
	} `json:"delta"`
}

func BenchmarkStreamFloor(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			body := streamBody(n)
			perChunk(b, n, func() {
				sc := bufio.NewScanner(bytes.NewReader(body))
				var text int
				for sc.Scan() {
					line := sc.Bytes()
					data, ok := bytes.CutPrefix(line, []byte("data: "))
					if !ok {
						continue
					}
					var ev floorEvent
					if err := json.Unmarshal(data, &ev); err != nil {
						b.Fatal(err)
					}
					text += len(ev.Delta.Text)
				}
				if text != 6*n {
					b.Fatalf("decoded %d bytes of text, want %d", text, 6*n)
				}
			})
		})
	}
}

// TestBenchmarkStreamIsRealistic keeps the benchmark's stream honest: it is
// a valid Anthropic stream that assembles to the expected answer.
func TestBenchmarkStreamIsRealistic(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", streamBody(50), 7, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, benchRequest))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != strings.Repeat("hello ", 50) || resp.Usage.OutputTokens != 50 {
		t.Errorf("assembled %q, usage %+v", resp.Message.Text(), resp.Usage)
	}
}
