package catalog_test

import (
	"fmt"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

func Example() {
	c := catalog.Default() // a new catalog with the built-in entries

	info, ok := c.Lookup("claude-sonnet-4-5-20250929")
	fmt.Println(ok, info.Provider, info.ContextWindow, info.MaxOutputTokens, info.InputBudget())
	fmt.Printf("$%.4f\n", info.Price.Cost(llm.Usage{InputTokens: 120_000, CachedInputTokens: 100_000, OutputTokens: 800}))

	_, ok = c.Lookup("my-finetune")
	fmt.Println(ok)

	// Say what you know: the window you run a local model with, and what a
	// server charges. Other catalogs, Default's included, do not change.
	c.Add(
		llm.ModelInfo{Provider: "ollama", Name: "qwen2.5", ContextWindow: 16384, MaxOutputTokens: 4096, Price: &llm.Price{}},
		llm.ModelInfo{Provider: "vllm", Name: "my-finetune", ContextWindow: 32768},
	)
	info, _ = c.LookupFor("ollama", "qwen2.5:7b")
	fmt.Println(info.ContextWindow, info.InputBudget(), info.Price.Cost(llm.Usage{InputTokens: 1000}))
	info, ok = c.Lookup("my-finetune-v2")
	fmt.Println(ok, info.Provider, info.ContextWindow, info.Price == nil)
	// Output:
	// true anthropic 200000 64000 140000
	// $0.1020
	// false
	// 16384 11469 0
	// true vllm 32768 true
}

func ExampleCatalog_LookupFor() {
	c := catalog.Default()
	// gpt-4o sold by OpenAI has OpenAI's price.
	info, _ := c.LookupFor("openai", "gpt-4o")
	fmt.Println(info.ContextWindow, info.Price != nil)
	// The same model name on an OpenAI-compatible server keeps its limits,
	// but not OpenAI's price: its cost is unknown until you add one.
	info, _ = c.LookupFor("openrouter", "openai/gpt-4o")
	fmt.Println(info.ContextWindow, info.Price != nil)
	c.Add(llm.ModelInfo{Provider: "openrouter", Name: "gpt-4o", Price: &llm.Price{Input: 2.5, Output: 10}})
	info, _ = c.LookupFor("openrouter", "openai/gpt-4o")
	fmt.Println(info.ContextWindow, info.Price != nil)
	// Output:
	// 128000 true
	// 128000 false
	// 128000 true
}
