package budget_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session/memstore"
)

func spend(in, out int, usd float64) budget.Spend {
	return budget.Spend{Usage: llm.Usage{InputTokens: in, OutputTokens: out}, CostUSD: usd}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		limits      budget.Limits
		spent, next budget.Spend
		unpriced    bool
		want        budget.Kind // "" for no refusal
		text        string
	}{
		{"no limits", budget.Limits{}, spend(1e6, 1e6, 100), spend(1e6, 1e6, 100), false, "", ""},
		{"input within", budget.Limits{InputTokens: 100}, spend(50, 0, 0), spend(50, 1000, 0), false, "", ""},
		{"input over", budget.Limits{InputTokens: 100}, spend(50, 0, 0), spend(51, 0, 0), false, budget.KindInputTokens,
			"the run input token limit of 100 tokens would be crossed: 50 tokens spent, the next model call could use up to 51 tokens"},
		{"output over", budget.Limits{OutputTokens: 10}, spend(0, 5, 0), spend(0, 6, 0), false, budget.KindOutputTokens, "output token limit of 10 tokens"},
		{"total over", budget.Limits{Tokens: 100}, spend(30, 30, 0), spend(20, 21, 0), false, budget.KindTokens, "token limit of 100 tokens"},
		{"total exactly", budget.Limits{Tokens: 100}, spend(30, 30, 0), spend(20, 20, 0), false, "", ""},
		{"cost over", budget.Limits{CostUSD: 0.5}, spend(0, 0, 0.4), spend(0, 0, 0.11), false, budget.KindCost,
			"the run cost limit of $0.5000 would be crossed: $0.4000 spent, the next model call could use up to $0.1100"},
		{"cost unknown", budget.Limits{CostUSD: 0.5}, spend(0, 0, 0), spend(1, 1, 0), true, budget.KindCost, "cannot be kept: the model has no price"},
		{"tokens without a price", budget.Limits{Tokens: 10}, spend(0, 0, 0), spend(1, 1, 0), true, "", ""},
	}
	for _, tt := range tests {
		e := tt.limits.Check(budget.ScopeRun, tt.spent, tt.next, !tt.unpriced)
		switch {
		case tt.want == "" && e != nil:
			t.Errorf("%s: refused: %v", tt.name, e)
		case tt.want != "" && (e == nil || e.Kind != tt.want || !strings.Contains(e.Error(), tt.text)):
			t.Errorf("%s: %v, want a %s refusal saying %q", tt.name, e, tt.want, tt.text)
		case e != nil && (!errors.Is(e, llm.ErrBudgetExceeded) || e.Scope != budget.ScopeRun):
			t.Errorf("%s: %v does not match llm.ErrBudgetExceeded in the run scope", tt.name, e)
		}
	}
}

func TestLeft(t *testing.T) {
	t.Parallel()
	l := budget.Limits{Tokens: 100, CostUSD: 1}.Left(spend(60, 50, 0.25))
	if l.InputTokens != nil || l.OutputTokens != nil || l.Tokens == nil || *l.Tokens != 0 || l.CostUSD == nil || *l.CostUSD != 0.75 {
		t.Errorf("Left = %+v, want no input or output limit, 0 tokens (never negative), $0.75", l)
	}
}

func TestWorstAndOutputCap(t *testing.T) {
	t.Parallel()
	price := &llm.Price{Input: 1, Output: 10, CacheWrite: 2,
		LongContext: &llm.Price{Input: 4, Output: 20}, LongContextThreshold: 1000}
	info := llm.ModelInfo{ContextWindow: 5000, MaxOutputTokens: 300, Price: price}
	for _, tc := range []struct {
		in, out int
		usd     float64
	}{
		{500, 100, (500*2 + 100*10) / 1e6},   // input at the dearer cache-write rate
		{2000, 100, (2000*4 + 100*20) / 1e6}, // the long-context tier
	} {
		s, priced := budget.Worst(info, tc.in, tc.out)
		if !priced || s.Usage.InputTokens != tc.in || s.Usage.OutputTokens != tc.out || s.CostUSD != tc.usd {
			t.Errorf("worstSpend(%d, %d) = %+v %v, want $%g", tc.in, tc.out, s, priced, tc.usd)
		}
	}
	if _, priced := budget.Worst(llm.ModelInfo{}, 1, 1); priced {
		t.Error("a model without a price is priced")
	}
	for _, tc := range []struct {
		req  llm.Request
		info llm.ModelInfo
		want int
	}{
		{llm.Request{MaxTokens: 50}, info, 50},
		{llm.Request{}, info, 300},
		{llm.Request{}, llm.ModelInfo{ContextWindow: 5000}, 4000},
		{llm.Request{}, llm.ModelInfo{}, 0},
	} {
		if got := budget.OutputCap(&tc.req, tc.info, 1000); got != tc.want {
			t.Errorf("outputCap(%+v, %+v) = %d, want %d", tc.req, tc.info, got, tc.want)
		}
	}
}

