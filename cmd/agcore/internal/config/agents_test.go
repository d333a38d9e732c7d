package config

import (
	"errors"
	"slices"
	"testing"
)

// A named agent's settings replace the command's; a provider without a
// model or base URL drops the command's (the provider's own defaults
// apply); what the agent does not set stays the command's.
func TestAgentSettingsReplaceTheCommands(t *testing.T) {
	file := `{"provider":"openai","max_steps":7,"system":"file system","agents":{
		"coder": {"provider":"anthropic","system":"You write Go.","tools":["read_file","grep"],"max_steps":3},
		"local": {"model":"qwen3","base_url":"http://gpu:8000/v1","tools":[]},
		"plain": {"description":"the defaults"}}}`
	env := map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
	tests := []struct {
		agent, provider, model, base, system string
		tools                                []string
		steps                                int
	}{
		{"coder", "anthropic", "", "https://api.anthropic.com", "You write Go.", []string{"read_file", "grep"}, 3},
		{"local", "openai", "qwen3", "http://gpu:8000/v1", "file system", nil, 7},
		{"plain", "openai", "gpt-4.1-mini", "https://api.openai.com/v1", "file system", []string{"read_file", "list_dir", "grep"}, 7},
	}
	// The provider's own default model, as the command alone resolves it.
	anth, err := resolve(t, map[string]string{"provider": "anthropic"}, env, "")
	if err != nil {
		t.Fatal(err)
	}
	tests[0].model = anth.Model
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			s, err := resolve(t, map[string]string{AgentFlag: tt.agent, "model": "cmd-model", "base-url": "http://cmd/v1"}, env, file)
			if err != nil {
				t.Fatal(err)
			}
			if s.Agent != tt.agent || s.Provider != tt.provider || s.System != tt.system || s.MaxSteps != tt.steps || !slices.Equal(s.Tools, tt.tools) {
				t.Errorf("agent %q provider %q system %q steps %d tools %q", s.Agent, s.Provider, s.System, s.MaxSteps, s.Tools)
			}
			// The command's model and base URL stay unless the agent names a
			// provider (then its defaults) or its own.
			wantModel, wantBase := tt.model, tt.base
			if tt.agent == "plain" {
				wantModel, wantBase = "cmd-model", "http://cmd/v1"
			}
			if s.Model != wantModel || s.BaseURL != wantBase {
				t.Errorf("model %q base %q, want %q %q", s.Model, s.BaseURL, wantModel, wantBase)
			}
		})
	}
}

func TestUnknownAgent(t *testing.T) {
	_, err := resolve(t, map[string]string{AgentFlag: "nope"}, nil, `{"agents":{"b":{},"a":{}}}`)
	var ue *UnknownAgentError
	if !errors.As(err, &ue) || ue.Name != "nope" || !slices.Equal(ue.Known, []string{"a", "b"}) {
		t.Fatalf("error %v", err)
	}
	_, err = resolve(t, map[string]string{AgentFlag: "nope"}, nil, "")
	if !errors.As(err, &ue) || len(ue.Known) != 0 {
		t.Fatalf("without a file: %v", err)
	}
}
