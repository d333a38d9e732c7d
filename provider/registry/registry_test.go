package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	_ "github.com/agcore/agcore/provider/builtin"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
	. "github.com/agcore/agcore/provider/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var noEnv = func(string) string { return "" }

// TestTable checks the rules every entry keeps.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	wires := map[string]bool{WireOpenAI: true, WireResponses: true, WireAnthropic: true, WireGemini: true, WireDemo: true}
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name == "" || seen[p.Name] || strings.ToLower(p.Name) != p.Name {
				t.Errorf("name %q: empty, repeated or not lower case", p.Name)
			}
			seen[p.Name] = true
			if !wires[p.Wire] {
				t.Errorf("wire %q", p.Wire)
			}
			if p.Description == "" {
				t.Error("no description")
			}
			if p.KeyRequired && (p.KeyEnv == "" || p.DefaultBase == "") {
				t.Error("a key is required, but no variable or endpoint is named")
			}
			if p.Detect && (p.KeyEnv == "" || !p.KeyRequired) {
				t.Error("detected by a key that is not its own")
			}
			if p.AltKeyEnv != "" && p.KeyEnv == "" {
				t.Error("an alternate key variable without a main one")
			}
			if p.Open == nil || (p.Order == 0) {
				t.Error("no Open, or no place in the table")
			}
			if p.Wire != WireDemo && p.DefaultBase != "" {
				if u, err := url.Parse(p.DefaultBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					t.Errorf("default base %q is not a URL", p.DefaultBase)
				}
			}
			for _, env := range []string{p.KeyEnv, p.AltKeyEnv, p.BaseEnv} {
				if env != "" && strings.ToUpper(env) != env {
					t.Errorf("variable %q", env)
				}
			}
			if q, ok := Lookup(p.Name); !ok || q.Name != p.Name {
				t.Error("Lookup does not find it")
			}
		})
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup found an unknown name")
	}
	if got := strings.Join(Names(), ","); !strings.HasPrefix(got, "openai,") || !strings.HasSuffix(got, ",demo") {
		t.Errorf("Names() = %s", got)
	}
	all := All()
	all[0].Name = "changed"
	if Names()[0] != "openai" {
		t.Error("All returns the table itself")
	}
}

// seller is the provider the catalog lists a registry provider's models
// under.
func seller(p Provider) string { return p.CatalogName() }

// listed reports whether the catalog has an entry named exactly model for
// provider.
func listed(provider, model string) bool {
	for _, e := range catalog.Default().Models() {
		if e.Provider == provider && e.Name == catalog.Normalize(model) {
			return true
		}
	}
	return false
}

// TestDefaultsAgree: the registry's default models are the adapters' own
// (DefaultModel, and a preset's default), and every default model is in the
// catalog, under the provider that sells it.
func TestDefaultsAgree(t *testing.T) {
	adapters := map[string]string{
		"openai":           openai.DefaultModel,
		"openai-responses": responses.DefaultModel,
		"anthropic":        anthropic.DefaultModel,
		"gemini":           gemini.DefaultModel,
		"demo":             demo.Name,
	}
	bases := map[string]string{
		"openai":           openai.DefaultBaseURL,
		"openai-responses": responses.DefaultBaseURL,
		"anthropic":        anthropic.DefaultBaseURL,
		"gemini":           gemini.DefaultBaseURL,
	}
	for name, model := range adapters {
		p, _ := Lookup(name)
		if p.DefaultModel != model || (bases[name] != "" && p.DefaultBase != bases[name]) {
			t.Errorf("%s: registry default %q at %q, adapter's %q at %q", name, p.DefaultModel, p.DefaultBase, model, bases[name])
		}
	}
	for _, p := range All() {
		if p.DefaultModel != "" && p.Wire != WireDemo && !listed(seller(p), p.DefaultModel) {
			t.Errorf("%s: default model %q is not in the catalog under %s", p.Name, p.DefaultModel, seller(p))
		}
	}
}

