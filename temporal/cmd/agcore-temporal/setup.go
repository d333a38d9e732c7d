package main

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores" // every kind of store --store names
)

// kind is a provider the worker can build an adapter for: the same names,
// key variables and base-URL variables as the agcore command.
type kind struct {
	name, keyEnv, altKeyEnv, baseEnv, defaultModel, wire string
	preset                                               func() openai.Option
}

var kinds = []kind{
	{name: "openai", keyEnv: "OPENAI_API_KEY", baseEnv: "OPENAI_BASE_URL", defaultModel: "gpt-4.1-mini", wire: "openai"},
	{name: "openai-responses", keyEnv: "OPENAI_API_KEY", baseEnv: "OPENAI_BASE_URL", defaultModel: "gpt-5-mini", wire: "openai-responses"},
	{name: "anthropic", keyEnv: "ANTHROPIC_API_KEY", baseEnv: "ANTHROPIC_BASE_URL", defaultModel: "claude-sonnet-4-5", wire: "anthropic"},
	{name: "gemini", keyEnv: "GEMINI_API_KEY", altKeyEnv: "GOOGLE_API_KEY", baseEnv: "GOOGLE_GEMINI_BASE_URL", defaultModel: "gemini-2.5-flash", wire: "gemini"},
	{name: "deepseek", keyEnv: "DEEPSEEK_API_KEY", baseEnv: "DEEPSEEK_BASE_URL", defaultModel: "deepseek-chat", wire: "openai", preset: openai.DeepSeek},
	{name: "ollama", defaultModel: "llama3.2", wire: "openai", preset: openai.Ollama},
	{name: "vllm", keyEnv: "VLLM_API_KEY", wire: "openai", preset: openai.VLLM},
	{name: "openrouter", keyEnv: "OPENROUTER_API_KEY", wire: "openai", preset: openai.OpenRouter},
	{name: "groq", keyEnv: "GROQ_API_KEY", wire: "openai", preset: openai.Groq},
	{name: "xai", keyEnv: "XAI_API_KEY", wire: "openai", preset: openai.XAI},
	{name: "qwen", keyEnv: "DASHSCOPE_API_KEY", wire: "openai", preset: openai.Qwen},
	{name: "moonshot", keyEnv: "MOONSHOT_API_KEY", wire: "openai", preset: openai.Moonshot},
	{name: "compatible", keyEnv: "OPENAI_API_KEY", baseEnv: "OPENAI_BASE_URL", wire: "openai"},
	{name: "demo", defaultModel: "scripted-demo", wire: "demo"},
}

func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// newModel builds the worker's adapter for provider and model; the key
// comes from the provider's environment variable, the base URL from
// baseURL or the provider's base-URL variable. It returns the model and
// the name it is registered under.
func newModel(provider, model, baseURL string) (llm.Model, string, error) {
	var k kind
	for _, c := range kinds {
		if c.name == provider {
			k = c
		}
	}
	if k.name == "" {
		return nil, "", fmt.Errorf("unknown provider %q (one of %s)", provider, kindNames())
	}
	if model == "" {
		model = k.defaultModel
	}
	if model == "" {
		return nil, "", fmt.Errorf("provider %s needs --model", provider)
	}
	if k.wire == "demo" {
		return demoModel{}, model, nil
	}
	key := os.Getenv(k.keyEnv)
	if key == "" && k.altKeyEnv != "" {
		key = os.Getenv(k.altKeyEnv)
	}
	if baseURL == "" && k.baseEnv != "" {
		baseURL = os.Getenv(k.baseEnv)
	}
	switch k.wire {
	case "anthropic":
		return anthropic.New(anthropic.WithAPIKey(key), anthropic.WithBaseURL(baseURL), anthropic.WithModel(model)), model, nil
	case "gemini":
		return gemini.New(gemini.WithAPIKey(key), gemini.WithBaseURL(baseURL), gemini.WithModel(model)), model, nil
	case "openai-responses":
		return responses.New(responses.WithAPIKey(key), responses.WithBaseURL(baseURL), responses.WithModel(model)), model, nil
	}
	opts := []openai.Option{}
	if k.preset != nil {
		opts = append(opts, k.preset())
	}
	opts = append(opts, openai.WithAPIKey(key), openai.WithModel(model))
	if baseURL != "" {
		opts = append(opts, openai.WithBaseURL(baseURL))
	}
	return openai.New(opts...), model, nil
}

// demoModel is the offline demo: it answers every request with one short
// text, so a worker can be tried without a key.
type demoModel struct{}

func (demoModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Text()
	}
	text := "This is agcore's offline demo model, answering from a Temporal worker. You said: " + last
	return &llm.Response{Model: "scripted-demo", Message: llm.AssistantText(text), FinishReason: llm.FinishStop}, nil
}

func (d demoModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, _ := d.Generate(ctx, req)
	return llm.StreamOf(resp)
}

func (demoModel) Info() llm.ModelInfo { return llm.ModelInfo{Provider: "demo", Name: "scripted-demo"} }

// openStore opens the store a --store URL names with session.Open, as the
// agcore command does: sqlite:PATH, file:DIR, memory:, postgres://…,
// redis://…; empty means $AGCORE_HOME/agcore.db (~/.agcore by default).
// Its error is one line naming the store without its password.
func openStore(ctx context.Context, dsn string) (session.Store, func() error, error) {
	st, err := session.Open(ctx, dsn, session.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}
