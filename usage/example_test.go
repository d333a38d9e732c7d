package usage_test

import (
	"fmt"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/usage"
)

func ExampleCostOf() {
	c := catalog.Default()
	// 120k input tokens of which 100k came from the prompt cache.
	u := llm.Usage{InputTokens: 120_000, CachedInputTokens: 100_000, OutputTokens: 800}
	info, _ := c.LookupFor("anthropic", "claude-sonnet-4-5-20250929")
	usd, known := usage.CostOf(info, u)
	fmt.Printf("$%.4f %v\n", usd, known)

	// The same model through a compatible server has no price there.
	info, _ = c.LookupFor("compatible", "claude-sonnet-4-5-20250929")
	_, known = usage.CostOf(info, u)
	fmt.Println(known)
	// Output:
	// $0.1020 true
	// false
}

func ExampleTracker() {
	c := catalog.Default()
	mini, _ := c.LookupFor("openai", "gpt-5-mini")
	llama, _ := c.LookupFor("ollama", "llama3.1:8b") // no price: unknown cost

	var t usage.Tracker
	t.Record("session-1", mini, llm.Usage{InputTokens: 20_000, CachedInputTokens: 16_000, OutputTokens: 500})
	t.Record("session-1", mini, llm.Usage{InputTokens: 24_000, CachedInputTokens: 20_000, OutputTokens: 700})
	t.Record("session-2", llama, llm.Usage{InputTokens: 3_000, OutputTokens: 200})

	s := t.Session("session-1")
	fmt.Printf("session-1: %d turns, %d tokens, $%.5f, complete=%v\n", s.Turns, s.Usage.Total(), s.CostUSD, s.CostKnown())
	all := t.Total()
	fmt.Printf("all: %d turns, $%.5f, complete=%v\n", all.Turns, all.CostUSD, all.CostKnown())
	// Output:
	// session-1: 2 turns, 45200 tokens, $0.00530, complete=true
	// all: 3 turns, $0.00530, complete=false
}
