package cli

// agcore run --temporal: the turn is resolved here exactly as a local run
// resolves it (flags, environment, config file, --agent and its handoffs),
// and what describes the agents travels to the workflow as data
// ([]agent.Spec); agcore-temporal run submits it. What lives on the worker
// (keys, the store, the file tools' root, MCP servers) stays the worker's.

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/replay"
)

// workerFlags are run's flags that configure the worker, not a durable
// turn: given with --temporal, each is refused in one line naming where
// it belongs.
var workerFlags = map[string]string{
	"store": "agcore worker --store", "root": "agcore worker --root", "mcp": "agcore worker --mcp",
	"mcp-url": "agcore worker --mcp-url", "allow-secret": "agcore worker --allow-secret",
	"max-result-bytes": "agcore worker --max-result-bytes", "base-url": "agcore worker --base-url",
	"idle-timeout": "agcore worker (its adapters' idle timeout)", "log": "agcore worker --log",
	"retries":  "the workflow's retry policy (Temporal retries each model call)",
	"continue": "the store's, which only the worker reads: name the --session",
}

// forwarded are the flags agcore-temporal run takes as they are.
var forwarded = []string{"temporal", "session", "json", "timeout", "record", "yes", "otel", "redis", "blobs", "turn",
	"namespace", "task-queue", "max-tokens", "temperature", "approval-timeout", "model-heartbeat", "persist-timeout", "tool-timeout", "raw", "hide-thinking"}

// durableRun runs agcore run --temporal: it resolves the turn's agents,
// writes them for agcore-temporal run and runs it.
func (a *app) durableRun(cmd *cobra.Command, args []string) error {
	if cmd.Flags().Changed("attach") {
		return exit(ExitUsage, "-a does not go with --temporal yet: a durable turn's input is text")
	}
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if where, ok := workerFlags[f.Name]; ok && err == nil {
			err = exit(ExitUsage, "--%s belongs to the worker in a durable run: %s", f.Name, where)
		}
	})
	if err != nil {
		return err
	}
	s, err := a.settings(cmd)
	var se *config.SetupError
	switch {
	case errors.As(err, &se) && se.Settings != nil:
		s = se.Settings // no key here: the worker has the keys
	case err != nil:
		return err
	}
	specs, err := a.durableSpecs(cmd, s)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agcore-durable-")
	if err != nil {
		return exit(ExitFailed, "%v", err)
	}
	defer os.RemoveAll(dir)
	write := func(name string, v any) (string, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		p := dir + string(os.PathSeparator) + name
		return p, os.WriteFile(p, b, 0o600)
	}
	agentsFile, err := write("agents.json", specs)
	if err != nil {
		return exit(ExitFailed, "%v", err)
	}
	fwd := []string{"--agents=" + agentsFile}
	if recordPath(cmd) != "" {
		h := durableHeader(s, specs[0])
		hf, err := write("header.json", h)
		if err != nil {
			return exit(ExitFailed, "%v", err)
		}
		fwd = append(fwd, "--record-header="+hf)
	}
	if path, _ := cmd.Flags().GetString("schema"); path != "" {
		if s.JSON {
			return exit(ExitUsage, "--schema prints the answer itself: it does not combine with --json")
		}
		schema, err := readSchema(path)
		if err != nil {
			return err
		}
		fwd = append(fwd, "--schema="+string(schema))
	}
	for _, name := range forwarded {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		fwd = append(fwd, "--"+name+"="+f.Value.String())
	}
	if s.Timeout > 0 && !cmd.Flags().Changed("timeout") && s.Sources["timeout"] != "default" {
		fwd = append(fwd, "--timeout="+s.Timeout.String())
	}
	if a.otelURL != "" && !cmd.Flags().Changed("otel") {
		fwd = append(fwd, "--otel="+a.otelURL)
	}
	if len(args) > 0 {
		fwd = append(fwd, "--")
	}
	return a.execTemporal(cmd.Context(), "run", append(fwd, args...))
}

