package catalog_test

import (
	"fmt"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

func ExampleLookup() {
	info, ok := catalog.Lookup("claude-sonnet-4-5-20250929")
	fmt.Println(ok, info.Provider, info.ContextWindow, info.MaxOutputTokens, info.InputBudget())

	_, ok = catalog.Lookup("my-finetune")
	fmt.Println(ok)
	// Output:
	// true anthropic 200000 64000 140000
	// false
}

func ExampleCatalog_Register() {
	// An agent running qwen2.5 on Ollama with num_ctx=16384 says so on its
	// own catalog, leaving the process-wide one alone.
	c := catalog.Default().Clone()
	c.Register(llm.ModelInfo{Provider: "ollama", Name: "qwen2.5", ContextWindow: 16384, MaxOutputTokens: 4096})
	info, _ := c.Lookup("qwen2.5:7b")
	fmt.Println(info.ContextWindow, info.InputBudget())
	// Output:
	// 16384 11469
}
