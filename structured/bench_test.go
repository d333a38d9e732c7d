package structured

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/provider/openai"
)

// TestOneValidationPerAnswer: each answer is validated exactly once (the
// partial values of a stream are not), whatever the mode.
func TestOneValidationPerAnswer(t *testing.T) {
	// Not parallel: it counts through the package's hook.
	var n atomic.Int32
	validated = func() { n.Add(1) }
	defer func() { validated = nil }()
	good := `{"title":"Dune","author":"Frank Herbert","year":1965,"tags":["sf"]}`
	tests := []struct {
		name   string
		native llm.StructuredMode
		stream bool
		steps  []llmtest.Step
		want   int32
	}{
		{"native", llm.StructuredStrict, false, []llmtest.Step{llmtest.Text(good)}, 1},
		{"native streamed", llm.StructuredStrict, true, []llmtest.Step{llmtest.Text(good)}, 1},
		{"forced tool", llm.StructuredNone, false, []llmtest.Step{llmtest.Reply(llmtest.Call("c1", ToolName, good))}, 1},
		{"repaired: one per answer", llm.StructuredSchema, false, []llmtest.Step{llmtest.Text(`{"title":"Dune"}`), llmtest.Text(good)}, 2},
	}
	for _, tt := range tests {
		n.Store(0)
		m := llmtest.New(tt.steps...).WithInfo(info(tt.native)).WithChunkSize(4).Verify(t)
		a := newAgent(t, m, agent.Config{})
		if tt.stream {
			for _, err := range Stream[Book](context.Background(), a, ask("?"), nil) {
				if err != nil {
					t.Fatal(err)
				}
			}
		} else if _, _, err := Run[Book](context.Background(), a, ask("?"), nil); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != tt.want {
			t.Errorf("%s: %d validations, want %d", tt.name, got, tt.want)
		}
	}
}

// benchAnswer streams one Chat Completions answer holding a Book.
func benchAnswer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	answer := `{"title":"Dune","author":"Frank Herbert","year":1965,"tags":["science fiction","classic"]}`
	for i := 0; i < len(answer); i += 12 {
		piece := answer[i:min(i+12, len(answer))]
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
	}
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120}}\n\ndata: [DONE]\n\n")
}

func benchHistory(n int) []llm.Message {
	msgs := make([]llm.Message, 0, n+1)
	for i := range n {
		text := fmt.Sprintf("message %d: %s", i, strings.Repeat("some words of the conversation so far, ", 6))
		if i%2 == 0 {
			msgs = append(msgs, llm.UserText(text))
		} else {
			msgs = append(msgs, llm.AssistantText(text))
		}
	}
	return append(msgs, llm.UserText("Which book? Answer in JSON."))
}

// BenchmarkTypedRun: a typed run (strict json_schema, validation,
// decode) against the same turn untyped (the floor), through
// provider/openai and a local server, for a short and a long history.
// Each iteration runs both, interleaved, so that the ratio compares runs
// of one process at one moment (x-floor: typed time over untyped time).
// added-B/op and added-allocs/op are what the typed run allocates beyond
// the untyped one: one schema validation and one decode per answer, the
// same for 10 and 200 messages of history (nothing of it is encoded
// again).
func BenchmarkTypedRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(benchAnswer))
	defer srv.Close()
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"), openai.WithStructuredOutput(llm.StructuredStrict))
	a, err := agent.New(model, agent.Config{Instructions: "Answer in JSON."})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, size := range []int{10, 200} {
		msgs := benchHistory(size)
		untyped := func() {
			if _, err := a.Run(ctx, msgs, nil); err != nil {
				b.Fatal(err)
			}
		}
		typed := func() {
			if _, _, err := Run[Book](ctx, a, msgs, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("history=%d", size), func(b *testing.B) {
			typed() // the schema compiled once, as in any process
			bytesOf := func(f func()) (uint64, uint64) {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				for range 100 {
					f()
				}
				runtime.ReadMemStats(&m1)
				return (m1.TotalAlloc - m0.TotalAlloc) / 100, (m1.Mallocs - m0.Mallocs) / 100
			}
			ub, ua := bytesOf(untyped)
			tb, ta := bytesOf(typed)
			var tu, tt time.Duration
			for b.Loop() {
				t0 := time.Now()
				untyped()
				t1 := time.Now()
				typed()
				tu += t1.Sub(t0)
				tt += time.Since(t1)
			}
			b.ReportMetric(float64(tt)/float64(tu), "x-floor")
			b.ReportMetric(float64(int64(tb)-int64(ub)), "added-B/op")
			b.ReportMetric(float64(int64(ta)-int64(ua)), "added-allocs/op")
			b.ReportMetric(float64(tt.Nanoseconds())/float64(b.N), "typed-ns/op")
			b.ReportMetric(float64(tu.Nanoseconds())/float64(b.N), "untyped-ns/op")
		})
	}
}
