package main

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	sredis "github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sqlite"
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

// openStore opens the store a --store DSN names, as the agcore command
// does: sqlite:PATH (or a bare path), file:DIR, memory:, postgres://…,
// redis://…. Empty means $AGCORE_HOME/agcore.db (~/.agcore by default).
func openStore(ctx context.Context, dsn string) (session.Store, func() error, error) {
	noop := func() error { return nil }
	switch {
	case dsn == "" || dsn == "sqlite" || dsn == "sqlite:":
		home := os.Getenv("AGCORE_HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return nil, nil, err
			}
			home = filepath.Join(h, ".agcore")
		}
		return openSQLite(ctx, filepath.Join(home, "agcore.db"))
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "file:"):
		fs, err := filestore.Open(strings.TrimPrefix(dsn, "file:"))
		if err != nil {
			return nil, nil, err
		}
		return fs, fs.Close, nil
	case dsn == "memory:" || dsn == "memory":
		return memstore.New(), noop, nil
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		pg, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("store %s: %w", redact(dsn), scrub(err, dsn))
		}
		return pg, pg.Close, nil
	case strings.HasPrefix(dsn, "redis://") || strings.HasPrefix(dsn, "rediss://"):
		rs, err := sredis.Open(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("store %s: %w", redact(dsn), scrub(err, dsn))
		}
		return rs, rs.Close, nil
	case strings.Contains(dsn, "://"):
		return nil, nil, fmt.Errorf("store %q: unknown scheme (sqlite:PATH, file:DIR, memory:, postgres://, redis://)", redact(dsn))
	default:
		return openSQLite(ctx, dsn)
	}
}

func openSQLite(ctx context.Context, path string) (session.Store, func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("store sqlite:%s: %w", path, err)
	}
	return st, st.Close, nil
}

// redact hides a URL's password.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// scrub replaces the raw DSN in an error with its redacted form.
func scrub(err error, dsn string) error {
	if msg := err.Error(); strings.Contains(msg, dsn) {
		return fmt.Errorf("%s", strings.ReplaceAll(msg, dsn, redact(dsn)))
	}
	return err
}
