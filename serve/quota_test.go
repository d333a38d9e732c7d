package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/tool"
)

// quotaModel loops for ever (one more tick per answer), each answer
// reporting exactly the worst case a meter reserved for it (the counted
// input, the output cap of 100): the tightest case for a quota. Its
// script is shared by every turn of a replica, and one replica may serve
// the whole of both principals' quotas (each call spends at least the 100
// output tokens: at most 160 calls for two quotas of 8,000), so it has
// room for more.
func quotaModel() *llmtest.Model {
	info := llm.ModelInfo{Provider: "test", Name: "loop", ContextWindow: 100_000, MaxOutputTokens: 100}
	m := llmtest.New().WithInfo(info)
	for i := range 400 {
		m.Add(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			return &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call(fmt.Sprintf("c%d", i), "tick", map[string]any{})}},
				FinishReason: llm.FinishToolUse,
				Usage:        llm.Usage{InputTokens: (&compact.Policy{}).Count(req, info), OutputTokens: 100},
			}, nil
		}))
	}
	return m
}

var tick = tool.MustFunc("tick", "one more step", func(ctx context.Context, _ struct{}) (string, error) { return "tock", nil })

// quotaReplica is one server over store with a daily token quota per
// principal.
func quotaReplica(t *testing.T, store session.Store, tokens int) *env {
	t.Helper()
	e := &env{t: t}
	a, err := agent.New(quotaModel(), agent.Config{Name: "loop", Tools: []tool.Tool{tick}, Store: store, MaxSteps: 60,
		Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "loop", Agent: a, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	e.h, err = serve.New(serve.Options{Agents: set, Tokens: map[string]string{"alice": "s3cret-a", "bob": "s3cret-b"},
		Quota: &serve.Quota{PerDay: budget.Limits{Tokens: tokens}}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestQuotaAcrossReplicas sends concurrent Responses turns of one
// principal to two replicas over one store until its daily token quota
// refuses them: together they never spend more than the quota; a turn
// the quota stopped after its first call is stored and ends incomplete
// ("budget"), one it refused at once is a 429 budget_exceeded; the usage
// object shows what is left; another principal's quota is untouched. On
// PostgreSQL (two handles, each its own pool: two processes) and on one
// shared memory store.
func TestQuotaAcrossReplicas(t *testing.T) {
	for _, kind := range []string{"memory", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var stores [2]session.Store
			switch kind {
			case "memory":
				m := memstore.New()
				stores = [2]session.Store{m, m}
			case "postgres":
				u := pgSchemaURL(t)
				for i := range stores {
					st, err := postgres.Open(t.Context(), u)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { st.Close() })
					stores[i] = st
				}
			}
			const quota = 8000
			replicas := []*env{quotaReplica(t, stores[0], quota), quotaReplica(t, stores[1], quota)}
			var (
				mu                  sync.Mutex
				spent, refused, cut int
				wg                  sync.WaitGroup
			)
			for i := range 8 {
				wg.Add(1)
				go func() {
					// Not the test's goroutine: no t.Fatal (nor helpers that
					// call it) and no assertion that can panic here.
					defer wg.Done()
					e := replicas[i%2]
					data, _ := json.Marshal(map[string]any{"model": "loop", "input": "loop", "conversation": fmt.Sprint("c", i)})
					req, _ := http.NewRequest("POST", e.srv.URL+"/v1/responses", bytes.NewReader(data))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer s3cret-a")
					resp, err := e.srv.Client().Do(req)
					if err != nil {
						t.Errorf("turn %d: %v", i, err)
						return
					}
					var got map[string]any
					err = json.NewDecoder(resp.Body).Decode(&got)
					resp.Body.Close()
					if err != nil {
						t.Errorf("turn %d: status %d: body is not JSON: %v", i, resp.StatusCode, err)
						return
					}
					if resp.StatusCode == http.StatusTooManyRequests {
						apiErr, _ := got["error"].(map[string]any)
						if apiErr["code"] != "budget_exceeded" || apiErr["type"] != "insufficient_quota" {
							t.Errorf("429 %v", got)
						}
						mu.Lock()
						refused++
						mu.Unlock()
						return
					}
					details, _ := got["incomplete_details"].(map[string]any)
					if resp.StatusCode != 200 || got["status"] != "incomplete" || details["reason"] != "budget" {
						t.Errorf("turn %d: %d %v", i, resp.StatusCode, got)
						return
					}
					usage, _ := got["usage"].(map[string]any)
					budget, _ := usage["budget"].(map[string]any)
					left, _ := budget["principal"].(map[string]any)
					total, ok := usage["total_tokens"].(float64)
					if _, has := left["tokens"]; !has || !ok {
						t.Errorf("usage %v: want the total and what is left of the principal's quota", usage)
						return
					}
					mu.Lock()
					spent += int(total)
					cut++
					mu.Unlock()
				}()
			}
			wg.Wait()
			// Once the quota is spent, new turns are refused on either
			// replica (after at most a call or two that still fit).
			for _, e := range replicas {
				for try := 0; ; try++ {
					resp := e.do("POST", "/v1/responses", map[string]any{"model": "loop", "input": "more"}, "Authorization: Bearer s3cret-a")
					if resp.StatusCode == http.StatusTooManyRequests {
						if code, _ := errCode(t, resp); code != "budget_exceeded" {
							t.Errorf("after the quota: %q, want budget_exceeded", code)
						}
						break
					}
					got := decode(t, resp)
					if resp.StatusCode != 200 || got["status"] != "incomplete" || try == 5 {
						t.Fatalf("after the quota: %d %v", resp.StatusCode, got)
					}
					spent += int(got["usage"].(map[string]any)["total_tokens"].(float64))
				}
			}
			recs, _ := session.RecordsOf(stores[0])
			q := &budget.StoreQuota{Records: recs, Principal: "alice", PerDay: budget.Limits{Tokens: quota}}
			rec, err := q.Spent(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: 8 turns on 2 replicas: %d stopped, %d refused at once; %d tokens spent in all; the quota holds %d of %d",
				kind, cut, refused, spent, rec.Today.Usage.Total(), quota)
			if spent > quota || rec.Today.Usage.Total() > quota {
				t.Errorf("spent %d tokens (the quota's record: %d), over the quota of %d", spent, rec.Today.Usage.Total(), quota)
			}
			if rec.Today.Usage.Total() != spent {
				t.Errorf("the quota's record holds %d tokens, the turns spent %d", rec.Today.Usage.Total(), spent)
			}
			if spent < quota/2 || cut == 0 {
				t.Errorf("spent %d of %d (%d turns): the quota refused too early", spent, quota, cut)
			}
			// bob's quota is his own.
			resp := replicas[0].do("POST", "/v1/responses", map[string]any{"model": "loop", "input": "loop"}, "Authorization: Bearer s3cret-b")
			if got := decode(t, resp); resp.StatusCode != 200 || got["status"] != "incomplete" {
				t.Errorf("bob: %d %v", resp.StatusCode, got)
			}
		})
	}
}

// pgSchemaURL returns $AGCORE_TEST_POSTGRES with a schema of the test's
// own, dropped when it ends.
func pgSchemaURL(t *testing.T) string {
	raw := os.Getenv("AGCORE_TEST_POSTGRES")
	if raw == "" {
		testenv.Missing(t, "AGCORE_TEST_POSTGRES is not set: set it to a PostgreSQL URL to run the quota test on PostgreSQL")
	}
	u, err := pgtest.URL(raw, pgtest.Schema(t, raw, "quota_"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}
