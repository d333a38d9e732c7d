package budget_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// price is the scripted model's: $1 per million input tokens, $10 per
// million output tokens (cache writes dearer, reads cheaper).
var price = &llm.Price{Input: 1, Output: 10, CacheRead: 0.1, CacheWrite: 1.25}

var info = llm.ModelInfo{Provider: "test", Name: "loop", ContextWindow: 100_000, MaxOutputTokens: 100, Price: price}

// loopModel answers every request with one more tool call, for ever,
// reporting the request's input tokens as the policy counts them and 100
// output tokens; calls counts what was sent.
func loopModel(calls *int) *llmtest.Model {
	m := llmtest.New().WithInfo(info)
	for i := range 10 {
		m.Add(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			*calls++
			return &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call(fmt.Sprintf("call_%d", i), "tick", map[string]any{})}},
				FinishReason: llm.FinishToolUse,
				Usage:        llm.Usage{InputTokens: (&compact.Policy{}).Count(req, info), OutputTokens: 100},
			}, nil
		}))
	}
	return m
}

var tick = tool.MustFunc("tick", "one more step", func(ctx context.Context, _ struct{}) (string, error) { return "tock", nil })

// fourthCallLimit runs the loop for four calls without limits and
// returns a cost limit the fourth call's worst case would cross and the
// third's would not (what the three calls spent plus half of the fourth's
// worst case), with the usage of three calls.
func fourthCallLimit(t *testing.T) (float64, llm.Usage) {
	t.Helper()
	var calls int
	m := loopModel(&calls)
	a, err := agent.New(m, agent.Config{Tools: []tool.Tool{tick}, MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(t.Context(), []llm.Message{llm.UserText("loop")}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	var spent [5]float64 // spent[i]: what calls 1..i cost
	var usage llm.Usage
	for i, req := range reqs {
		u := llm.Usage{InputTokens: (&compact.Policy{}).Count(req, info), OutputTokens: 100}
		spent[i+1] = spent[i] + price.Cost(u)
		if i < 3 {
			usage.Add(u)
		}
	}
	worst := func(i int) float64 {
		w, _ := budget.Worst(info, (&compact.Policy{}).Count(reqs[i-1], info), 100)
		return w.CostUSD
	}
	limit := spent[3] + worst(4)/2
	if spent[2]+worst(3) > limit {
		t.Fatalf("no limit stops the loop at its fourth call exactly: %v", spent)
	}
	return limit, usage
}

// TestFourthCallNotSent runs the endless loop under a cost limit of each
// scope on each store, streaming and not: exactly three calls are sent,
// the turn ends with FinishBudget and the typed error naming the scope,
// what it did is stored, well-formed, every tool call answered.
func TestFourthCallNotSent(t *testing.T) {
	limit, three := fourthCallLimit(t)
	const before = 0.002 // an earlier turn's cost
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			recs, ok := session.RecordsOf(store)
			if !ok {
				t.Fatal("the store has no records")
			}
			for _, scope := range []budget.Scope{budget.ScopeRun, budget.ScopeSession, budget.ScopePrincipal} {
				for _, streamed := range []bool{false, true} {
					name := fmt.Sprintf("%s/streamed=%v", scope, streamed)
					t.Run(name, func(t *testing.T) {
						ctx := t.Context()
						id := "s-" + string(scope) + fmt.Sprint(streamed) + "-" + randomHex(3)
						var calls int
						cfg := agent.Config{Tools: []tool.Tool{tick}, Store: store, MaxSteps: 10}
						opts := &agent.RunOptions{SessionID: id}
						var quota *budget.StoreQuota
						switch scope {
						case budget.ScopeRun:
							cfg.Budget = budget.Limits{CostUSD: limit}
						case budget.ScopeSession:
							// An earlier turn of the session spent one call's
							// worth: the session's limit is one call more.
							if err := store.Append(ctx, id, session.Turn{ID: "before", Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello")},
								Usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}, CostUSD: before}); err != nil {
								t.Fatal(err)
							}
							cfg.SessionBudget = budget.Limits{CostUSD: limit + before}
						case budget.ScopePrincipal:
							quota = &budget.StoreQuota{Records: recs, Principal: "alice-" + id, Total: budget.Limits{CostUSD: limit}}
							ctx = budget.WithQuota(ctx, quota)
						}
						a, err := agent.New(loopModel(&calls), cfg)
						if err != nil {
							t.Fatal(err)
						}
						var resp *agent.Response
						if streamed {
							s := a.RunStream(ctx, []llm.Message{llm.UserText("loop")}, opts)
							var last error
							for _, err := range s.Updates() {
								last = err
							}
							if !errors.Is(last, llm.ErrBudgetExceeded) {
								t.Errorf("the stream's last item: %v, want the budget error", last)
							}
							resp, err = s.Wait()
						} else {
							resp, err = a.Run(ctx, []llm.Message{llm.UserText("loop")}, opts)
						}
						var ee *budget.ExceededError
						if !errors.As(err, &ee) || !errors.Is(err, llm.ErrBudgetExceeded) {
							t.Fatalf("err = %v, want a *budget.ExceededError", err)
						}
						if ee.Scope != scope || ee.Kind != budget.KindCost || ee.Limit <= 0 {
							t.Errorf("error %+v, want the %s cost limit", ee, scope)
						}
						if calls != 3 {
							t.Errorf("%d calls sent, want 3", calls)
						}
						if resp == nil || resp.FinishReason != llm.FinishBudget {
							t.Fatalf("response %+v, want one with FinishBudget", resp)
						}
						if resp.Usage != three && (scope != budget.ScopeSession || resp.Usage.OutputTokens != 300) {
							// (a session's calls also carry its earlier turn)
							t.Errorf("usage %+v, want three calls'", resp.Usage)
						}
						if err := resp.PersistErr(); err != nil {
							t.Fatal(err)
						}
						s, err := store.Load(ctx, id)
						if err != nil {
							t.Fatal(err)
						}
						msgs := s.Messages
						if scope == budget.ScopeSession {
							msgs = msgs[2:]
						}
						// The user's message, then three answers, each with its result.
						if len(msgs) != 7 {
							t.Errorf("stored %d messages, want 7", len(msgs))
						}
						if err := compact.Validate(s.Messages); err != nil {
							t.Errorf("the stored session is not well-formed: %v", err)
						}
						if err := compact.ValidatePairing(s.Messages); err != nil {
							t.Errorf("a tool call is not answered: %v", err)
						}
						if scope == budget.ScopePrincipal {
							spent, err := quota.Spent(ctx)
							if err != nil {
								t.Fatal(err)
							}
							if spent.Total.Usage != three {
								t.Errorf("the quota holds %+v, want three calls' usage settled", spent.Total)
							}
						}
					})
				}
			}
		})
	}
}

