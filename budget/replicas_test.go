package budget_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// exactModel loops for ever, each answer reporting exactly the worst case
// the meter reserved for it (the counted input, the output cap of 100):
// the tightest case for a quota.
func exactModel(sent *int, mu *sync.Mutex) *llmtest.Model {
	info := llm.ModelInfo{Provider: "test", Name: "exact", ContextWindow: 100_000, MaxOutputTokens: 100, Price: price}
	m := llmtest.New().WithInfo(info)
	for i := range 40 {
		m.Add(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			mu.Lock()
			*sent++
			mu.Unlock()
			in := (&compact.Policy{}).Count(req, info)
			return &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call(fmt.Sprintf("call_%d", i), "tick", map[string]any{})}},
				FinishReason: llm.FinishToolUse,
				Usage:        llm.Usage{InputTokens: in, OutputTokens: 100},
			}, nil
		}))
	}
	return m
}

// TestReplicasNeverExceedQuota runs concurrent turns of one principal on
// two replicas (two handles on one PostgreSQL store, each its own
// connection pool) until the principal's token quota refuses them: what
// every call together spent never exceeds the quota, and the quota is
// used nearly to the end.
func TestReplicasNeverExceedQuota(t *testing.T) {
	opener := postgresOpener(t)
	replicas := []session.Store{opener(t), opener(t)}
	const quota = 6000
	var (
		mu    sync.Mutex
		sent  int
		spent llm.Usage
		wg    sync.WaitGroup
	)
	for r, store := range replicas {
		recs, _ := session.RecordsOf(store)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := agent.New(exactModel(&sent, &mu), agent.Config{Tools: []tool.Tool{tick}, Store: store, MaxSteps: 40})
				if err != nil {
					t.Error(err)
					return
				}
				q := &budget.StoreQuota{Records: recs, Principal: "bob", PerDay: budget.Limits{Tokens: quota}}
				resp, err := a.Run(budget.WithQuota(context.Background(), q), []llm.Message{llm.UserText("loop")},
					&agent.RunOptions{SessionID: fmt.Sprintf("r%d-%d", r, i)})
				if !errors.Is(err, llm.ErrBudgetExceeded) {
					t.Errorf("replica %d run %d: %v, want the quota's refusal", r, i, err)
				}
				var ee *budget.ExceededError
				if errors.As(err, &ee) && (ee.Scope != budget.ScopePrincipal || ee.Period != "day") {
					t.Errorf("refusal %+v, want the principal's daily quota", ee)
				}
				if resp != nil {
					mu.Lock()
					spent.Add(resp.Usage)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	recs, _ := session.RecordsOf(replicas[0])
	q := &budget.StoreQuota{Records: recs, Principal: "bob", PerDay: budget.Limits{Tokens: quota}}
	got, err := q.Spent(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls sent by 8 turns on 2 replicas: %d tokens spent, the quota holds %d", sent, spent.Total(), got.Today.Usage.Total())
	if spent.Total() > quota || got.Today.Usage.Total() > quota {
		t.Errorf("spent %d tokens (the quota's record: %d), over the quota of %d", spent.Total(), got.Today.Usage.Total(), quota)
	}
	if got.Today.Usage != spent {
		t.Errorf("the quota's record %+v, want what the calls spent %+v", got.Today.Usage, spent)
	}
	if spent.Total() < quota/2 {
		t.Errorf("spent %d tokens of %d: the quota refused too early", spent.Total(), quota)
	}
}
