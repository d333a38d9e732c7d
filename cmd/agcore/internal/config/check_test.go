package config

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsMistakesWithWhereTheyCameFrom(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		env   map[string]string
		want  string // "" for no mistake
	}{
		{"fine", nil, nil, ""},
		{"a flag", map[string]string{"base-url": "notaurl"}, nil, `--base-url "notaurl" is not a URL`},
		{"the environment", nil, map[string]string{"OPENAI_BASE_URL": "ftp://x/v1"}, `OPENAI_BASE_URL "ftp://x/v1" has the scheme "ftp"`},
		{"a store", map[string]string{"store": "bogus:x"}, nil, `--store "bogus:x" is not a store`},
		{"a store from the environment", nil, map[string]string{"AGCORE_STORE": "file:"}, `AGCORE_STORE "file:" names no directory`},
		{"postgres", map[string]string{"store": "postgres://root@127.0.0.1:5432/test?sslmode=disable"}, nil, ""},
		{"postgresql", nil, map[string]string{"AGCORE_STORE": "postgresql://root@db/test"}, ""},
		{"redis", map[string]string{"store": "redis://127.0.0.1:6379/13"}, nil, ""},
		{"rediss", nil, map[string]string{"AGCORE_STORE": "rediss://:pw@127.0.0.1:6379/13"}, ""},
		{"every kind is listed, the password hidden", map[string]string{"store": "mysql://u:s3cret@db/x"}, nil,
			`--store "mysql://u:xxxxx@db/x" is not a store: give sqlite:PATH, file:DIR, memory:, postgres://… or redis://…`},
		{"a bad redis URL", map[string]string{"store": "redis://:s3cret@127.0.0.1:6379/x"}, nil, `--store "redis://:xxxxx@127.0.0.1:6379/x" redis: invalid database number`},
		{"a root", map[string]string{"root": "/nonexistent-agcore"}, nil, `--root "/nonexistent-agcore": no such directory`},
		{"no tools, any root", map[string]string{"root": "/nonexistent-agcore", "tools": ""}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"OPENAI_API_KEY": "k"}
			for k, v := range tt.env {
				env[k] = v
			}
			s, err := resolve(t, tt.flags, env, "")
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Check = %v, want one line with %q", err, tt.want)
			}
		})
	}
}

func TestAliasesDurationsAndTheModelsProvider(t *testing.T) {
	s, err := resolve(t, map[string]string{"model": "fast", "timeout": "90", "idle-timeout": "1m30s"}, map[string]string{"OPENAI_API_KEY": "k"}, `{"aliases":{"fast":"gpt-4.1-nano"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "gpt-4.1-nano" || s.Alias != "fast" || s.Timeout != 90*time.Second || s.IdleTimeout != 90*time.Second {
		t.Errorf("model %q alias %q timeout %s idle %s", s.Model, s.Alias, s.Timeout, s.IdleTimeout)
	}
	// A model names its maker when no provider is named, over the key
	// detection order.
	s, err = resolve(t, map[string]string{"model": "sonnet"}, map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"}, "")
	if err != nil {
		t.Fatalf("-m sonnet: %v", err) // s may be nil
	}
	if s.Provider != "anthropic" || s.Model != "claude-sonnet-4-6" {
		t.Errorf("-m sonnet: provider %q model %q", s.Provider, s.Model)
	}
	// A named provider wins over the model's maker.
	s, err = resolve(t, map[string]string{"model": "gpt-4o", "provider": "compatible", "base-url": "http://local/v1"}, nil, "")
	if err != nil {
		t.Fatalf("--provider compatible -m gpt-4o: %v", err) // s may be nil
	}
	if s.Provider != "compatible" {
		t.Errorf("--provider compatible -m gpt-4o: %q", s.Provider)
	}
	if _, err := resolve(t, map[string]string{"idle-timeout": "0"}, nil, ""); err == nil {
		t.Error("an idle timeout of 0 was accepted")
	}
}
