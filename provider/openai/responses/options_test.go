package responses

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

func clearEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
}

func TestConfigurationSources(t *testing.T) {
	tests := []struct {
		name               string
		env                map[string]string
		opts               []Option
		provider, endpoint string
		key                string
		noKey              bool // calls fail: no key for OpenAI's endpoint
	}{
		{name: "defaults", provider: "openai", endpoint: "https://api.openai.com/v1/responses", noKey: true},
		{name: "from the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://proxy:8080/v1/"},
			provider: "compatible", endpoint: "http://proxy:8080/v1/responses", key: "sk-env"},
		{name: "options beat the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://proxy/v1"},
			opts: []Option{WithAPIKey("sk-opt"), WithBaseURL("https://gw.example/openai/v1")}, provider: "compatible", endpoint: "https://gw.example/openai/v1/responses", key: "sk-opt"},
		{name: "an explicit empty key stops the environment", env: map[string]string{"OPENAI_API_KEY": "sk-env"}, opts: []Option{WithAPIKey("")},
			provider: "openai", endpoint: "https://api.openai.com/v1/responses", noKey: true},
		{name: "a query string is kept (Azure's api-version)", opts: []Option{WithBaseURL("https://r.openai.azure.com/openai/v1?api-version=preview")},
			provider: "compatible", endpoint: "https://r.openai.azure.com/openai/v1/responses?api-version=preview"},
		{name: "a nil option is ignored", opts: []Option{nil, WithAPIKey("k")}, provider: "openai", endpoint: "https://api.openai.com/v1/responses", key: "k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			m := New(tc.opts...)
			if (m.err != nil) != tc.noKey || (tc.noKey && (!errors.Is(m.err, llm.ErrAuth) || !strings.Contains(m.err.Error(), "OPENAI_API_KEY"))) || m.client.Endpoint != tc.endpoint || m.cfg.o.APIKey != tc.key || m.Info().Provider != tc.provider {
				t.Fatalf("got %s %q key %q err %v", m.Info().Provider, m.client.Endpoint, m.cfg.o.APIKey, m.err)
			}
		})
	}
}

// TestInvalidBaseURLFailsEveryCall: a malformed base URL makes Generate and
// Stream fail with a KindInvalidRequest error that names the value and a
// good example, and never shows the key.
func TestInvalidBaseURLFailsEveryCall(t *testing.T) {
	const key = "sk-canary-0123456789abcdef"
	for _, base := range []string{"api.openai.com/v1", "ftp://x/v1", "http://", "https://gw.example/v1?key=" + key} {
		if strings.Contains(base, "?") {
			base = "://" + base // unparsable, with a key in its query
		}
		t.Run(base, func(t *testing.T) {
			m := New(WithBaseURL(base), WithAPIKey(key), WithModel("gpt-5"))
			_, gerr := m.Generate(bg, userRequest())
			_, _, serr := drain(t, m.Stream(bg, userRequest()))
			for _, err := range []error{gerr, serr} {
				if llm.KindOf(err) != llm.KindInvalidRequest || !strings.Contains(err.Error(), "https://api.openai.com/v1") {
					t.Errorf("err = %v", err)
				}
				if strings.Contains(fmt.Sprintf("%v %+v", err, err), key) {
					t.Errorf("the error shows the key: %v", err)
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
		{"a key is sent as a bearer token", []Option{WithAPIKey("sk-1")}, map[string]string{"Authorization": "Bearer sk-1", "Content-Type": "application/json", "Accept": "application/json"}},
		{"no key, no Authorization", []Option{WithAPIKey("")}, map[string]string{"Authorization": ""}},
		{"extra headers are added", []Option{WithAPIKey("k"), WithHeader("OpenAI-Organization", "org-1"), WithHeader("OpenAI-Project", "proj_1")},
			map[string]string{"Openai-Organization": "org-1", "Openai-Project": "proj_1", "Authorization": "Bearer k"}},
		{"a user's Authorization never replaces the key", []Option{WithAPIKey("k"), WithHeader("Authorization", "Basic abc")}, map[string]string{"Authorization": "Bearer k"}},
		{"an Authorization header serves gateways without a key", []Option{WithAPIKey(""), WithHeader("Authorization", "Basic abc")}, map[string]string{"Authorization": "Basic abc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := replay(t, http.StatusOK, "application/json", []byte(`{"id":"r","status":"completed","output":[]}`), 0)
			m := New(append([]Option{WithBaseURL(srv.URL), WithModel("m")}, tc.opts...)...)
			if _, err := m.Generate(bg, userRequest()); err != nil {
				t.Fatal(err)
			}
			_, hdr, _ := rec.Get()
			for k, v := range tc.want {
				if hdr.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, hdr.Get(k), v)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCustomHTTPClientIsUsed(t *testing.T) {
	srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(events(created, msgAdded, hello, completed)), 0)
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

// TestInfoComesFromTheCatalog: the o3, o4-mini and gpt-5 families are
// known, priced as OpenAI's when the base URL is OpenAI's.
func TestInfoComesFromTheCatalog(t *testing.T) {
	clearEnv(t)
	mine := catalog.Default()
	mine.Add(llm.ModelInfo{Provider: "compatible", Name: "gpt-oss-120b", ContextWindow: 131072, Price: &llm.Price{}})
	tests := []struct {
		name          string
		opts          []Option
		provider      string
		known, priced bool
	}{
		{"gpt-5", []Option{WithModel("gpt-5")}, "openai", true, true},
		{"a dated gpt-5 snapshot", []Option{WithModel("gpt-5-2025-08-07")}, "openai", true, true},
		{"gpt-5-mini", []Option{WithModel("gpt-5-mini")}, "openai", true, true},
		{"o3", []Option{WithModel("o3")}, "openai", true, true},
		{"o4-mini", []Option{WithModel("o4-mini-2025-04-16")}, "openai", true, true},
		{"gpt-4o", []Option{WithModel("gpt-4o")}, "openai", true, true},
		{"another server keeps the limits, not OpenAI's price", []Option{WithBaseURL("http://localhost:8000/v1"), WithModel("gpt-5")}, "compatible", true, false},
		{"a catalog that knows the other server's model", []Option{WithBaseURL("http://localhost:8000/v1"), WithModel("gpt-oss-120b"), WithCatalog(mine)}, "compatible", true, true},
		{"an unknown model", []Option{WithModel("my-finetune")}, "openai", false, false},
		{"the default model", nil, "openai", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(append(tc.opts, WithAPIKey(""))...)
			info := m.Info()
			if info.Provider != tc.provider || info.Known() != tc.known || info.Name != m.cfg.o.Model || (info.Price != nil) != tc.priced {
				t.Fatalf("info = %+v", info)
			}
		})
	}
}
