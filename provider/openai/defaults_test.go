package openai

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
)

// officialVia returns a client that sends every request, whatever its
// host, to srv, and counts them: a request "to api.openai.com" reaches the
// local test server, so a test sees whether anything was sent to the
// official endpoint without leaving the machine.
func officialVia(srv *httptest.Server, sent *atomic.Int32) *http.Client {
	target, _ := url.Parse(srv.URL)
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

// TestNoKeyNothingSent: without a key, a call to the service's own
// endpoint fails before anything is sent, with an auth error that names
// the key's variable; with a key the same call is sent (the control); a
// custom base URL (a local server, a gateway) is called without a key.
func TestNoKeyNothingSent(t *testing.T) {
	tests := []struct {
		name   string
		preset Option
		keyEnv string
	}{
		{"openai", nil, "OPENAI_API_KEY"},
		{"deepseek", DeepSeek(), "DEEPSEEK_API_KEY"},
		{"openrouter", OpenRouter(), "OPENROUTER_API_KEY"},
		{"groq", Groq(), "GROQ_API_KEY"},
		{"xai", XAI(), "XAI_API_KEY"},
		{"qwen", Qwen(), "DASHSCOPE_API_KEY"},
		{"moonshot", Moonshot(), "MOONSHOT_API_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			var got atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte(frames(hello, stopChunk)))
			}))
			defer srv.Close()
			var sent atomic.Int32
			m := New(tc.preset, WithHTTPClient(officialVia(srv, &sent)), WithModel("m"))
			_, gerr := m.Generate(bg, userRequest())
			_, _, serr := drain(t, m.Stream(bg, userRequest()))
			for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
				var e *llm.Error
				if !errors.As(err, &e) || !errors.Is(err, llm.ErrAuth) || e.Provider != tc.name || !strings.Contains(e.Message, tc.keyEnv) {
					t.Errorf("%s: err = %v, want an auth error from %s naming %s", call, err, tc.name, tc.keyEnv)
				}
			}
			if sent.Load() != 0 || got.Load() != 0 {
				t.Fatalf("%d requests sent, %d received without a key; want none", sent.Load(), got.Load())
			}

			t.Setenv(tc.keyEnv, testKey)
			if _, _, err := drain(t, New(tc.preset, WithHTTPClient(officialVia(srv, &sent)), WithModel("m")).Stream(bg, userRequest())); err != nil || got.Load() != 1 {
				t.Fatalf("with %s set: err %v, %d requests; want one", tc.keyEnv, err, got.Load())
			}

			t.Setenv(tc.keyEnv, "")
			if _, _, err := drain(t, New(tc.preset, WithBaseURL(srv.URL+"/v1"), WithModel("m")).Stream(bg, userRequest())); err != nil || got.Load() != 2 {
				t.Fatalf("a custom base URL without a key: err %v, %d requests; want it sent", err, got.Load())
			}
		})
	}
}

// TestLocalPresetsNeedNoKey: Ollama and vLLM at their default base URLs
// send without a key.
func TestLocalPresetsNeedNoKey(t *testing.T) {
	clearEnv(t)
	for name, p := range map[string]Option{"ollama": Ollama(), "vllm": VLLM()} {
		if m := New(p, WithModel("m")); m.err != nil {
			t.Errorf("%s without a key: %v", name, m.err)
		}
	}
}

// TestDefaultModels: New without WithModel uses DefaultModel at OpenAI,
// the preset's default for DeepSeek and Ollama, and none for a preset
// without one, whose calls then fail before sending, asking for a model.
func TestDefaultModels(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		preset Option
		want   string
	}{{nil, DefaultModel}, {DeepSeek(), "deepseek-chat"}, {Ollama(), "llama3.2"}, {VLLM(), ""}, {Groq(), ""}, {OpenRouter(), ""}} {
		if got := New(tc.preset, WithAPIKey("k")).Info().Name; got != tc.want {
			t.Errorf("default model %q, want %q", got, tc.want)
		}
	}
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer srv.Close()
	_, err := New(Groq(), WithAPIKey("k"), WithBaseURL(srv.URL)).Generate(bg, userRequest())
	if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), "no model") || got.Load() != 0 {
		t.Fatalf("err = %v, %d requests; want a no-model error and none sent", err, got.Load())
	}
}
