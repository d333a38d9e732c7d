package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/session/memstore"
)

// BenchmarkBudgetCheck measures what spending limits add to a turn: the
// same turn as BenchmarkTurnCost's (provider/openai against a local
// server, a session of about 1,000 messages in memstore) run by two
// agents, one without limits (the floor) and one with a run and a session
// limit on tokens and cost that are never reached, alternately in the same
// loop, so that both see the same machine. Each iteration is one turn of
// each; ns/op is the pair. It reports "floor-ns/turn" and "budget-ns/turn"
// (wall time per turn of each agent), "x-floor" (their ratio) and
// "overhead-%"; the target is an overhead under 2%.
//
// Nothing here asserts a timing.
func BenchmarkBudgetCheck(b *testing.B) {
	ctx := context.Background()
	history := turnHistory(1_000)
	input := []llm.Message{llm.UserText("Thanks. One more question: which of the files we looked at should I refactor first, and why?")}
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	b.Cleanup(srv.Close)
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"))
	info := llm.ModelInfo{Name: "gpt-4o", Provider: "openai", ContextWindow: 1 << 30, MaxOutputTokens: 16_384,
		Price: &llm.Price{Input: 2.5, Output: 10, CacheRead: 1.25}}
	store := memstore.New()
	limits := budget.Limits{InputTokens: 1 << 50, OutputTokens: 1 << 50, Tokens: 1 << 50, CostUSD: 1e12}
	floor := newAgent(b, model, agent.Config{Name: "floor", Instructions: benchInstructions, Store: store, ModelInfo: &info})
	metered := newAgent(b, model, agent.Config{Name: "budget", Instructions: benchInstructions, Store: store, ModelInfo: &info,
		Budget: limits, SessionBudget: limits})

	sessions := 0
	fill := func(a *agent.Agent) string {
		id := fmt.Sprintf("s%d", sessions)
		sessions++
		fillSession(b, store, id, slices.Clone(history))
		runTurn(ctx, b, a, input, id) // warm-up
		return id
	}
	var floorID, budgetID string
	var floorTime, budgetTime time.Duration
	turn := func(a *agent.Agent, id string, total *time.Duration) {
		start := time.Now()
		resp, err := a.Run(ctx, input, &agent.RunOptions{SessionID: id})
		if err != nil {
			b.Fatal(err)
		}
		if err := resp.PersistErr(); err != nil {
			b.Fatal(err)
		}
		*total += time.Since(start)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%turnsPerHistory == 0 {
			b.StopTimer()
			for _, id := range []string{floorID, budgetID} {
				if id != "" {
					store.Delete(ctx, id)
				}
			}
			floorID, budgetID = fill(floor), fill(metered)
			runtime.GC()
			b.StartTimer()
		}
		if i%2 == 0 { // alternate which goes first
			turn(floor, floorID, &floorTime)
			turn(metered, budgetID, &budgetTime)
		} else {
			turn(metered, budgetID, &budgetTime)
			turn(floor, floorID, &floorTime)
		}
		i++
	}
	if i > 0 && floorTime > 0 {
		f, g := float64(floorTime)/float64(i), float64(budgetTime)/float64(i)
		b.ReportMetric(f, "floor-ns/turn")
		b.ReportMetric(g, "budget-ns/turn")
		b.ReportMetric(g/f, "x-floor")
		b.ReportMetric(100*(g-f)/f, "overhead-%")
	}
}
