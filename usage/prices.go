package usage

import (
	"strings"
	"sync"

	"github.com/agcore/agcore/llm"
)

// PricesAsOf is the date the built-in prices were taken from the providers'
// pricing pages.
const PricesAsOf = "2026-11-30"

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input      float64 // uncached input
	Output     float64 // output, reasoning included
	CacheRead  float64 // input served from the prompt cache
	CacheWrite float64 // input written to the prompt cache
	// LongContext, when not nil, is the price of a call whose input
	// (cached tokens included) exceeds LongContextThreshold tokens.
	LongContext          *Price
	LongContextThreshold int
}

// Cost returns the price of one call's usage. llm.Usage.InputTokens
// includes the cached and cache-creation tokens, so the uncached input is
// InputTokens − CachedInputTokens − CacheCreationTokens.
func (p Price) Cost(u llm.Usage) float64 {
	if p.LongContext != nil && u.InputTokens > p.LongContextThreshold {
		p = *p.LongContext
	}
	uncached := max(0, u.InputTokens-u.CachedInputTokens-u.CacheCreationTokens)
	return (float64(uncached)*p.Input +
		float64(u.CachedInputTokens)*p.CacheRead +
		float64(u.CacheCreationTokens)*p.CacheWrite +
		float64(u.OutputTokens)*p.Output) / 1e6
}

// PriceTable maps model ids to prices. The zero value is an empty table;
// a PriceTable is safe for concurrent use.
type PriceTable struct {
	mu      sync.RWMutex
	entries map[string]Price
}

// NewPriceTable returns a table holding the built-in prices.
func NewPriceTable() *PriceTable {
	t := &PriceTable{}
	for name, p := range builtin {
		t.Set(name, p)
	}
	return t
}

var defaultTable = NewPriceTable()

// DefaultPrices returns the process-wide table [Cost] uses.
func DefaultPrices() *PriceTable { return defaultTable }

// Cost prices u for model with the default table. known is false when the
// model has no price: the cost is then unknown, not zero.
func Cost(model string, u llm.Usage) (usd float64, known bool) {
	return defaultTable.Cost(model, u)
}

// Cost prices u for model. known is false when the model has no price.
func (t *PriceTable) Cost(model string, u llm.Usage) (usd float64, known bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// Set adds or replaces the price of model (compared without regard to
// case). Like a built-in entry it also prices every id that extends model
// after "-", ":" or "@" (dated snapshots), unless a longer name is set.
func (t *PriceTable) Set(model string, p Price) {
	name := strings.ToLower(strings.TrimSpace(model))
	if name == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = map[string]Price{}
	}
	t.entries[name] = p
}

// Lookup returns model's price: the entry of the longest name that model
// equals or extends after "-", ":" or "@", ignoring case and a routing
// prefix ("openai/", "anthropic." on Bedrock).
func (t *PriceTable) Lookup(model string) (Price, bool) {
	m := normalize(model)
	t.mu.RLock()
	defer t.mu.RUnlock()
	if p, ok := t.entries[m]; ok {
		return p, true
	}
	for i := len(m) - 1; i > 0; i-- {
		switch m[i] {
		case '-', ':', '@':
			if p, ok := t.entries[m[:i]]; ok {
				return p, true
			}
		}
	}
	return Price{}, false
}

func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "claude-"); i > 0 && strings.Contains(m[:i], "anthropic") {
		m = m[i:]
	}
	return m
}

// OpenAI bills cache writes as ordinary input.
func openai(in, cached, out float64) Price {
	return Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
}

// Anthropic bills a 5-minute cache write at 1.25× input and a read at 0.1×;
// llm.Usage does not say which cache duration was written, so writes are
// priced at the 5-minute rate (a 1-hour write costs 2× input).
func anthropic(in, out float64) Price {
	return Price{Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
}

// DeepSeek caches automatically; a miss is billed as ordinary input.
func deepseek(miss, hit, out float64) Price {
	return Price{Input: miss, Output: out, CacheRead: hit, CacheWrite: miss}
}

// sonnetLong is Claude Sonnet 4 and 4.5 with the 1M-token beta: a call with
// more than 200k input tokens is billed at $6/$22.50 for all its tokens.
var sonnetLong = func() Price {
	p := anthropic(3, 15)
	long := anthropic(6, 22.5)
	p.LongContext, p.LongContextThreshold = &long, 200_000
	return p
}()

// builtin is the price table, USD per million tokens, taken on
// PricesAsOf from: developers.openai.com/api/docs/pricing (and the
// per-model pages), platform.claude.com/docs/en/about-claude/pricing, and
// api-docs.deepseek.com/quick_start/pricing.
var builtin = map[string]Price{
	// OpenAI: input, cached input, output.
	"gpt-4o":            openai(2.50, 1.25, 10.00),
	"gpt-4o-mini":       openai(0.15, 0.075, 0.60),
	"gpt-4.1":           openai(2.00, 0.50, 8.00),
	"gpt-4.1-mini":      openai(0.40, 0.10, 1.60),
	"gpt-4.1-nano":      openai(0.10, 0.025, 0.40),
	"gpt-5":             openai(1.25, 0.125, 10.00),
	"gpt-5-mini":        openai(0.25, 0.025, 2.00),
	"gpt-5-nano":        openai(0.05, 0.005, 0.40),
	"gpt-5.1":           openai(1.25, 0.125, 10.00),
	"gpt-5.2":           openai(1.75, 0.175, 14.00),
	"gpt-5-chat-latest": openai(1.25, 0.125, 10.00),
	"o1":                openai(15.00, 7.50, 60.00),
	"o3":                openai(2.00, 0.50, 8.00),
	"o3-mini":           openai(1.10, 0.55, 4.40),
	"o4-mini":           openai(1.10, 0.275, 4.40),
	"gpt-4-turbo":       openai(10.00, 10.00, 30.00), // no prompt caching
	"gpt-3.5-turbo":     openai(0.50, 0.50, 1.50),

	// Anthropic: input, output (cache prices follow from input).
	"claude-opus-4-8":   anthropic(5, 25),
	"claude-opus-4-7":   anthropic(5, 25),
	"claude-opus-4-6":   anthropic(5, 25),
	"claude-opus-4-5":   anthropic(5, 25),
	"claude-opus-4-1":   anthropic(15, 75),
	"claude-opus-4":     anthropic(15, 75),
	"claude-sonnet-4-6": anthropic(3, 15),
	"claude-sonnet-4-5": sonnetLong,
	"claude-sonnet-4":   sonnetLong,
	"claude-3-7-sonnet": anthropic(3, 15),
	"claude-3-5-sonnet": anthropic(3, 15),
	"claude-haiku-4-5":  anthropic(1, 5),
	"claude-3-5-haiku":  anthropic(0.80, 4),

	// DeepSeek: cache miss, cache hit, output. deepseek-chat and
	// deepseek-reasoner at their last published (V3.2) price. The V4
	// names bill off-peak hours at half; the table holds the peak price,
	// an upper bound.
	"deepseek-chat":     deepseek(0.28, 0.028, 0.42),
	"deepseek-reasoner": deepseek(0.28, 0.028, 0.42),
	"deepseek-flash":    deepseek(0.30, 0.006, 1.20),
	"deepseek-v4-flash": deepseek(0.30, 0.006, 1.20),
	"deepseek-v4-pro":   deepseek(1.32, 0.044, 3.96),
}
