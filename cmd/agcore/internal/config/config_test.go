package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// resolve runs Resolve with flags, an environment and a config file.
func resolve(t *testing.T, flags map[string]string, env map[string]string, file string) (*Settings, error) {
	t.Helper()
	home := t.TempDir()
	if file != "" {
		if err := os.WriteFile(filepath.Join(home, FileName), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := map[string]string{"AGCORE_HOME": home}
	for k, v := range env {
		e[k] = v
	}
	return Resolve(Input{
		Flags:  flags,
		Lists:  map[string][]string{},
		Getenv: func(k string) (string, bool) { v, ok := e[k]; return v, ok },
		Cwd:    "/work",
	})
}

func TestPrecedenceIsFlagThenEnvThenFileThenDefault(t *testing.T) {
	file := `{"provider":"openai","providers":{"openai":{"model":"file-model","base_url":"http://file/v1"}},"max_steps":7,"compact":"off"}`
	env := map[string]string{"OPENAI_API_KEY": "k", "AGCORE_MODEL": "env-model", "OPENAI_BASE_URL": "http://env/v1"}
	tests := []struct {
		name             string
		flags            map[string]string
		env              map[string]string
		file             string
		model, base      string
		modelSrc, stepsS string
		steps            int
	}{
		{"defaults", nil, map[string]string{"OPENAI_API_KEY": "k"}, "", "gpt-4.1-mini", "https://api.openai.com/v1", "default", "default", DefaultMaxSteps},
		{"the file over the defaults", nil, map[string]string{"OPENAI_API_KEY": "k"}, file, "file-model", "http://file/v1", "file", "file", 7},
		{"the environment over the file", nil, env, file, "env-model", "http://env/v1", "env AGCORE_MODEL", "file", 7},
		{"flags over everything", map[string]string{"model": "flag-model", "base-url": "http://flag/v1", "max-steps": "3"}, env, file, "flag-model", "http://flag/v1", "flag --model", "flag --max-steps", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := resolve(t, tt.flags, tt.env, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.Model != tt.model || s.BaseURL != tt.base || s.MaxSteps != tt.steps {
				t.Errorf("model %q base %q steps %d; want %q %q %d", s.Model, s.BaseURL, s.MaxSteps, tt.model, tt.base, tt.steps)
			}
			if s.Sources["model"] != tt.modelSrc || s.Sources["max_steps"] != tt.stepsS {
				t.Errorf("sources: model %q, max_steps %q", s.Sources["model"], s.Sources["max_steps"])
			}
		})
	}
}

func TestProviderResolution(t *testing.T) {
	tests := []struct {
		name       string
		flags, env map[string]string
		file       string
		provider   string
		kind       string
		keyEnv     string
		setupErr   string // a SetupError containing this
		err        string // another error containing this
	}{
		{name: "nothing configured", provider: ""},
		{name: "detected from a key, openai first", env: map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, provider: "openai", kind: "openai", keyEnv: "OPENAI_API_KEY"},
		{name: "detected anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "a"}, provider: "anthropic", kind: "anthropic", keyEnv: "ANTHROPIC_API_KEY"},
		{name: "named without its key", flags: map[string]string{"provider": "deepseek"}, provider: "deepseek", setupErr: "DEEPSEEK_API_KEY"},
		{name: "detected gemini", env: map[string]string{"GEMINI_API_KEY": "g"}, provider: "gemini", kind: "gemini", keyEnv: "GEMINI_API_KEY"},
		{name: "detected gemini from GOOGLE_API_KEY", env: map[string]string{"GOOGLE_API_KEY": "g"}, provider: "gemini", kind: "gemini", keyEnv: "GOOGLE_API_KEY"},
		{name: "GEMINI_API_KEY first", env: map[string]string{"GOOGLE_API_KEY": "g", "GEMINI_API_KEY": "g2"}, provider: "gemini", kind: "gemini", keyEnv: "GEMINI_API_KEY"},
		{name: "a Gemini model names its provider", flags: map[string]string{"model": "gemini-2.5-pro"}, env: map[string]string{"OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g"}, provider: "gemini", kind: "gemini", keyEnv: "GEMINI_API_KEY"},
		{name: "gemini without its keys", flags: map[string]string{"provider": "gemini"}, provider: "gemini", setupErr: "GEMINI_API_KEY (or GOOGLE_API_KEY)"},
		{name: "no key needed at a custom base URL", flags: map[string]string{"provider": "openai", "base-url": "http://proxy/v1"}, provider: "openai", kind: "openai"},
		{name: "the Responses API is named, never detected", flags: map[string]string{"provider": "openai-responses"}, env: map[string]string{"OPENAI_API_KEY": "o"},
			provider: "openai-responses", kind: "openai-responses", keyEnv: "OPENAI_API_KEY"},
		{name: "ollama needs no key", env: map[string]string{"AGCORE_PROVIDER": "ollama"}, provider: "ollama", kind: "ollama"},
		{name: "compatible needs a base URL", flags: map[string]string{"provider": "compatible", "model": "m"}, provider: "compatible", setupErr: "base URL"},
		{name: "compatible needs a model", flags: map[string]string{"provider": "compatible", "base-url": "http://x/v1"}, provider: "compatible", setupErr: "needs a model"},
		{name: "a named provider of the file", flags: map[string]string{"provider": "vllm"}, env: map[string]string{"VLLM_KEY": "v"},
			file: `{"providers":{"vllm":{"type":"compatible","base_url":"http://gpu/v1","model":"qwen","api_key_env":"VLLM_KEY"}}}`, provider: "vllm", kind: "compatible", keyEnv: "VLLM_KEY"},
		{name: "an unknown provider", flags: map[string]string{"provider": "nope"}, err: `unknown provider "nope"`},
		{name: "an unknown type", file: `{"provider":"x","providers":{"x":{"type":"nope"}}}`, err: `unknown type "nope"`},
		{name: "a key in the file", file: `{"providers":{"openai":{"api_key":"sk-1"}}}`, err: "api_key_env"},
		{name: "a typo in the file", file: `{"modle":"x"}`, err: "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := resolve(t, tt.flags, tt.env, tt.file)
			var se *SetupError
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) || errors.As(err, &se) {
					t.Fatalf("err = %v, want an error about %q", err, tt.err)
				}
				return
			case tt.setupErr != "":
				if !errors.As(err, &se) || !strings.Contains(se.Reason, tt.setupErr) || s == nil {
					t.Fatalf("err = %v, want a SetupError about %q with the settings", err, tt.setupErr)
				}
			case err != nil:
				t.Fatal(err)
			}
			if s.Provider != tt.provider || (tt.kind != "" && s.Kind.Name != tt.kind) || (tt.keyEnv != "" && s.KeyEnv != tt.keyEnv) {
				t.Errorf("provider %q kind %q key env %q; want %q %q %q", s.Provider, s.Kind.Name, s.KeyEnv, tt.provider, tt.kind, tt.keyEnv)
			}
		})
	}
}

