package openai

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

// clearEnv unsets every variable the presets read.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENROUTER_API_KEY", "DASHSCOPE_API_KEY", "MOONSHOT_API_KEY", "GROQ_API_KEY", "XAI_API_KEY"} {
		t.Setenv(k, "")
	}
}

func TestConfigurationSources(t *testing.T) {
	tests := []struct {
		name               string
		env                map[string]string
		opts               []Option
		provider, endpoint string
		key                string
		noKey              string // the variable a call's "no API key" error names
	}{
		{name: "OpenAI defaults", provider: "openai", endpoint: "https://api.openai.com/v1/chat/completions", noKey: "OPENAI_API_KEY"},
		{name: "OpenAI from the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://proxy:8080/v1/"},
			provider: "compatible", endpoint: "http://proxy:8080/v1/chat/completions", key: "sk-env"},
		{name: "options beat the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://proxy/v1"},
			opts: []Option{WithAPIKey("sk-opt"), WithBaseURL("https://gw.example/openai/v1")}, provider: "compatible", endpoint: "https://gw.example/openai/v1/chat/completions", key: "sk-opt"},
		{name: "an explicit empty key stops the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env"}, opts: []Option{WithAPIKey("")},
			provider: "openai", endpoint: "https://api.openai.com/v1/chat/completions", noKey: "OPENAI_API_KEY"},
		{name: "a query string is kept (Azure's api-version)", opts: []Option{WithBaseURL("https://r.openai.azure.com/openai/v1?api-version=preview")},
			provider: "compatible", endpoint: "https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview"},
		{name: "DeepSeek defaults", env: map[string]string{"OPENAI_API_KEY": "sk-openai", "DEEPSEEK_API_KEY": "sk-ds"}, opts: []Option{DeepSeek()},
			provider: "deepseek", endpoint: "https://api.deepseek.com/chat/completions", key: "sk-ds"},
		{name: "DeepSeek from the environment", env: map[string]string{"DEEPSEEK_BASE_URL": "https://api.deepseek.com/v1"}, opts: []Option{DeepSeek()},
			provider: "deepseek", endpoint: "https://api.deepseek.com/v1/chat/completions", noKey: "DEEPSEEK_API_KEY"},
		{name: "Ollama needs no key", env: map[string]string{"OPENAI_API_KEY": "sk-openai"}, opts: []Option{Ollama()},
			provider: "ollama", endpoint: "http://localhost:11434/v1/chat/completions"},
		{name: "vLLM", opts: []Option{VLLM()}, provider: "vllm", endpoint: "http://localhost:8000/v1/chat/completions"},
		{name: "OpenRouter", env: map[string]string{"OPENROUTER_API_KEY": "sk-or"}, opts: []Option{OpenRouter()},
			provider: "openrouter", endpoint: "https://openrouter.ai/api/v1/chat/completions", key: "sk-or"},
		{name: "Qwen", env: map[string]string{"DASHSCOPE_API_KEY": "sk-q"}, opts: []Option{Qwen()},
			provider: "qwen", endpoint: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions", key: "sk-q"},
		{name: "Moonshot", env: map[string]string{"MOONSHOT_API_KEY": "sk-m"}, opts: []Option{Moonshot()},
			provider: "moonshot", endpoint: "https://api.moonshot.ai/v1/chat/completions", key: "sk-m"},
		{name: "Groq", env: map[string]string{"GROQ_API_KEY": "gsk"}, opts: []Option{Groq()},
			provider: "groq", endpoint: "https://api.groq.com/openai/v1/chat/completions", key: "gsk"},
		{name: "xAI", env: map[string]string{"XAI_API_KEY": "xai"}, opts: []Option{XAI()},
			provider: "xai", endpoint: "https://api.x.ai/v1/chat/completions", key: "xai"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			m := New(tc.opts...)
			var e *llm.Error
			keyErr := tc.noKey != "" && errors.As(m.err, &e) && e.Kind == llm.KindAuth && strings.Contains(e.Message, tc.noKey)
			if (m.err != nil && !keyErr) || (tc.noKey != "") != keyErr || m.client.Endpoint != tc.endpoint || m.cfg.o.APIKey != tc.key || m.Info().Provider != tc.provider {
				t.Fatalf("got %s %q key %q err %v", m.Info().Provider, m.client.Endpoint, m.cfg.o.APIKey, m.err)
			}
		})
	}
}

