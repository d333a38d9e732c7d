package registry_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agcore/agcore/llm"
	_ "github.com/agcore/agcore/provider/builtin" // every adapter agcore ships registers itself
	"github.com/agcore/agcore/provider/registry"
)

// A program that lets its user pick any provider by name, as the agcore
// command's --provider does: the key and base URL come from the
// provider's variables (DEEPSEEK_API_KEY, OLLAMA needs none, ...).
func ExampleNew() {
	model, err := registry.New(os.Getenv("MY_PROVIDER"), registry.Config{Model: os.Getenv("MY_MODEL")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // unknown provider, no key, no model: nothing was sent
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("Hello")}})
	if err == nil {
		fmt.Println(resp.Message.Text())
	}
}

// The table drives help texts: every provider, its key variable and
// default model.
func ExampleAll() {
	for _, p := range registry.All()[:3] {
		fmt.Printf("%-16s %-18s %s\n", p.Name, p.KeyEnv, p.DefaultModel)
	}
	// Output:
	// openai           OPENAI_API_KEY     gpt-4.1-mini
	// openai-responses OPENAI_API_KEY     gpt-5-mini
	// anthropic        ANTHROPIC_API_KEY  claude-sonnet-4-6
}