// recorder answers every request with a 503 and records where it went;
// it stands in for the network, whatever the host.
type recorder struct {
	mu   sync.Mutex
	urls []string
	auth []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.String())
	r.auth = append(r.auth, req.Header.Get("Authorization")+req.Header.Get("X-Api-Key")+req.Header.Get("X-Goog-Api-Key"))
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// wirePath is where a wire's call goes under its base URL.
var wirePath = map[string]string{
	WireOpenAI:    "/chat/completions",
	WireResponses: "/responses",
	WireAnthropic: "/v1/messages",
	WireGemini:    "/v1beta/models/",
}

// TestNewSendsToTheDefaultEndpoint: with a key and nothing else, the model
// New builds calls the provider's DefaultBase with its wire's path, with
// the key; and a preset used alone (openai.New(openai.Groq())) calls the
// same endpoint, so the table and the presets agree.
func TestNewSendsToTheDefaultEndpoint(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	for _, p := range All() {
		if p.Wire == WireDemo || p.DefaultBase == "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			rec := &recorder{}
			client := &http.Client{Transport: rec}
			m, err := p.New(Config{APIKey: "k-123", Model: "some-model", Getenv: noEnv, HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			m.Generate(context.Background(), req)
			want := strings.TrimRight(p.DefaultBase, "/") + wirePath[p.Wire]
			if len(rec.urls) == 0 {
				t.Fatal("nothing sent")
			}
			for i, u := range rec.urls {
				if !strings.HasPrefix(u, want) || !strings.Contains(rec.auth[i], "k-123") {
					t.Errorf("sent to %s with credentials %q; want %s... with the key", u, rec.auth[i], want)
				}
			}
		})
	}
}