// durableSpecs returns the turn's agents: the one the settings describe
// (the command's, or the config file's --agent), then the agents its
// handoffs reach, each resolved as --agent NAME would resolve it.
func (a *app) durableSpecs(cmd *cobra.Command, s *config.Settings) ([]agent.Spec, error) {
	main := durableSpec(s, "agcore")
	if s.Agent == "" {
		return []agent.Spec{main}, nil
	}
	f, _, err := config.LoadFile(s.ConfigFile)
	if err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	if err := config.CheckHandoffs(f.Agents, "agcore"); err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	specs := []agent.Spec{main}
	seen := map[string]bool{s.Agent: true}
	for i := 0; i < len(specs); i++ {
		for _, h := range f.Agents[specs[i].Name].Handoffs {
			specs[i].Handoffs = append(specs[i].Handoffs, h)
			if seen[h] {
				continue
			}
			seen[h] = true
			if h == "agcore" {
				in := a.input(cmd)
				delete(in.Flags, config.AgentFlag)
				hs, err := resolveDurable(in)
				if err != nil {
					return nil, exit(ExitUsage, "agent %q: %v", h, err)
				}
				specs = append(specs, durableSpec(hs, "agcore"))
				continue
			}
			in := a.input(cmd)
			in.Flags[config.AgentFlag] = h
			hs, err := resolveDurable(in)
			if err != nil {
				return nil, exit(ExitUsage, "agent %q of the config file: %v", h, err)
			}
			specs = append(specs, durableSpec(hs, h))
		}
	}
	return specs, nil
}

// resolveDurable resolves settings without needing a key (the worker's).
func resolveDurable(in config.Input) (*config.Settings, error) {
	s, err := config.Resolve(in)
	var se *config.SetupError
	if errors.As(err, &se) && se.Settings != nil {
		return se.Settings, nil
	}
	return s, err
}

// durableSpec is the agent the settings describe, as data. The provider
// and the model go only when the user chose them (a flag, the
// environment, the config file): otherwise the worker's own apply.
func durableSpec(s *config.Settings, fallback string) agent.Spec {
	name := s.Agent
	if name == "" {
		name = fallback
	}
	sp := agent.Spec{
		Name:          name,
		Instructions:  durableInstructions(s),
		Tools:         slices.Clone(s.Tools),
		ContextWindow: s.ContextWindow,
		Compact:       s.Compact,
		Budget:        budgetOf(s.MaxCost, s.TokenBudget),
		SessionBudget: budgetOf(s.SessionMaxCost, s.SessionTokenBudget),
		Guardrails:    s.Guardrails,
	}
	if s.MaxSteps != config.DefaultMaxSteps {
		sp.MaxSteps = s.MaxSteps
	}
	switch {
	case s.Sources["tools"] == "default":
		sp.Tools = nil // every tool the worker has (its --tools, its MCP servers')
	case sp.Tools == nil:
		sp.Tools = []string{}
	}
	if src := s.Sources["provider"]; s.Provider != "" && src != "none" && !strings.HasPrefix(src, "detected") {
		sp.Provider = s.Provider
		if s.Sources["model"] != "default" {
			sp.Model = s.Model
		}
	}
	if f, _, err := config.LoadFile(s.ConfigFile); err == nil {
		if ac, ok := f.Agents[name]; ok {
			sp.Description = ac.Description
		}
	}
	return sp
}

// durableInstructions are --system, or agcore run's default, which names
// the file tools' directory as the worker's (--root there).
func durableInstructions(s *config.Settings) string {
	if s.System != "" {
		return s.System
	}
	text := "You are agcore, a helpful assistant in a terminal. Answer concisely."
	if len(s.Tools) > 0 || s.Sources["tools"] == "default" {
		text += " Use the tools you are given when they help; the file tools work inside the worker's directory and take paths relative to it."
	}
	return text
}

// durableHeader is the header of a durable run's record: what agcore
// replay needs to rebuild the agent in this process.
func durableHeader(s *config.Settings, sp agent.Spec) replay.Header {
	info, _ := catalog.Default().LookupFor(sp.Provider, sp.Model)
	info.Provider, info.Name = sp.Provider, sp.Model
	if sp.ContextWindow > 0 {
		info.ContextWindow = sp.ContextWindow
	}
	// The instructions sent are the durable ones (durableInstructions):
	// replay uses them as --system, so that it sends what was sent.
	meta := map[string]string{"tools": strings.Join(sp.Tools, ","), "compact": s.Compact, "durable": "true", "system": sp.Instructions}
	if s.MaxSteps != config.DefaultMaxSteps {
		meta["max_steps"] = strconv.Itoa(s.MaxSteps)
	}
	return replay.Header{Agcore: readBuildInfo().Version, Provider: sp.Provider, Model: sp.Model,
		ContextWindow: info.ContextWindow, MaxOutputTokens: info.MaxOutputTokens, Instructions: sp.Instructions,
		Tools: slices.Clone(sp.Tools), Meta: meta}
}

// budgetOf is a limit on cost and tokens (zero values: none).
func budgetOf(cost float64, tokens int) budget.Limits {
	return budget.Limits{CostUSD: cost, Tokens: tokens}
}
