package catalog

import (
	"fmt"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
)

func TestLookupMatchesFamilyByPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, model, want string // want: provider/window/maxout, "" for unknown
	}{
		{"exact name", "gpt-4o", "openai/128000/16384"},
		{"longest prefix wins", "gpt-4o-mini", "openai/128000/16384"},
		{"dated snapshot", "gpt-4o-2024-08-06", "openai/128000/16384"},
		{"dated snapshot of a longer name", "gpt-4.1-mini-2025-04-14", "openai/1047576/32768"},
		{"gpt-5 family", "gpt-5-mini-2025-08-07", "openai/400000/128000"},
		{"point release has its own entry", "gpt-5.1", "openai/400000/128000"},
		{"o-series", "o3-mini-2025-01-31", "openai/200000/100000"},
		{"case does not matter", "GPT-4O", "openai/128000/16384"},
		{"routing prefix", "openai/gpt-4.1", "openai/1047576/32768"},
		{"claude dated id", "claude-sonnet-4-5-20250929", "anthropic/200000/64000"},
		{"claude -0 alias", "claude-opus-4-0", "anthropic/200000/32000"},
		{"claude 4 dated", "claude-opus-4-20250514", "anthropic/200000/32000"},
		{"claude 4.1 not 4", "claude-opus-4-1-20250805", "anthropic/200000/32000"},
		{"claude 4.5 not 4", "claude-opus-4-5-20251101", "anthropic/200000/64000"},
		{"claude 1M", "claude-opus-4-6", "anthropic/1000000/128000"},
		{"claude latest alias", "claude-3-7-sonnet-latest", "anthropic/200000/64000"},
		{"claude 3.5", "claude-3-5-haiku-20241022", "anthropic/200000/8192"},
		{"bedrock id", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic/200000/64000"},
		{"vertex id", "claude-sonnet-4@20250514", "anthropic/200000/64000"},
		{"deepseek", "deepseek-reasoner", "deepseek/128000/65536"},
		{"ollama tag", "qwen2.5:7b", "ollama/32768/8192"},
		{"ollama quantized tag", "llama3.1:70b-instruct-q4_K_M", "ollama/131072/8192"},
		{"ollama tag with its own entry", "gemma3:1b", "ollama/32768/8192"},
		{"ollama namespace", "library/mistral:7b", "ollama/32768/8192"},
		{"llama3 is not llama3.1", "llama3:8b", "ollama/8192/2048"},
		{"unknown model", "my-local-model", ""},
		{"unknown point release is not guessed", "gpt-5.9", ""},
		{"a prefix without separator does not match", "gpt-4omni", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			info, ok := Default().Lookup(tc.model)
			got := ""
			if ok {
				got = fmt.Sprintf("%s/%d/%d", info.Provider, info.ContextWindow, info.MaxOutputTokens)
				if info.Name != tc.model {
					t.Errorf("Name = %q, want the id as given %q", info.Name, tc.model)
				}
			}
			if got != tc.want {
				t.Errorf("Lookup(%q) = %q, want %q", tc.model, got, tc.want)
			}
		})
	}
}

func TestInputBudgetOfEveryEntryIsPositiveAndBelowTheWindow(t *testing.T) {
	t.Parallel()
	for _, info := range Default().Models() {
		b := info.InputBudget()
		if b <= 0 || b >= info.ContextWindow {
			t.Errorf("%s: input budget %d for a window of %d", info.Name, b, info.ContextWindow)
		}
		if info.MaxOutputTokens <= 0 || info.MaxOutputTokens > info.ContextWindow {
			t.Errorf("%s: max output %d", info.Name, info.MaxOutputTokens)
		}
	}
}

func TestGPT5InputBudgetRespectsTheInputLimit(t *testing.T) {
	t.Parallel()
	// The API accepts at most 272k input tokens of the 400k window.
	info, _ := Default().Lookup("gpt-5")
	if b := info.InputBudget(); b > 272_000 {
		t.Fatalf("input budget %d exceeds the 272k input limit", b)
	}
}

func TestAddOverridesAndExtends(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Add(llm.ModelInfo{Provider: "ollama", Name: "qwen2.5", ContextWindow: 8192, MaxOutputTokens: 2048})
	if info, _ := c.Lookup("qwen2.5:14b"); info.ContextWindow != 8192 {
		t.Errorf("override not used: window %d", info.ContextWindow)
	}
	c.Add(llm.ModelInfo{Provider: "vllm", Name: "My-Model", ContextWindow: 65536})
	if info, ok := c.Lookup("my-model-v2"); !ok || info.Provider != "vllm" {
		t.Errorf("added model not found by prefix: %+v %v", info, ok)
	}
	if _, ok := Default().Lookup("my-model"); ok {
		t.Error("adding to one catalog changed another")
	}
	if info, _ := Default().Lookup("qwen2.5:14b"); info.ContextWindow != 32768 {
		t.Error("the built-in entries changed")
	}
}

