package config

import (
	"strings"
	"testing"
)

func TestCheckHandoffs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agents map[string]AgentConfig
		want   string // "" for no error
	}{
		{"none", map[string]AgentConfig{"a": {}}, ""},
		{"cycle", map[string]AgentConfig{"a": {Handoffs: []string{"b"}}, "b": {Handoffs: []string{"a", "agcore"}}}, ""},
		{"unknown", map[string]AgentConfig{"a": {Handoffs: []string{"b"}}}, `agent "a" of the config file hands off to "b", which is not an agent of the file`},
		{"itself", map[string]AgentConfig{"a": {Handoffs: []string{"a"}}}, `agent "a" of the config file hands off to itself`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHandoffs(tc.agents, "agcore")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
