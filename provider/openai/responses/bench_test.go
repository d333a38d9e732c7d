package responses

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

// The stream benchmarks measure parsing, not TCP: the HTTP client's
// transport is an in-memory http.RoundTripper that answers every request
// with the same recorded-shape body. Both the floor and the adapter go
// through http.Client.Do with it, so they pay the same fixed cost per
// request.

// benchBody is a Responses stream of n small text deltas shaped like the
// recorded ones (event lines, item ids, logprobs, obfuscation, sequence
// numbers), framed by the lifecycle events, whose closing ones repeat the
// whole text as OpenAI's do.
func benchBody(n int) []byte {
	var b bytes.Buffer
	words := []string{" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", ".\n"}
	const id = "msg_0a6fc3349e38704d016a3c120b5d28819ea807fdf185cae88e"
	resp := func(status, output, usage string) string {
		return `{"id":"resp_0a6fc3349e38704d016a3c120ac63c819e941b6f18b7170ff4","object":"response","created_at":1782321674,"status":"` + status +
			`","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-4o-mini-2024-07-18","output":[` + output +
			`],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":` + usage + `,"user":null,"metadata":{}}`
	}
	seq := 0
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,%s,\"sequence_number\":%d}\n\n", typ, typ, rest, seq)
		seq++
	}
	ev("response.created", `"response":`+resp("in_progress", "", "null"))
	ev("response.in_progress", `"response":`+resp("in_progress", "", "null"))
	ev("response.output_item.added", `"item":{"id":"`+id+`","type":"message","status":"in_progress","content":[],"role":"assistant"},"output_index":0`)
	ev("response.content_part.added", `"content_index":0,"item_id":"`+id+`","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	var text strings.Builder
	for i := 0; i < n; i++ {
		w := words[i%len(words)]
		text.WriteString(w)
		q, _ := json.Marshal(w)
		ev("response.output_text.delta", `"content_index":0,"delta":`+string(q)+`,"item_id":"`+id+`","logprobs":[],"obfuscation":"I7Nl54CKLwXRwW","output_index":0`)
	}
	full, _ := json.Marshal(text.String())
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + string(full) + `}`
	item := `{"id":"` + id + `","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	ev("response.output_text.done", `"content_index":0,"item_id":"`+id+`","logprobs":[],"output_index":0,"text":`+string(full))
	ev("response.content_part.done", `"content_index":0,"item_id":"`+id+`","output_index":0,"part":`+part)
	ev("response.output_item.done", `"item":`+item+`,"output_index":0`)
	ev("response.completed", `"response":`+resp("completed", item, `{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":70}`))
	return b.Bytes()
}

// memTransport answers every request with body.
type memTransport struct{ body []byte }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}},
		Body:       io.NopCloser(bytes.NewReader(t.body)),
		Request:    r,
	}, nil
}

var chunkCounts = []int{100, 1000, 10000}

// perChunk runs fn b.N times and reports its cost per chunk: wall time,
// process CPU time (GC included; steadier on a shared machine), bytes and
// allocations.
func perChunk(b *testing.B, chunks int, fn func()) {
	b.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, cpu := time.Now(), processCPU()
	for b.Loop() {
		fn()
	}
	elapsed, cpu := time.Since(start), processCPU()-cpu
	runtime.ReadMemStats(&after)
	total := float64(b.N) * float64(chunks)
	b.ReportMetric(float64(elapsed.Nanoseconds())/total, "ns/chunk")
	b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/chunk")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/total, "B/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
}

// BenchmarkStreamResponsesFloor is the floor: split the SSE lines and
// decode each event's JSON with encoding/json into the smallest struct
// that yields the text deltas.
func BenchmarkStreamResponsesFloor(b *testing.B) {
	for _, n := range chunkCounts {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			client := &http.Client{Transport: memTransport{benchBody(n)}}
			reqBody := []byte(`{"model":"gpt-4o-mini","input":[{"role":"user","content":"hi"}],"stream":true}`)
			var text int
			perChunk(b, n, func() {
				req, _ := http.NewRequest(http.MethodPost, "http://bench/v1/responses", bytes.NewReader(reqBody))
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(nil, 8<<20)
				for sc.Scan() {
					data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
					if !ok {
						continue
					}
					var e struct {
						Type  string `json:"type"`
						Delta string `json:"delta"`
					}
					if err := json.Unmarshal(data, &e); err != nil {
						b.Fatal(err)
					}
					if e.Type == "response.output_text.delta" {
						text += len(e.Delta)
					}
				}
				resp.Body.Close()
			})
			if text == 0 {
				b.Fatal("no text")
			}
		})
	}
}

// BenchmarkStreamResponses is the adapter's whole streaming path: request
// encoding, the HTTP round trip, SSE decoding, event parsing, events, and
// the assembled Response at the end.
func BenchmarkStreamResponses(b *testing.B) {
	for _, n := range chunkCounts {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := New(WithAPIKey("sk-bench"), WithBaseURL("http://bench/v1"), WithModel("gpt-4o-mini"),
				WithHTTPClient(&http.Client{Transport: memTransport{benchBody(n)}}))
			req := userRequest()
			var text int
			perChunk(b, n, func() {
				for ev, err := range m.Stream(bg, req) {
					if err != nil {
						b.Fatal(err)
					}
					if ev.Type == llm.EventComplete {
						text += len(ev.Response.Message.Text())
					}
				}
			})
			if text == 0 {
				b.Fatal("no text")
			}
		})
	}
}

// BenchmarkEventParse compares the two event parsers on one text delta.
func BenchmarkEventParse(b *testing.B) {
	data := []byte(`{"type":"response.output_text.delta","content_index":0,"delta":" quick","item_id":"msg_0a6fc3349e38704d016a3c120b5d28819ea807fdf185cae88e","logprobs":[],"obfuscation":"I7Nl54CKLwXRwW","output_index":0,"sequence_number":5}`)
	var e event
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if !parseEventFast(data, &e) {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := parseEventStd(data, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestBenchBodyStreams(t *testing.T) {
	m := New(WithAPIKey("k"), WithBaseURL("http://bench/v1"), WithModel("m"),
		WithHTTPClient(&http.Client{Transport: memTransport{benchBody(20)}}))
	evs, resp, err := drain(t, m.Stream(bg, userRequest()))
	if err != nil || !strings.HasPrefix(resp.Message.Text(), " the quick brown") || resp.Usage.InputTokens != 20 || len(evs) != 20+5 {
		t.Fatalf("resp %+v err %v, %d events", resp, err, len(evs))
	}
}
