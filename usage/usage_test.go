package usage

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// cost prices u for model as the model's own provider sells it.
func cost(model string, u llm.Usage) (float64, bool) {
	info, _ := catalog.Default().Lookup(model)
	return CostOf(info, u)
}

// info is what the default catalog says of model.
func info(model string) llm.ModelInfo {
	i, _ := catalog.Default().Lookup(model)
	return i
}

func TestCostPricesEachPartOfTheInputSeparately(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule  string
		model string
		u     llm.Usage
		want  float64
	}{
		{"plain input and output", "gpt-4o", llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 2.50 + 10.00},
		{"cached tokens are part of the input, at the cached price", "gpt-4o",
			llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, OutputTokens: 0}, 0.6*2.50 + 0.4*1.25},
		{"cache writes at the write price", "claude-sonnet-4-5",
			llm.Usage{InputTokens: 100_000, CacheCreationTokens: 60_000, CachedInputTokens: 30_000, OutputTokens: 2_000},
			(10_000*3 + 60_000*3.75 + 30_000*0.30 + 2_000*15) / 1e6},
		{"reasoning tokens are output, not added again", "o4-mini",
			llm.Usage{InputTokens: 1000, OutputTokens: 5000, ReasoningTokens: 4000}, (1000*1.10 + 5000*4.40) / 1e6},
		{"deepseek cache hits", "deepseek-chat",
			llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 1_000_000}, 0.028},
		{"inconsistent usage never prices negative input", "gpt-4o",
			llm.Usage{InputTokens: 10, CachedInputTokens: 20}, 20 * 1.25 / 1e6},
		{"long context above 200k input", "claude-sonnet-4-5-20250929",
			llm.Usage{InputTokens: 250_000, OutputTokens: 1_000}, (250_000*6 + 1_000*22.5) / 1e6},
		{"no long-context surcharge at the threshold", "claude-sonnet-4",
			llm.Usage{InputTokens: 200_000}, 200_000 * 3 / 1e6},
		{"zero usage costs zero and is known", "gpt-5", llm.Usage{}, 0},
		{"dated snapshot", "gpt-4o-2024-08-06", llm.Usage{OutputTokens: 1_000_000}, 10},
		{"bedrock id", "us.anthropic.claude-haiku-4-5-20251001-v1:0", llm.Usage{OutputTokens: 1_000_000}, 5},
		{"routing prefix", "openai/gpt-4.1-mini", llm.Usage{InputTokens: 1_000_000}, 0.40},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			got, known := cost(tc.model, tc.u)
			if !known {
				t.Fatalf("%s: price unknown", tc.model)
			}
			if !near(got, tc.want) {
				t.Errorf("Cost = %.9f, want %.9f", got, tc.want)
			}
		})
	}
}

func TestUnknownModelCostIsUnknownNotZero(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"my-model", "", "gpt-5.9", "llama3.1:8b"} {
		if usd, known := cost(m, llm.Usage{InputTokens: 100}); known || usd != 0 {
			t.Errorf("cost(%q) = %v, %v; want unknown", m, usd, known)
		}
	}
	if usd, known := CostOf(llm.ModelInfo{Name: "free", Price: &llm.Price{}}, llm.Usage{InputTokens: 100}); !known || usd != 0 {
		t.Errorf("a zero price: %v, %v; want a known zero", usd, known)
	}
}

func TestTrackerSumsPerTurnSessionModelAndOverall(t *testing.T) {
	t.Parallel()
	var tr Tracker
	a := tr.Record("s1", info("gpt-4o"), llm.Usage{InputTokens: 1000, OutputTokens: 100})
	tr.Record("s1", info("claude-haiku-4-5"), llm.Usage{InputTokens: 2000, OutputTokens: 200})
	tr.Add(Turn{Session: "s2", Model: "gpt-4o", Usage: llm.Usage{InputTokens: 3000, OutputTokens: 300}, CostUSD: (3000*2.5 + 300*10) / 1e6, Known: true})
	u := tr.Record("s2", llm.ModelInfo{Name: "mystery"}, llm.Usage{InputTokens: 5, OutputTokens: 5})

	if !a.Known || !near(a.CostUSD, (1000*2.5+100*10)/1e6) {
		t.Errorf("turn = %+v", a)
	}
	if u.Known {
		t.Error("an unknown model's turn is priced")
	}
	s1 := tr.Session("s1")
	if s1.Turns != 2 || s1.Usage.InputTokens != 3000 || !s1.CostKnown() {
		t.Errorf("s1 = %+v", s1)
	}
	s2 := tr.Session("s2")
	if s2.CostKnown() || s2.UnpricedTurns != 1 || s2.UnpricedUsage.InputTokens != 5 || s2.Usage.InputTokens != 3005 {
		t.Errorf("s2 = %+v", s2)
	}
	if !near(s2.CostUSD, (3000*2.5+300*10)/1e6) {
		t.Errorf("s2 cost %v counts the unpriced turn", s2.CostUSD)
	}
	if m := tr.Model("gpt-4o"); m.Turns != 2 || m.Usage.OutputTokens != 400 {
		t.Errorf("per model = %+v", m)
	}
	total := tr.Total()
	if total.Turns != 4 || total.Usage.Total() != 6610 || total.CostKnown() {
		t.Errorf("total = %+v", total)
	}
	if !near(total.CostUSD, s1.CostUSD+s2.CostUSD) {
		t.Errorf("total cost %v != sum of sessions %v", total.CostUSD, s1.CostUSD+s2.CostUSD)
	}
	if got := fmt.Sprint(tr.Sessions()); got != "[s1 s2]" {
		t.Errorf("sessions = %s", got)
	}
	if (tr.Session("none") != Totals{}) {
		t.Error("an unknown session has totals")
	}
}

func TestTrackerIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	var tr Tracker
	mini := info("gpt-5-mini")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 500 {
				tr.Record(fmt.Sprintf("s%d", i%3), mini, llm.Usage{InputTokens: 10, OutputTokens: 1})
			}
		})
	}
	wg.Wait()
	total := tr.Total()
	if total.Turns != 4000 || total.Usage.InputTokens != 40_000 {
		t.Fatalf("total = %+v", total)
	}
	if !near(total.CostUSD, 4000*(10*0.25+1*2.0)/1e6) {
		t.Fatalf("cost = %v", total.CostUSD)
	}
}