// A run started inside a tool call of another run (an agent used as a
// tool) counts in the outer run's limits: the outer run finds the inner
// run's spend in its own, and stops.
func TestNestedRunCountsInTheOuterRun(t *testing.T) {
	small := llm.ModelInfo{Provider: "test", Name: "m", ContextWindow: 100_000, MaxOutputTokens: 100}
	inner, err := agent.New(llmtest.New(llmtest.Text("the answer").WithUsage(llm.Usage{InputTokens: 7800, OutputTokens: 100})).WithInfo(small), agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ask := tool.MustFunc("ask", "ask the expert", func(ctx context.Context, _ struct{}) (string, error) {
		resp, err := inner.Run(ctx, []llm.Message{llm.UserText("question")}, nil)
		if err != nil {
			return "", err
		}
		return resp.Text(), nil
	})
	outerModel := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "ask", map[string]any{})).WithUsage(llm.Usage{InputTokens: 50, OutputTokens: 50}),
		llmtest.Text("never sent"),
	).WithInfo(small)
	outer, err := agent.New(outerModel, agent.Config{Tools: []tool.Tool{ask}, Budget: budget.Limits{Tokens: 8000}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := outer.Run(t.Context(), []llm.Message{llm.UserText("go")}, nil)
	if !errors.Is(err, llm.ErrBudgetExceeded) || resp == nil || resp.FinishReason != llm.FinishBudget {
		t.Fatalf("outer run: %v, %+v; want it stopped by its budget", err, resp)
	}
	if outerModel.Calls() != 1 || *resp.Budget.Run.Tokens != 0 {
		t.Errorf("outer calls %d, %d tokens left; want 1 call and nothing left (the inner run's 7,900 tokens counted)", outerModel.Calls(), *resp.Budget.Run.Tokens)
	}
}

// TestQuotaArrivesThroughTheRunContext: a principal's quota reaches a
// run one way, the context it runs in (budget.WithQuota, which agcore
// serve sets per request): the run's calls are settled in it, and a run
// nested in that run (an agent called as a tool) keeps it through the
// outer run's meter, each call counted once; a run in a context without
// one spends nothing of it.
func TestQuotaArrivesThroughTheRunContext(t *testing.T) {
	t.Parallel()
	small := llm.ModelInfo{Provider: "test", Name: "m", ContextWindow: 100_000, MaxOutputTokens: 100}
	for _, tc := range []struct {
		name      string
		withQuota bool
		nested    bool
		want      llm.Usage // what the quota holds as spent after the run
	}{
		{name: "a run in a context with the quota", withQuota: true, want: llm.Usage{InputTokens: 300, OutputTokens: 30}},
		{name: "a nested run in a context with the quota", withQuota: true, nested: true, want: llm.Usage{InputTokens: 1300, OutputTokens: 230}},
		{name: "a run in a context without it", nested: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			quota := &budget.StoreQuota{Records: store, Principal: "alice", Total: budget.Limits{Tokens: 1_000_000}}
			inner, err := agent.New(llmtest.New(llmtest.Text("the answer").WithUsage(llm.Usage{InputTokens: 1000, OutputTokens: 200})).WithInfo(small), agent.Config{})
			if err != nil {
				t.Fatal(err)
			}
			ask := tool.MustFunc("ask", "ask the expert", func(ctx context.Context, _ struct{}) (string, error) {
				resp, err := inner.Run(ctx, []llm.Message{llm.UserText("question")}, nil)
				if err != nil {
					return "", err
				}
				return resp.Text(), nil
			})
			first := llmtest.Text("done")
			if tc.nested {
				first = llmtest.Reply(llmtest.Call("c1", "ask", map[string]any{}))
			}
			outerModel := llmtest.New(first.WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 10}),
				llmtest.Text("done").WithUsage(llm.Usage{InputTokens: 200, OutputTokens: 20})).WithInfo(small)
			if !tc.nested {
				outerModel = llmtest.New(llmtest.Text("done").WithUsage(llm.Usage{InputTokens: 300, OutputTokens: 30})).WithInfo(small)
			}
			outer, err := agent.New(outerModel, agent.Config{Tools: []tool.Tool{ask}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if tc.withQuota {
				ctx = budget.WithQuota(ctx, quota)
			}
			if _, err := outer.Run(ctx, []llm.Message{llm.UserText("go")}, nil); err != nil {
				t.Fatal(err)
			}
			spent, err := quota.Spent(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if spent.Total.Usage != tc.want {
				t.Errorf("the quota holds %+v spent, want %+v", spent.Total.Usage, tc.want)
			}
		})
	}
}
