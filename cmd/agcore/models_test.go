package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// agcore models: the known models with window, price and provider, the
// aliases, and the models a local server reports.
func TestModelsCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	writeFiles(t, c.home, map[string]string{"config.json": `{"aliases": {"fast": "gpt-4.1-nano"}}`})
	r := c.ok("models")
	// Column widths follow the longest name; compare with runs of spaces
	// collapsed.
	collapse := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, want := range []string{"MODEL", "PRICE IN / OUT", "gpt-4o openai 128,000 16,384 $2.5 / $10", "claude-sonnet-4-5", "llama3.2",
		"gemini-2.5-flash google 1,048,576 65,536 $0.3 / $2.5", "4o gpt-4o", "fast gpt-4.1-nano", "sonnet claude-sonnet-4-6"} {
		if !strings.Contains(collapse(r.stdout), want) {
			t.Errorf("agcore models lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := c.ok("models", "claude"); strings.Contains(r.stdout, "gpt-4o ") || !strings.Contains(r.stdout, "claude-haiku-4-5") {
		t.Errorf("agcore models claude:\n%s", r.stdout)
	}

	srv := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			t.Errorf("asked %s %s", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen3-local","object":"model"},{"id":"llama-local","object":"model"}]}`)
	})
	r = c.ok("models", "--json", "--provider", "compatible", "--base-url", srv.URL+"/v1", "qwen")
	var got struct {
		Models []struct {
			Name          string `json:"name"`
			ContextWindow int    `json:"context_window"`
		}
		Aliases map[string]string
		Server  struct {
			URL    string
			Models []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(got.Models) == 0 || !strings.Contains(got.Models[0].Name, "qwen") || got.Aliases["fast"] != "gpt-4.1-nano" ||
		got.Server.URL != srv.URL+"/v1" || strings.Join(got.Server.Models, ",") != "qwen3-local,llama-local" {
		t.Errorf("models --json: %s", r.stdout)
	}
	// A server that cannot be reached is reported, exit 1.
	srv.Close()
	if r := c.run("", "models", "--provider", "vllm", "--base-url", srv.URL+"/v1"); r.code != 1 || !strings.Contains(r.stderr, "asking "+srv.URL+"/v1 for its models") {
		t.Errorf("an unreachable server: exit %d, %q", r.code, r.stderr)
	}
}

// agcore models --base-url URL asks that server for its models, whatever
// provider the environment picks: as an OpenAI-compatible server when the
// provider was not named (no key sent that was meant for another API), in
// the named provider's own API otherwise.
func TestModelsAsksTheServerAtBaseURL(t *testing.T) {
	t.Parallel()
	type asked struct{ path, auth, apiKey, version, goog string }
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		path string // added to the fake's URL: the --base-url
		want asked
		body string
	}{
		{"no provider, no key", nil, nil, "/v1",
			asked{path: "/v1/models"}, `{"object":"list","data":[{"id":"served-a"},{"id":"served-b"}]}`},
		{"a key of another API only", map[string]string{"ANTHROPIC_API_KEY": "sk-ant-secret"}, nil, "/v1",
			asked{path: "/v1/models"}, `{"object":"list","data":[{"id":"served-a"},{"id":"served-b"}]}`},
		{"an OpenAI key", map[string]string{"OPENAI_API_KEY": "sk-openai"}, nil, "/v1",
			asked{path: "/v1/models", auth: "Bearer sk-openai"}, `{"object":"list","data":[{"id":"served-a"},{"id":"served-b"}]}`},
		{"--provider anthropic", map[string]string{"ANTHROPIC_API_KEY": "sk-ant"}, []string{"--provider", "anthropic"}, "",
			asked{path: "/v1/models", apiKey: "sk-ant", version: "2023-06-01"}, `{"data":[{"type":"model","id":"served-a"},{"type":"model","id":"served-b"}],"has_more":false}`},
		{"--provider gemini", map[string]string{"GEMINI_API_KEY": "g-key"}, []string{"--provider", "gemini"}, "",
			asked{path: "/v1beta/models", goog: "g-key"}, `{"models":[{"name":"models/served-a"},{"name":"models/served-b"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan asked, 1)
			srv := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					t.Errorf("asked with %s", r.Method)
				}
				got <- asked{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"), r.Header.Get("x-goog-api-key")}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			})
			c := newCLI(t)
			for k, v := range tc.env {
				c.env[k] = v
			}
			r := c.ok(append([]string{"models", "--base-url", srv.URL + tc.path}, tc.args...)...)
			select {
			case a := <-got:
				if a != tc.want {
					t.Errorf("the server was asked %+v, want %+v", a, tc.want)
				}
			default:
				t.Fatalf("the server at --base-url was not asked; stdout:\n%s", r.stdout)
			}
			if !strings.Contains(r.stdout, "Served by "+srv.URL+tc.path+":\n  served-a\n  served-b\n") {
				t.Errorf("the served models are not listed:\n%s", r.stdout)
			}
		})
	}
}