// TestNewResolves: the model, base URL and key come from Config, else the
// provider's variables, else its defaults; what is missing fails before
// anything is sent.
func TestNewResolves(t *testing.T) {
	var hits atomic.Int32
	var mu sync.Mutex
	var paths, keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		keys = append(keys, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+r.Header.Get("X-Goog-Api-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}

	tests := []struct {
		name, provider string
		c              Config
		path, key      string // what the server sees
		err            string // or the error New returns
		auth           bool   // the error is an auth error
	}{
		{name: "the base URL variable", provider: "deepseek", c: Config{Getenv: env(map[string]string{"DEEPSEEK_BASE_URL": srv.URL, "DEEPSEEK_API_KEY": "ds"})}, path: "/chat/completions", key: "Bearer ds"},
		{name: "Config beats the variables", provider: "anthropic", c: Config{BaseURL: srv.URL, APIKey: "mine", Getenv: env(map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": "env"})}, path: "/v1/messages", key: "mine"},
		{name: "the alternate key", provider: "gemini", c: Config{BaseURL: srv.URL, Getenv: env(map[string]string{"GOOGLE_API_KEY": "g"})}, path: "/v1beta/models/" + gemini.DefaultModel + ":generateContent", key: "g"},
		{name: "a custom base URL needs no key", provider: "openai", c: Config{BaseURL: srv.URL + "/v1", Getenv: noEnv}, path: "/v1/chat/completions"},
		{name: "compatible", provider: "compatible", c: Config{BaseURL: srv.URL + "/v1", Model: "local", Getenv: noEnv}, path: "/v1/chat/completions"},
		{name: "vllm's optional key", provider: "vllm", c: Config{BaseURL: srv.URL + "/v1", Model: "q", Getenv: env(map[string]string{"VLLM_API_KEY": "v"})}, path: "/v1/chat/completions", key: "Bearer v"},
		{name: "responses", provider: "openai-responses", c: Config{BaseURL: srv.URL + "/v1", APIKey: "r", Getenv: noEnv}, path: "/v1/responses", key: "Bearer r"},
		{name: "no key for the official endpoint", provider: "openai", c: Config{Getenv: noEnv}, err: "no API key: set OPENAI_API_KEY", auth: true},
		{name: "no key, the alternate named", provider: "gemini", c: Config{Getenv: noEnv}, err: "GEMINI_API_KEY (or GOOGLE_API_KEY)", auth: true},
		{name: "no key for a preset's endpoint", provider: "groq", c: Config{Model: "llama", Getenv: noEnv}, err: "no API key: set GROQ_API_KEY", auth: true},
		{name: "no model", provider: "openrouter", c: Config{APIKey: "k", Getenv: noEnv}, err: "needs a model"},
		{name: "no base URL", provider: "compatible", c: Config{Model: "m", Getenv: noEnv}, err: "needs a base URL"},
		{name: "an unknown provider", provider: "nope", err: `unknown provider "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			m, err := New(tc.provider, tc.c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, llm.ErrAuth) != tc.auth || m != nil {
					t.Fatalf("err = %v, want %q (auth %v)", err, tc.err, tc.auth)
				}
				if hits.Load() != before {
					t.Fatal("something was sent")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m.Generate(context.Background(), req)
			mu.Lock()
			defer mu.Unlock()
			if hits.Load() != before+1 || paths[len(paths)-1] != tc.path || keys[len(keys)-1] != tc.key {
				t.Fatalf("sent %d to %v with %q; want %s with %q", hits.Load()-before, paths, keys, tc.path, tc.key)
			}
		})
	}
}

// TestDemo: the demo needs nothing and is the scripted model.
func TestDemo(t *testing.T) {
	m, err := New("demo", Config{Getenv: noEnv})
	if _, ok := m.(*demo.Model); err != nil || !ok {
		t.Fatalf("demo: %T %v", m, err)
	}
}

// TestDetect: the first detectable provider whose key is set, in table
// order; the alternate key counts; openai-responses and compatible are
// never detected.
func TestDetect(t *testing.T) {
	tests := []struct {
		env        map[string]string
		want, from string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"}, "anthropic", "ANTHROPIC_API_KEY"},
		{map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"}, "openai", "OPENAI_API_KEY"},
		{map[string]string{"GOOGLE_API_KEY": "g"}, "gemini", "GOOGLE_API_KEY"},
		{map[string]string{"MOONSHOT_API_KEY": "m"}, "moonshot", "MOONSHOT_API_KEY"},
		{map[string]string{"VLLM_API_KEY": "v"}, "", ""},
	}
	for _, tc := range tests {
		p, from, ok := Detect(func(k string) string { return tc.env[k] })
		if p.Name != tc.want || from != tc.from || ok != (tc.want != "") {
			t.Errorf("%v: detected %q from %q", tc.env, p.Name, from)
		}
	}
}

// TestStructuredModes: the models New builds report the table's
// structured-output mode, and each provider/openai preset says the same as
// its row (a library user building from the preset sees what the CLI does).
func TestStructuredModes(t *testing.T) {
	for _, p := range All() {
		m, err := p.New(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if got := m.Info().Structured; got != p.Structured {
			t.Errorf("%s: New's model reports %v, the table says %v", p.Name, got, p.Structured)
		}
	}
}

// TestPresetsRegistered: every provider/openai preset is in the table,
// made from the same facts (a library user building from the preset sees
// what the CLI does).
func TestPresetsRegistered(t *testing.T) {
	presets := map[string]openai.Option{"deepseek": openai.DeepSeek(), "ollama": openai.Ollama(), "vllm": openai.VLLM(),
		"openrouter": openai.OpenRouter(), "groq": openai.Groq(), "xai": openai.XAI(), "qwen": openai.Qwen(), "moonshot": openai.Moonshot()}
	for name, preset := range presets {
		p, ok := Lookup(name)
		if !ok || p.Wire != WireOpenAI {
			t.Errorf("%s: not registered on the openai wire", name)
			continue
		}
		got := openai.New(preset, openai.WithAPIKey("k")).Info()
		if got.Name != p.DefaultModel || got.Provider != p.Name || got.Structured != p.Structured {
			t.Errorf("%s: the preset says %+v, the table %+v", name, got, p)
		}
	}
}

// TestRegisterRefuses: a provider without a name or an Open, or under a
// name already taken, panics at registration, as sql.Register does.
func TestRegisterRefuses(t *testing.T) {
	open := func(Settings) (llm.Model, error) { return nil, nil }
	for name, p := range map[string]Provider{
		"no name":    {Open: open},
		"no Open":    {Name: "zz-no-open"},
		"name taken": {Name: "openai", Open: open},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			Register(p)
		}()
	}
	if _, ok := Lookup("zz-no-open"); ok {
		t.Error("a refused provider is in the table")
	}
}