func TestAddIgnoresEntriesWithoutWindowOrPrice(t *testing.T) {
	t.Parallel()
	var c Catalog // the zero value is an empty catalog
	if _, ok := c.Lookup("gpt-4o"); ok || len(c.Models()) != 0 {
		t.Fatal("the zero catalog is not empty")
	}
	c.Add(llm.ModelInfo{Name: "nowindow"}, llm.ModelInfo{ContextWindow: 1000}, llm.ModelInfo{Name: " / ", ContextWindow: 1000})
	if _, ok := c.Lookup("nowindow"); ok {
		t.Error("an entry without a window was added")
	}
	if len(c.Models()) != 0 {
		t.Errorf("entries: %v", c.Models())
	}
	c.Add(llm.ModelInfo{Provider: "openrouter", Name: "gpt-4o", Price: &llm.Price{Input: 3}})
	if info, ok := c.LookupFor("openrouter", "openai/gpt-4o"); !ok || info.Price == nil || info.Price.Input != 3 || info.Known() {
		t.Errorf("a price-only entry: %+v %v", info, ok)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	t.Parallel()
	a := Default()
	a.Add(llm.ModelInfo{Name: "mine", ContextWindow: 2000})
	b := a.Clone()
	b.Add(llm.ModelInfo{Provider: "openai", Name: "gpt-4o", ContextWindow: 1000})
	b.Add(llm.ModelInfo{Name: "mine", ContextWindow: 3000})
	if info, _ := a.Lookup("gpt-4o"); info.ContextWindow != 128_000 {
		t.Error("changing the clone changed the original")
	}
	if info, _ := a.Lookup("mine"); info.ContextWindow != 2000 {
		t.Error("changing the clone changed the original's own entry")
	}
	if info, _ := b.Lookup("mine"); info.ContextWindow != 3000 {
		t.Error("the clone lost its entry")
	}
}

func TestPricesComeWithTheEntries(t *testing.T) {
	t.Parallel()
	c := Default()
	tests := []struct{ model, provider string }{
		{"gpt-4o-2024-08-06", "openai"},
		{"claude-sonnet-4-5-20250929", "anthropic"},
		{"us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic"},
		{"deepseek-reasoner", "deepseek"},
		{"gemini-2.5-flash-preview-09-2025", "google"},
		{"models/gemini-3-pro-preview", "google"},
	}
	for _, tc := range tests {
		info, ok := c.Lookup(tc.model)
		if !ok || info.Price == nil || info.Provider != tc.provider {
			t.Errorf("Lookup(%q) = %+v, %v; want a price from %s", tc.model, info, ok, tc.provider)
		}
	}
	for _, m := range []string{"llama3.1:8b", "chatgpt-4o-latest", "ft:gpt-4o-mini-2024-07-18:org::abc"} {
		if info, _ := c.Lookup(m); info.Price != nil {
			t.Errorf("%s has a price: %+v", m, *info.Price)
		}
	}
	// The returned price is a copy: changing it changes no catalog.
	info, _ := c.Lookup("claude-sonnet-4-5")
	info.Price.Input, info.Price.LongContext.Input = 999, 999
	if again, _ := Default().Lookup("claude-sonnet-4-5"); again.Price.Input != 3 || again.Price.LongContext.Input != 6 {
		t.Errorf("a caller changed the shared table: %+v", *again.Price)
	}
}

func TestBuiltinPricesAreConsistent(t *testing.T) {
	t.Parallel()
	for _, info := range Default().Models() {
		p := info.Price
		if p == nil {
			if info.Provider != "ollama" && info.Name != "chatgpt-4o-latest" {
				t.Errorf("%s (%s) has no price", info.Name, info.Provider)
			}
			continue
		}
		if p.Input <= 0 || p.Output < p.Input || p.CacheRead <= 0 || p.CacheRead > p.Input || p.CacheWrite < p.Input {
			t.Errorf("%s: implausible price %+v", info.Name, p)
		}
	}
}

// TestLookupForDropsOtherProvidersPrices: a model served by a local or
// compatible server keeps its limits but is not billed at a cloud price,
// unless an entry prices it for that server.
func TestLookupForDropsOtherProvidersPrices(t *testing.T) {
	t.Parallel()
	c := Default()
	tests := []struct {
		rule, provider, model string
		priced                bool
	}{
		{"the seller's own price", "openai", "gpt-4o-mini", true},
		{"deepseek on deepseek", "deepseek", "deepseek-chat", true},
		{"gpt through openrouter", "openrouter", "openai/gpt-4o-mini", false},
		{"gpt on a compatible server", "compatible", "gpt-4o", false},
		{"claude through a compatible server", "compatible", "claude-sonnet-4-5", false},
		{"deepseek on ollama", "ollama", "deepseek-chat", false},
		{"qwen on ollama has no price at all", "ollama", "qwen2.5:7b", false},
	}
	for _, tc := range tests {
		info, ok := c.LookupFor(tc.provider, tc.model)
		if !ok || !info.Known() {
			t.Errorf("%s: limits lost: %+v", tc.rule, info)
		}
		if info.Provider != tc.provider || info.Name != tc.model {
			t.Errorf("%s: provider/name = %s/%s", tc.rule, info.Provider, info.Name)
		}
		if (info.Price != nil) != tc.priced {
			t.Errorf("%s: price %v, want priced=%v", tc.rule, info.Price, tc.priced)
		}
	}

	// The user says what a server charges.
	c.Add(
		llm.ModelInfo{Provider: "openrouter", Name: "gpt-4o-mini", ContextWindow: 128_000, Price: &llm.Price{Input: 0.2, Output: 0.7}},
		llm.ModelInfo{Provider: "ollama", Name: "qwen2.5", ContextWindow: 16_384, Price: &llm.Price{}},
		llm.ModelInfo{Name: "shared", ContextWindow: 1000, Price: &llm.Price{Input: 1}},
	)
	if info, _ := c.LookupFor("openrouter", "openai/gpt-4o-mini"); info.Price == nil || info.Price.Input != 0.2 {
		t.Errorf("openrouter's own price not used: %+v", info)
	}
	if info, _ := c.LookupFor("openai", "gpt-4o-mini"); info.Price == nil || info.Price.Input != 0.15 {
		t.Errorf("openai's price changed: %+v", info)
	}
	if info, _ := c.LookupFor("ollama", "qwen2.5:7b"); info.Price == nil || info.Price.Cost(llm.Usage{InputTokens: 1e6}) != 0 || info.ContextWindow != 16_384 {
		t.Errorf("a free local model: %+v", info)
	}
	if info, _ := c.LookupFor("vllm", "shared-v2"); info.Price == nil || info.Price.Input != 1 {
		t.Errorf("an entry without provider prices everywhere: %+v", info)
	}
}

func TestNormalizeAndInFamily(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" GPT-4o ":           "gpt-4o",
		"openai/gpt-4.1":     "gpt-4.1",
		"library/qwen2.5:7b": "qwen2.5:7b",
		"us.anthropic.claude-3-7-sonnet-20250219-v1:0": "claude-3-7-sonnet-20250219-v1:0",
		"ft:gpt-4o-mini:org::x":                        "ft:gpt-4o-mini:org::x",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	tests := []struct {
		model  string
		family string
		want   bool
	}{
		{"o3-mini", "o3", true},
		{"o1x", "o1", false},
		{"gpt-4.1", "gpt-4", true},
		{"gpt-50", "gpt-5", false},
		{"openrouter/openai/gpt-5.1", "gpt-5", true},
		{"ft:gpt-4o-mini:org::x", "gpt-4o", true},
		{"gpt-4omni", "gpt-4o", false},
	}
	for _, tc := range tests {
		if got := InFamily(tc.model, tc.family); got != tc.want {
			t.Errorf("InFamily(%q, %q) = %v", tc.model, tc.family, got)
		}
	}
}

func TestDefaultIsCheapAndFresh(t *testing.T) {
	Default() // build the shared table
	if n := testing.AllocsPerRun(100, func() { Default() }); n > 1 {
		t.Errorf("Default allocates %v times", n)
	}
	a, b := Default(), Default()
	a.Add(llm.ModelInfo{Name: "x", ContextWindow: 1})
	if _, ok := b.Lookup("x"); ok {
		t.Error("two Default catalogs share entries")
	}
}

func TestCatalogIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	c := Default()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				c.Add(llm.ModelInfo{Name: fmt.Sprintf("m%d-%d", i, j), ContextWindow: 1000 + j})
				c.Lookup("claude-sonnet-4-5-20250929")
				c.LookupFor("ollama", fmt.Sprintf("m%d-%d:tag", i, j))
			}
		})
	}
	wg.Wait()
	if _, ok := c.Lookup("m3-7:tag"); !ok {
		t.Error("a concurrently added entry is missing")
	}
}