// TestInvalidBaseURLFailsEveryCall: a malformed base URL makes Generate
// and Stream fail with a KindInvalidRequest error that names the provider,
// the value and a good example, and never shows the key (not even one put
// in the base URL's query string).
func TestInvalidBaseURLFailsEveryCall(t *testing.T) {
	const key = "sk-canary-0123456789abcdef"
	tests := []struct {
		name, base, shown string
		opts              []Option
		provider, example string
	}{
		{"no scheme", "api.openai.com/v1", `"api.openai.com/v1"`, nil, "openai", DefaultBaseURL},
		{"another scheme", "ftp://x/v1", `"ftp://x/v1"`, nil, "openai", DefaultBaseURL},
		{"unparsable", "http://[::1", `"http://[::1"`, nil, "openai", DefaultBaseURL},
		{"no host, the key in the query", "https:///v1?api-key=" + key, `"https:///v1?…"`, nil, "openai", DefaultBaseURL},
		{"a preset names itself and its own example", "localhost:11434/v1", `"localhost:11434/v1"`, []Option{Ollama()}, "ollama", "http://localhost:11434/v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(append(tc.opts, WithAPIKey(key), WithBaseURL(tc.base), WithModel("m"))...)
			_, gerr := m.Generate(bg, userRequest())
			_, _, serr := drain(t, m.Stream(bg, userRequest()))
			for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != llm.KindInvalidRequest || !errors.Is(err, llm.ErrInvalidRequest) || e.Provider != tc.provider {
					t.Fatalf("%s: err = %#v, want a KindInvalidRequest error from %s", call, err, tc.provider)
				}
				for _, part := range []string{tc.provider, tc.shown, tc.example} {
					if !strings.Contains(e.Message, part) {
						t.Errorf("%s: message %q does not name %s", call, e.Message, part)
					}
				}
				if strings.Contains(fmt.Sprintf("%v %+v", err, err), key) {
					t.Errorf("%s: the error shows the key: %v", call, err)
				}
			}
		})
	}
}

func TestHeadersSent(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want map[string]string
	}{
		{"a key is sent as a bearer token", []Option{WithAPIKey("sk-1")}, map[string]string{"Authorization": "Bearer sk-1", "Content-Type": "application/json"}},
		{"no key, no Authorization", []Option{WithAPIKey("")}, map[string]string{"Authorization": ""}},
		{"extra headers are added", []Option{WithAPIKey("k"), WithHeader("HTTP-Referer", "https://agcore.dev"), WithHeader("X-Title", "agcore")},
			map[string]string{"Http-Referer": "https://agcore.dev", "X-Title": "agcore", "Authorization": "Bearer k"}},
		{"an extra Authorization header serves gateways without a key", []Option{WithAPIKey(""), WithHeader("Authorization", "Basic abc")}, map[string]string{"Authorization": "Basic abc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := replay(t, http.StatusOK, "text/event-stream", []byte(frames(hello, stopChunk)), 0)
			m := New(append([]Option{WithBaseURL(srv.URL), WithModel("m")}, tc.opts...)...)
			m.Generate(bg, userRequest()) // only the request matters here
			_, hdr, _ := rec.Get()
			for k, v := range tc.want {
				if hdr.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, hdr.Get(k), v)
				}
			}
		})
	}
}

func TestCustomHTTPClientIsUsed(t *testing.T) {
	srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(frames(hello, stopChunk)), 0)
	used := false
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	_, resp, err := drain(t, testModel(srv, WithHTTPClient(client)).Stream(bg, userRequest()))
	if err != nil || resp.Message.Text() != "Hello" || !used {
		t.Fatalf("resp %v err %v used %v", resp, err, used)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestInfoComesFromTheCatalog(t *testing.T) {
	clearEnv(t)
	mine := catalog.Default()
	mine.Add(llm.ModelInfo{Provider: "openrouter", Name: "gpt-4o", Price: &llm.Price{Input: 2.5, Output: 10}})
	tests := []struct {
		name          string
		opts          []Option
		provider      string
		known, priced bool
	}{
		{"a known OpenAI model", []Option{WithModel("gpt-4o-2024-08-06")}, "openai", true, true},
		{"a known model behind OpenRouter keeps its limits, not OpenAI's price", []Option{OpenRouter(), WithModel("openai/gpt-4o")}, "openrouter", true, false},
		{"a catalog that prices OpenRouter", []Option{OpenRouter(), WithModel("openai/gpt-4o"), WithCatalog(mine)}, "openrouter", true, true},
		{"a custom base URL is a compatible server", []Option{WithBaseURL("http://localhost:1234/v1"), WithModel("gpt-4o")}, "compatible", true, false},
		{"Ollama serving a cloud model's name", []Option{Ollama(), WithModel("deepseek-chat")}, "ollama", true, false},
		{"DeepSeek", []Option{DeepSeek(), WithModel("deepseek-chat")}, "deepseek", true, true},
		{"an unknown model has unknown limits", []Option{WithModel("my-finetune")}, "openai", false, false},
		{"an empty catalog knows nothing", []Option{WithModel("gpt-4o"), WithCatalog(&catalog.Catalog{})}, "openai", false, false},
		{"the default model", nil, "openai", true, true},
		{"a preset without a default model", []Option{Groq()}, "groq", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := New(append(tc.opts, WithAPIKey(""))...).Info()
			if info.Provider != tc.provider || info.Known() != tc.known || info.Name != New(tc.opts...).cfg.o.Model || (info.Price != nil) != tc.priced {
				t.Fatalf("info = %+v", info)
			}
		})
	}
}
