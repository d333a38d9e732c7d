package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// AgentFlag is the Input flag that names the config file's agent whose
// settings Resolve applies: run and chat set it from --agent, serve for each
// of its named agents.
const AgentFlag = "agent"

// AgentNames returns the names of the file's agents, sorted.
func (f File) AgentNames() []string { return slices.Sorted(maps.Keys(f.Agents)) }

// UnknownAgentError reports an agent name the config file does not have.
type UnknownAgentError struct {
	Name       string
	ConfigFile string
	Known      []string // the file's agents, sorted
}

// Error names the agent, the file and the agents it has.
func (e *UnknownAgentError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("--agent %q: the config file %s has no agents (its \"agents\" section names them)", e.Name, e.ConfigFile)
	}
	return fmt.Sprintf("--agent %q: no such agent in %s; its agents: %s", e.Name, e.ConfigFile, strings.Join(e.Known, ", "))
}

// applyAgent returns the flags of in with the file's agent name applied:
// each setting the agent gives replaces the command's (a provider given
// without a model or base URL drops the command's, so that the provider's
// own defaults apply). It is the one place a named agent's settings are
// read, for run, chat and serve alike.
func applyAgent(in Input, f File, name, configFile string) (map[string]string, error) {
	ac, ok := f.Agents[name]
	if !ok {
		return nil, &UnknownAgentError{Name: name, ConfigFile: configFile, Known: f.AgentNames()}
	}
	flags := make(map[string]string, len(in.Flags)+6)
	for k, v := range in.Flags {
		flags[k] = v
	}
	if ac.Provider != "" {
		delete(flags, "model")
		delete(flags, "base-url")
	}
	set := func(flag, v string) {
		if v != "" {
			flags[flag] = v
		}
	}
	set("provider", ac.Provider)
	set("model", ac.Model)
	set("base-url", ac.BaseURL)
	set("system", ac.System)
	if ac.Tools != nil {
		flags["tools"] = strings.Join(*ac.Tools, ",")
	}
	if ac.MaxSteps > 0 {
		flags["max-steps"] = strconv.Itoa(ac.MaxSteps)
	}
	return flags, nil
}
