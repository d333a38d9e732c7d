package gemini

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

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
)

// The streaming benchmarks replay a Gemini stream of n text chunks
// ("hello " each, framed as Google sends them: CRLF-separated events, each
// chunk repeating the cumulative usageMetadata, modelVersion and
// responseId). BenchmarkStreamGemini runs the whole adapter (request
// encoding, http.Client, idle guard, SSE decoding, chunk decoding, event
// mapping, assembly, the final Response) over an in-memory
// http.RoundTripper, so the numbers are the library's own cost;
// BenchmarkStreamGeminiHTTP adds a loopback httptest server.
// BenchmarkStreamFloor is the floor they are measured against: split the
// same bytes into SSE lines and decode each data line with encoding/json
// into a struct holding only the parts' text.

var benchSizes = []int{100, 1000, 10000}

func streamBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		finish := ""
		if i == n-1 {
			finish = `,"finishReason": "STOP"`
		}
		fmt.Fprintf(&b, `data: {"candidates": [{"content": {"parts": [{"text": "hello "}],"role": "model"}%s,"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 9}],"thoughtsTokenCount": 38},"modelVersion": "gemini-2.5-flash","responseId": "Q5nyaIWZL_C1qtsPhY6D8A4"}`+"\r\n\r\n",
			finish, i+1, i+48)
	}
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
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
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

func BenchmarkStreamGemini(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			m := newTestModel("http://bench.invalid", WithHTTPClient(&http.Client{Transport: memTransport{streamBody(n)}}))
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

// BenchmarkStreamGeminiEncodingJSON is the adapter with the fast path
// off: every chunk decoded by encoding/json into the full chunk struct.
func BenchmarkStreamGeminiEncodingJSON(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			m := newTestModel("http://bench.invalid", WithHTTPClient(&http.Client{Transport: memTransport{streamBody(n)}}), withoutFastPath())
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

func BenchmarkStreamGeminiHTTP(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			body := streamBody(n)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(body)
			}))
			defer srv.Close()
			m := newTestModel(srv.URL, WithHTTPClient(srv.Client()))
			perChunk(b, n, func() { consume(b, m, n) })
		})
	}
}

// floorChunk is the least a client must decode from a chunk.
type floorChunk struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"candidates"`
}

func BenchmarkStreamFloor(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			body := streamBody(n)
			perChunk(b, n, func() {
				sc := bufio.NewScanner(bytes.NewReader(body))
				var text int
				for sc.Scan() {
					data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
					if !ok {
						continue
					}
					var c floorChunk
					if err := json.Unmarshal(data, &c); err != nil {
						b.Fatal(err)
					}
					for _, cand := range c.Candidates {
						for _, p := range cand.Content.Parts {
							text += len(p.Text)
						}
					}
				}
				if text != 6*n {
					b.Fatalf("decoded %d bytes of text, want %d", text, 6*n)
				}
			})
		})
	}
}

// TestBenchmarkStreamIsRealistic keeps the benchmark's stream honest: it is
// a valid Gemini stream that assembles to the expected answer, and every
// chunk of it takes the fast path.
func TestBenchmarkStreamIsRealistic(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", streamBody(50), 7, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, benchRequest))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != strings.Repeat("hello ", 50) || resp.Usage != (llm.Usage{InputTokens: 9, OutputTokens: 50 + 38, ReasoningTokens: 38}) {
		t.Errorf("assembled %q, usage %+v", resp.Message.Text(), resp.Usage)
	}
	for _, line := range bytes.Split(streamBody(3), []byte("\r\n\r\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			var c chunk
			var scratch [][]byte
			if !decodeFast(data, &c, &scratch) {
				t.Errorf("the fast path refuses %s", data)
			}
		}
	}
}

// TestStreamAllocationsPerChunk holds the fast path to its budget: at most
// two allocations per streamed chunk, at 1,000 and at 10,000 chunks (a
// cost that grew with the answer would show at the larger size).
func TestStreamAllocationsPerChunk(t *testing.T) {
	testenv.Short(t, "streams 11,000 chunks")
	for _, n := range []int{1000, 10000} {
		m := newTestModel("http://bench.invalid", WithHTTPClient(&http.Client{Transport: memTransport{streamBody(n)}}))
		allocs := testing.AllocsPerRun(3, func() {
			for _, err := range m.Stream(bg, benchRequest) {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
		if perChunk := allocs / float64(n); perChunk > 2 {
			t.Errorf("%d chunks: %.2f allocations per chunk, want at most 2", n, perChunk)
		}
	}
}
