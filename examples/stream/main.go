// Command stream streams one answer from the provider its environment
// names, printing the text as it arrives (thinking, when the model shows
// it, goes to stderr).
//
//	OPENAI_API_KEY=sk-...  go run ./examples/stream "Say hello in five words"
//	DEEPSEEK_API_KEY=sk-... go run ./examples/stream -model deepseek-reasoner "Why is the sky blue?"
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/stream "Hi"
//	GEMINI_API_KEY=AIza... go run ./examples/stream -model gemini-2.5-pro "Hi"
//	OPENAI_BASE_URL=http://localhost:11434/v1 go run ./examples/stream -model llama3.2 "Hi"   # Ollama, or any local server
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
)

func main() {
	model := flag.String("model", "", "model id (default: the provider's usual small model)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "Say hello in five words."
	}
	if err := run(ctx, *model, prompt, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// pickModel chooses the provider from the environment, in this order:
// OpenAI (or any OpenAI-compatible server named by OPENAI_BASE_URL), then
// DeepSeek, then Anthropic, then Gemini. Each adapter reads its own key and base URL variables.
func pickModel(model string) (llm.Model, error) {
	switch {
	case os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "":
		return openai.New(openai.WithModel(or(model, "gpt-4o-mini"))), nil
	case os.Getenv("DEEPSEEK_API_KEY") != "":
		return openai.New(openai.DeepSeek(), openai.WithModel(or(model, "deepseek-chat"))), nil
	case os.Getenv("ANTHROPIC_API_KEY") != "" || os.Getenv("ANTHROPIC_BASE_URL") != "":
		return anthropic.New(anthropic.WithModel(or(model, anthropic.DefaultModel))), nil
	case os.Getenv("GEMINI_API_KEY") != "" || os.Getenv("GOOGLE_API_KEY") != "":
		return gemini.New(gemini.WithModel(or(model, gemini.DefaultModel))), nil
	}
	return nil, errors.New("no provider configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server), DEEPSEEK_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY")
}

func run(ctx context.Context, model, prompt string, out, diag io.Writer) error {
	m, err := pickModel(model)
	if err != nil {
		return err
	}
	info := m.Info()
	fmt.Fprintf(diag, "[%s %s]\n", info.Provider, info.Name)
	req := &llm.Request{Messages: []llm.Message{llm.UserText(prompt)}}
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return err
		}
		switch ev.Type {
		case llm.EventTextDelta:
			fmt.Fprint(out, ev.Delta)
		case llm.EventThinkingDelta:
			fmt.Fprint(diag, ev.Delta)
		case llm.EventComplete:
			u := ev.Response.Usage
			fmt.Fprintln(out)
			fmt.Fprintf(diag, "[%s; %d tokens in (%d cached), %d out]\n", ev.Response.FinishReason, u.InputTokens, u.CachedInputTokens, u.OutputTokens)
		}
	}
	return nil
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
