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
