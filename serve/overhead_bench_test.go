package serve_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/sqlite"
)

// BenchmarkRequestOverhead measures what the handler's layers cost a
// request that does almost nothing else: an authenticated GET /v1/models
// and an unauthenticated GET /healthz, served in-process (no network), so
// that ns/op and allocs/op are the access log, CORS, authentication,
// limits and routing.
func BenchmarkRequestOverhead(b *testing.B) {
	_, h := benchAgent(b, &instant{})
	authed, err := serve.New(serve.Options{Agents: benchSet(b), Tokens: map[string]string{"alice": "s3cret"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		h     http.Handler
		path  string
		token string
	}{
		{"models/token", authed, "/v1/models", "s3cret"},
		{"models/local", h, "/v1/models", ""},
		{"healthz", h, "/healthz", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				tc.h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

func benchSet(b *testing.B) *host.Set {
	a, err := agent.New(&instant{}, agent.Config{Name: "bench", Compaction: &compact.Policy{Strategy: compact.Off}, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "bench", Agent: a})
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// sized answers every request with one text of n bytes.
type sized struct{ n int }

func (m *sized) Info() llm.ModelInfo { return llm.ModelInfo{Name: "sized"} }

func (m *sized) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *sized) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		text := strings.Repeat("word ", m.n/5)
		resp := &llm.Response{ID: "r", Model: "sized", Message: llm.AssistantText(text), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 12, OutputTokens: m.n / 5}}
		_ = yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r", Model: "sized"}}, nil) &&
			yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) &&
			yield(llm.Event{Type: llm.EventTextDelta, Delta: text}, nil) &&
			yield(llm.Event{Type: llm.EventBlockStop, Block: llm.Text{Text: text}}, nil) &&
			yield(llm.Event{Type: llm.EventUsage, Usage: &resp.Usage}, nil) &&
			yield(llm.Event{Type: llm.EventComplete, Response: resp}, nil)
	}
}

// BenchmarkContinuedTurn measures a continued Responses turn
// (previous_response_id) of a conversation whose history (about 1.6 MB
// of storage JSON, 200 turns) is larger than the store's message cache
// (1 MiB) while its compacted view is small (the agent's budget is 20,000
// tokens): what a long conversation costs per turn once the server holds
// more history than it caches.
func BenchmarkContinuedTurn(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "agcore.db"), sqlite.WithCacheBytes(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	a, err := agent.New(&sized{n: 8000}, agent.Config{Name: "bench", Store: st,
		Compaction: &compact.Policy{Budget: 20000}, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "bench", Agent: a, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	h, err := serve.New(serve.Options{Agents: set})
	if err != nil {
		b.Fatal(err)
	}
	prev := ""
	turn := func() {
		body := `{"model":"bench","input":"next"}`
		if prev != "" {
			body = `{"model":"bench","input":"next","previous_response_id":"` + prev + `"}`
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/responses", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var obj struct{ ID string }
		if err := json.Unmarshal(w.Body.Bytes(), &obj); err != nil {
			b.Fatal(err)
		}
		prev = obj.ID
	}
	for range 200 {
		turn()
	}
	sid := strings.TrimPrefix(prev[:strings.LastIndexByte(prev, '_')], "resp_")
	if v, err := st.LoadView(b.Context(), sid); err != nil || v.Base == 0 {
		b.Fatalf("the conversation has no compacted view (err %v)", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		turn()
	}
}
