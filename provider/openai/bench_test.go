package openai

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

// benchBody is an OpenAI stream of n small text chunks shaped like the real
// ones (id, model, fingerprint, obfuscation, "usage": null), then the
// finish chunk, the usage chunk and [DONE].
func benchBody(n int) []byte {
	var b bytes.Buffer
	words := []string{" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", ".\n"}
	head := `data: {"id":"chatcmpl-CoDWtmOB2DZI2l0bK84UVJEMpo63W","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_deacdd5f6f","choices":[{"index":0,"delta":{`
	fmt.Fprintf(&b, "%s\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"6SrG2MJzwXsyrz\"}\n\n", head)
	for i := 0; i < n; i++ {
		w, _ := json.Marshal(words[i%len(words)])
		fmt.Fprintf(&b, "%s\"content\":%s},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"f02z1qtPwBJj\"}\n\n", head, w)
	}
	fmt.Fprintf(&b, "%s},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null,\"obfuscation\":\"7NyDtvES\"}\n\n", head)
	b.WriteString(`data: {"id":"chatcmpl-CoDWtmOB2DZI2l0bK84UVJEMpo63W","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_deacdd5f6f","choices":[],"usage":{"prompt_tokens":14,"completion_tokens":50,"total_tokens":64,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"eoKVyDvSOTC0nuc"}` + "\n\ndata: [DONE]\n\n")
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

// perChunk runs fn b.N times and reports its cost per chunk.
func perChunk(b *testing.B, chunks int, fn func()) {
	b.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		fn()
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	total := float64(b.N) * float64(chunks)
	b.ReportMetric(float64(elapsed.Nanoseconds())/total, "ns/chunk")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/total, "B/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
}

// BenchmarkStreamOpenAIFloor is the floor: split the SSE lines and decode
// each chunk's JSON with encoding/json into the smallest struct that yields
// choices[0].delta.content.
func BenchmarkStreamOpenAIFloor(b *testing.B) {
	for _, n := range chunkCounts {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			client := &http.Client{Transport: memTransport{benchBody(n)}}
			reqBody := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}`)
			var text int
			perChunk(b, n, func() {
				req, _ := http.NewRequest(http.MethodPost, "http://bench/v1/chat/completions", bytes.NewReader(reqBody))
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
					if !ok || string(data) == "[DONE]" {
						continue
					}
					var c struct {
						Choices []struct {
							Delta struct {
								Content string `json:"content"`
							} `json:"delta"`
						} `json:"choices"`
					}
					if err := json.Unmarshal(data, &c); err != nil {
						b.Fatal(err)
					}
					if len(c.Choices) > 0 {
						text += len(c.Choices[0].Delta.Content)
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

// BenchmarkStreamOpenAI is the adapter's whole streaming path: request
// encoding, the HTTP round trip, SSE decoding, chunk parsing, events, and
// the assembled Response at the end.
func BenchmarkStreamOpenAI(b *testing.B) {
	for _, n := range chunkCounts {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := New(WithAPIKey("sk-bench"), WithBaseURL("http://bench/v1"), WithModel("gpt-4o"),
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

// BenchmarkChunkParse compares the two chunk parsers on one text chunk.
func BenchmarkChunkParse(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-CoDWtmOB2DZI2l0bK84UVJEMpo63W","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_deacdd5f6f","choices":[{"index":0,"delta":{"content":" quick"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"f02z1qtPwBJj"}`)
	var c chunk
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if !parseChunkFast(data, &c) {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := parseChunkStd(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestBenchBodyStreams(t *testing.T) {
	m := New(WithAPIKey("k"), WithBaseURL("http://bench/v1"), WithModel("m"),
		WithHTTPClient(&http.Client{Transport: memTransport{benchBody(20)}}))
	_, resp, err := drain(t, m.Stream(bg, userRequest()))
	if err != nil || !strings.HasPrefix(resp.Message.Text(), " the quick brown") || resp.Usage.InputTokens != 14 {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}
