package main_test

import (
	"regexp"
	"strings"
	"testing"

	_ "github.com/agcore/agcore/provider/builtin"
	"github.com/agcore/agcore/provider/registry"
)

// TestEveryProviderByName: `agcore run --provider NAME` works for every
// provider of the registry, pointed at a fake server by its base-URL
// variable (or --base-url when it has none): the request goes to its wire's
// path with its key in the wire's header, and the model sent is the
// provider's default when it has one.
func TestEveryProviderByName(t *testing.T) {
	t.Parallel()
	for _, p := range registry.All() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			if p.Wire == registry.WireDemo {
				r := c.ok("run", "--json", "--provider", p.Name, "--store", "memory:", "hello")
				if done := last(t, events(t, r.stdout)); done.typ() != "done" || done["text"] == "" {
					t.Fatalf("demo: %v", done)
				}
				return
			}
			var rep reply
			base, path, header := "", "", ""
			model := p.DefaultModel
			switch p.Wire {
			case registry.WireOpenAI:
				rep, base, path, header = openaiReply(turn{text: "Hello from " + p.Name + "."}), "/v1", "/v1/chat/completions", "Authorization"
			case registry.WireResponses:
				rep, base, path, header = fixture(t, "openai-responses/responses-stream-reasoning-summary-text-after-tool.sse"), "/v1", "/v1/responses", "Authorization"
			case registry.WireAnthropic:
				rep, path, header = anthropicReply(turn{text: "Hello from " + p.Name + "."}), "/v1/messages", "X-Api-Key"
			case registry.WireGemini:
				rep, path, header = fixture(t, "gemini/stream-text.sse"), "/v1beta/models/"+p.DefaultModel+":streamGenerateContent", "X-Goog-Api-Key"
			default:
				t.Fatalf("wire %q has no fake", p.Wire)
			}
			srv := newFake(t, rep)
			args := []string{"run", "--json", "--provider", p.Name, "--store", "memory:", "--tools", ""}
			if p.BaseEnv != "" {
				c.env[p.BaseEnv] = srv.URL + base
			} else {
				args = append(args, "--base-url", srv.URL+base)
			}
			if model == "" {
				model = "some/model"
				args = append(args, "-m", model)
			}
			key := "sk-" + p.Name
			if p.KeyEnv != "" {
				c.env[p.KeyEnv] = key
			}
			r := c.ok(append(args, "hello")...)
			if done := last(t, events(t, r.stdout)); done.typ() != "done" || done["text"] == "" {
				t.Errorf("last event %v", done)
			}
			got := srv.got()
			if len(got) != 1 || got[0].path != path {
				t.Fatalf("requests %d, to %v; want one to %s", len(got), got, path)
			}
			if p.Wire != registry.WireGemini && got[0].body["model"] != model {
				t.Errorf("model sent %v, want %s", got[0].body["model"], model)
			}
			if p.KeyEnv != "" && !strings.Contains(got[0].header.Get(header), key) {
				t.Errorf("%s: %q, want the key from %s", header, got[0].header.Get(header), p.KeyEnv)
			}
		})
	}
}

// TestEveryProviderNeedsItsKey: a provider whose own endpoint needs a key,
// run without one, stops before anything is sent (exit 2) with the
// variable named; and --provider's help names every provider.
func TestEveryProviderNeedsItsKey(t *testing.T) {
	t.Parallel()
	for _, p := range registry.All() {
		if !p.KeyRequired {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			r := newCLI(t).run("", "run", "--provider", p.Name, "-m", "some-model", "--store", "memory:", "hello")
			if r.code != 2 || !strings.Contains(r.stderr, p.KeyEnv) {
				t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
	help := newCLI(t).ok("run", "--help").stdout
	line := regexp.MustCompile(`(?m)^\s*--provider string\s+(.*)$`).FindStringSubmatch(help)
	if line == nil {
		t.Fatalf("no --provider in run --help:\n%s", help)
	}
	for _, name := range registry.Names() {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `[,;]`).MatchString(line[1]) {
			t.Errorf("--provider's help does not name %s: %s", name, line[1])
		}
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("run --help's providers section has no %s", name)
		}
	}
}

// TestConfigFileProviderUsesTheRegistry: a provider named in the config
// file with a registry kind as its type gets that kind's wire, with the
// file's base URL, model and key variable (not the kind's own variable).
func TestConfigFileProviderUsesTheRegistry(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "From the GPU."}))
	c := newCLI(t)
	writeFiles(t, c.home, map[string]string{"config.json": `{"provider": "gpu", "providers": {"gpu": {"type": "vllm", "base_url": "` +
		srv.URL + `/v1", "model": "qwen3", "api_key_env": "GPU_KEY"}}}`})
	c.env["GPU_KEY"] = "sk-gpu"
	c.env["VLLM_API_KEY"] = "sk-not-this-one"
	r := c.ok("run", "--store", "memory:", "hello")
	got := srv.got()
	if r.stdout != "From the GPU.\n" || len(got) != 1 || got[0].path != "/v1/chat/completions" || got[0].body["model"] != "qwen3" ||
		got[0].header.Get("Authorization") != "Bearer sk-gpu" {
		t.Fatalf("stdout %q, requests %+v", r.stdout, got)
	}
}