func TestListsAndModes(t *testing.T) {
	key := map[string]string{"OPENAI_API_KEY": "k"}
	tests := []struct {
		name  string
		flags map[string]string
		lists map[string][]string
		file  string
		tools []string
		mcp   []MCPServer
		err   string
	}{
		{name: "default tools", tools: []string{"read_file", "list_dir", "grep"}},
		{name: "no tools by flag", flags: map[string]string{"tools": ""}, tools: nil},
		{name: "no tools by the file", file: `{"tools":[]}`, tools: nil},
		{name: "tools trimmed", flags: map[string]string{"tools": " read_file , write_file,"}, tools: []string{"read_file", "write_file"}},
		{name: "the file's MCP servers", file: `{"mcp":[{"command":"srv a"},{"url":"http://x/mcp","approval":true}]}`,
			tools: []string{"read_file", "list_dir", "grep"}, mcp: []MCPServer{{Command: "srv a"}, {URL: "http://x/mcp", Approval: true}}},
		{name: "flags replace the file's MCP servers", file: `{"mcp":[{"command":"srv a"}]}`, lists: map[string][]string{"mcp": {"b 'c d'"}, "mcp-url": {"http://y"}},
			tools: []string{"read_file", "list_dir", "grep"}, mcp: []MCPServer{{Command: "b 'c d'"}, {URL: "http://y"}}},
		{name: "an MCP server with both", file: `{"mcp":[{"command":"a","url":"http://x"}]}`, err: "exactly one"},
		{name: "a bad compact mode", flags: map[string]string{"compact": "always"}, err: "--compact"},
		{name: "a bad number", flags: map[string]string{"max-steps": "many"}, err: "max_steps"},
		{name: "zero steps", flags: map[string]string{"max-steps": "0"}, err: "at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				os.WriteFile(filepath.Join(home, FileName), []byte(tt.file), 0o600)
			}
			env := map[string]string{"AGCORE_HOME": home}
			for k, v := range key {
				env[k] = v
			}
			s, err := Resolve(Input{Flags: tt.flags, Lists: tt.lists, Cwd: "/w", Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Tools, tt.tools) || !reflect.DeepEqual(s.MCP, tt.mcp) {
				t.Errorf("tools %q mcp %+v; want %q %+v", s.Tools, s.MCP, tt.tools, tt.mcp)
			}
		})
	}
}

func TestEntriesMaskTheKey(t *testing.T) {
	s, err := resolve(t, nil, map[string]string{"OPENAI_API_KEY": "sk-secret-123", "OPENAI_BASE_URL": "https://u:pw@proxy.example/v1?token=t0k",
		"AGCORE_STORE": "postgres://root:s3cret@db/agcore?sslmode=disable"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Print(&b, s.Entries()); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(s.JSONObject())
	if err != nil {
		t.Fatal(err)
	}
	out := b.String() + string(js)
	for _, secret := range []string{"sk-secret-123", "pw@", "t0k", "s3cret"} {
		if strings.Contains(out, secret) {
			t.Errorf("the configuration shows %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "set in $OPENAI_API_KEY (hidden)") || !strings.Contains(out, "https://u:xxxxx@proxy.example/v1?…") ||
		!strings.Contains(out, "postgres://root:xxxxx@db/agcore?sslmode=disable") {
		t.Errorf("unexpected configuration:\n%s", out)
	}
}

func TestSetupHelpNamesEveryProvider(t *testing.T) {
	help := SetupHelp("/h", "")
	for _, want := range []string{"no model provider is configured", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "AGCORE_PROVIDER=ollama", "AGCORE_PROVIDER=compatible", "agcore demo", "/h/config.json"} {
		if !strings.Contains(help, want) {
			t.Errorf("the setup help lacks %q", want)
		}
	}
	// Every provider of the registry, with its key and base-URL variables.
	for _, k := range Kinds() {
		for _, want := range []string{"\n  " + k.Name + " ", k.KeyEnv, k.AltKeyEnv, k.BaseEnv} {
			if k.Wire != "demo" && !strings.Contains(help, want) {
				t.Errorf("the setup help lacks %q for %s:\n%s", want, k.Name, help)
			}
		}
	}
}
