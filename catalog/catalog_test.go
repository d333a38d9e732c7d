package catalog

import (
	"fmt"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
)

func TestLookupMatchesFamilyByPrefix(t *testing.T) {
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
			info, ok := Lookup(tc.model)
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
	for _, info := range New().Models() {
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
	// The API accepts at most 272k input tokens of the 400k window.
	info, _ := Lookup("gpt-5")
	if b := info.InputBudget(); b > 272_000 {
		t.Fatalf("input budget %d exceeds the 272k input limit", b)
	}
}

func TestRegisterOverridesAndExtends(t *testing.T) {
	c := New()
	c.Register(llm.ModelInfo{Provider: "ollama", Name: "qwen2.5", ContextWindow: 8192, MaxOutputTokens: 2048})
	if info, _ := c.Lookup("qwen2.5:14b"); info.ContextWindow != 8192 {
		t.Errorf("override not used: window %d", info.ContextWindow)
	}
	c.Register(llm.ModelInfo{Provider: "vllm", Name: "My-Model", ContextWindow: 65536})
	if info, ok := c.Lookup("my-model-v2"); !ok || info.Provider != "vllm" {
		t.Errorf("registered model not found by prefix: %+v %v", info, ok)
	}
	if _, ok := Default().Lookup("my-model"); ok {
		t.Error("registering on a new catalog changed the default")
	}
	if info, _ := Lookup("qwen2.5:14b"); info.ContextWindow != 32768 {
		t.Error("the default catalog changed")
	}
}

func TestRegisterIgnoresUnknownWindows(t *testing.T) {
	c := &Catalog{}
	c.Register(llm.ModelInfo{Name: "nowindow"})
	c.Register(llm.ModelInfo{ContextWindow: 1000})
	if _, ok := c.Lookup("nowindow"); ok {
		t.Error("an entry without a window was registered")
	}
	if len(c.Models()) != 0 {
		t.Errorf("entries: %v", c.Models())
	}
}

func TestCloneIsIndependent(t *testing.T) {
	a := New()
	b := a.Clone()
	b.Register(llm.ModelInfo{Name: "gpt-4o", ContextWindow: 1000})
	if info, _ := a.Lookup("gpt-4o"); info.ContextWindow != 128_000 {
		t.Error("changing the clone changed the original")
	}
}

func TestCatalogIsSafeForConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				c.Register(llm.ModelInfo{Name: fmt.Sprintf("m%d-%d", i, j), ContextWindow: 1000 + j})
				c.Lookup("claude-sonnet-4-5-20250929")
				c.Lookup(fmt.Sprintf("m%d-%d:tag", i, j))
			}
		})
	}
	wg.Wait()
	if _, ok := c.Lookup("m3-7:tag"); !ok {
		t.Error("a concurrently registered entry is missing")
	}
}