// fixedClock tells a time it is given.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time                                   { return c.now }
func (c *fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// A StoreQuota reserves the worst case, settles the actual, refuses what
// could cross the total or the day's limit, and starts each UTC day anew.
func TestStoreQuota(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := &fixedClock{now: time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)}
	q := &budget.StoreQuota{Records: memstore.New(), Principal: "alice", Clock: clk,
		PerDay: budget.Limits{Tokens: 1000}, Total: budget.Limits{Tokens: 2500}}
	settle, err := q.Reserve(ctx, spend(400, 400, 0), true)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := q.Spent(ctx); s.Today.Usage.Total() != 800 {
		t.Errorf("reserved %d tokens, want the worst case, 800", s.Today.Usage.Total())
	}
	if _, err := q.Reserve(ctx, spend(100, 101, 0), true); !errors.Is(err, llm.ErrBudgetExceeded) {
		t.Errorf("a reservation over the day's limit: %v", err)
	}
	if err := settle(ctx, spend(300, 50, 0)); err != nil {
		t.Fatal(err)
	}
	if s, _ := q.Spent(ctx); s.Today.Usage.Total() != 350 || s.Total.Usage.Total() != 350 {
		t.Errorf("settled %+v, want 350 tokens today and in total", s)
	}
	left, err := q.Left(ctx)
	if err != nil || left.Tokens == nil || *left.Tokens != 650 {
		t.Errorf("Left = %+v, %v, want the day's 650 (tighter than the total's 2150)", left, err)
	}
	// The next day starts from nothing; the total goes on.
	clk.now = clk.now.Add(2 * time.Hour)
	for range 2 {
		settle, err := q.Reserve(ctx, spend(500, 500, 0), true)
		if err != nil {
			t.Fatalf("the next day: %v", err)
		}
		settle(ctx, spend(500, 500, 0))
		clk.now = clk.now.Add(24 * time.Hour)
	}
	_, err = q.Reserve(ctx, spend(100, 100, 0), true)
	var ee *budget.ExceededError
	if !errors.As(err, &ee) || ee.Period != "" || ee.Kind != budget.KindTokens || ee.Used != 2350 {
		t.Errorf("over the total: %v, want the total's refusal after 2,350 tokens", err)
	}
}

// A child meter's calls count in its parent's limits too.
func TestChildMeterCountsInItsParent(t *testing.T) {
	t.Parallel()
	parent := &budget.Meter{Run: budget.Limits{Tokens: 1000}}
	child := parent.Child(budget.Limits{})
	m := child.Middleware()(instant{llm.ModelInfo{ContextWindow: 100_000, MaxOutputTokens: 100}})
	ctx := context.Background()
	var err error
	calls := 0
	for ; err == nil && calls < 100; calls++ {
		_, err = m.Generate(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	}
	var ee *budget.ExceededError
	if !errors.As(err, &ee) || ee.Scope != budget.ScopeRun || ee.Limit != 1000 {
		t.Fatalf("after %d calls: %v, want the parent's limit", calls, err)
	}
	if parent.Spent() != child.Spent() || parent.Calls() != child.Calls() || parent.Spent().Usage.Total() > 1000 {
		t.Errorf("parent spent %+v in %d calls, child %+v in %d", parent.Spent(), parent.Calls(), child.Spent(), child.Calls())
	}
	if parent.Err() == nil || child.Err() == nil {
		t.Error("the refusal is not recorded in both meters")
	}
}

// countingQuota counts its reservations.
type countingQuota struct{ reserved int }

func (q *countingQuota) Reserve(context.Context, budget.Spend, bool) (func(context.Context, budget.Spend) error, error) {
	q.reserved++
	return func(context.Context, budget.Spend) error { return nil }, nil
}

func (q *countingQuota) Left(context.Context) (budget.Left, error) { return budget.Left{}, nil }

// A quota held by a meter and its child is reserved once per call.
func TestSharedQuotaReservedOnce(t *testing.T) {
	t.Parallel()
	q := &countingQuota{}
	parent := &budget.Meter{Quota: q}
	child := parent.Child(budget.Limits{})
	child.Quota = q
	m := child.Middleware()(instant{llm.ModelInfo{ContextWindow: 1000}})
	if _, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if q.reserved != 1 {
		t.Errorf("%d reservations, want 1", q.reserved)
	}
}
