package config

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agcore/agcore/internal/redact"
	"github.com/agcore/agcore/session"
)

// Entry is one line of the effective configuration, as `agcore config`
// shows it.
type Entry struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Entries returns the effective configuration with the secrets masked: the
// API key appears only as whether it is set and which variable holds it.
func (s *Settings) Entries() []Entry {
	src := func(k string) string { return s.Sources[k] }
	fileState := "not found"
	if s.FileFound {
		fileState = "loaded"
	}
	provider := s.Provider
	if provider == "" {
		provider = "(none configured: see `agcore run --help`, or try `agcore demo`)"
	} else if s.Kind.Name != s.Provider {
		provider += " (" + s.Kind.Name + ")"
	}
	key := "(not needed)"
	switch {
	case s.KeyEnv != "" && s.APIKey != "":
		key = "set in $" + s.KeyEnv + " (hidden)"
	case s.KeyEnv != "":
		key = "not set ($" + s.KeyEnv + ")"
	}
	var mcp []string
	for _, m := range s.MCP {
		v := m.Command
		if m.URL != "" {
			v = RedactURL(m.URL)
		}
		if m.Name != "" {
			v = m.Name + "=" + v
		}
		if m.Approval {
			v += " (approval)"
		}
		if len(m.Headers) > 0 {
			v += " (headers " + strings.Join(slices.Sorted(maps.Keys(m.Headers)), ", ") + ": hidden)"
		}
		if m.Timeout != "" {
			v += " (timeout " + m.Timeout + ")"
		}
		mcp = append(mcp, v)
	}
	store := s.StoreDescription()
	window := "from the model catalog"
	if s.ContextWindow > 0 {
		window = strconv.Itoa(s.ContextWindow)
	}
	return []Entry{
		{"home", s.Home, "AGCORE_HOME or ~/.agcore"},
		{"config file", s.ConfigFile + " (" + fileState + ")", ""},
		{"provider", provider, src("provider")},
		{"model", s.Model, src("model")},
		{"base url", RedactURL(s.BaseURL), src("base_url")},
		{"api key", key, "environment only"},
		{"store", store, src("store")},
		{"tools", strings.Join(s.Tools, ","), src("tools")},
		{"root", s.Root, src("root")},
		{"allowed secrets", orName(strings.Join(s.AllowSecrets, " "), "(none: the file tools refuse keys and credentials)"), src("allow_secrets")},
		{"mcp", orName(strings.Join(mcp, "; "), "(none)"), src("mcp")},
		{"max steps", strconv.Itoa(s.MaxSteps), src("max_steps")},
		{"max cost", costText(s.MaxCost), src("max_cost")},
		{"token budget", tokensText(s.TokenBudget), src("token_budget")},
		{"session max cost", costText(s.SessionMaxCost), src("session_max_cost")},
		{"session token budget", tokensText(s.SessionTokenBudget), src("session_token_budget")},
		{"context window", window, src("context_window")},
		{"compact", s.Compact, src("compact")},
		{"system", orName(s.System, "(built-in instructions)"), src("system")},
		{"retries", strconv.Itoa(s.Retries), src("retries")},
		{"timeout", durationText(s.Timeout), src("timeout")},
		{"idle timeout", durationText(s.IdleTimeout), src("idle_timeout")},
		{"markdown", map[bool]string{true: "off (--raw)", false: "on a terminal"}[s.Raw], src("raw")},
		{"log", orName(s.Log, "(off)"), src("log")},
	}
}

func costText(usd float64) string {
	if usd == 0 {
		return "none"
	}
	return "$" + strconv.FormatFloat(usd, 'f', -1, 64)
}

func tokensText(n int) string {
	if n == 0 {
		return "none"
	}
	return strconv.Itoa(n) + " tokens"
}

func durationText(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

// Print writes the entries as an aligned table.
func Print(w io.Writer, entries []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range entries {
		src := ""
		if e.Source != "" {
			src = "[" + e.Source + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, oneLine(e.Value), src)
	}
	return tw.Flush()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// RedactURL hides the secrets of a base URL: its password and its query
// (either may hold a key).
func RedactURL(raw string) string { return redact.Base(raw) }

// StoreDescription is the store as `agcore config` shows it: the default
// database's path when none is set, a URL without its password.
func (s *Settings) StoreDescription() string {
	if s.Store == "" || s.Store == "sqlite" || s.Store == "sqlite:" {
		return "sqlite:" + DefaultDB(s.Home)
	}
	return session.Redact(s.Store)
}

// JSON is the effective configuration as one object, for `agcore config
// --json | jq .provider`: each setting under its own name, the API key only
// as the variable it is read from and whether it is set, and where each
// setting came from under "sources".
func (s *Settings) JSONObject() map[string]any {
	store := s.StoreDescription()
	mcp := make([]map[string]any, 0, len(s.MCP))
	for _, m := range s.MCP {
		e := map[string]any{"approval": m.Approval}
		if m.Name != "" {
			e["name"] = m.Name
		}
		if m.Command != "" {
			e["command"] = m.Command
		} else {
			e["url"] = RedactURL(m.URL)
		}
		if len(m.Headers) > 0 {
			// Only the names: the values are credentials.
			e["headers"] = slices.Sorted(maps.Keys(m.Headers))
		}
		if m.Timeout != "" {
			e["timeout"] = m.Timeout
		}
		mcp = append(mcp, e)
	}
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	return map[string]any{
		"home":                 s.Home,
		"config_file":          s.ConfigFile,
		"config_file_found":    s.FileFound,
		"provider":             s.Provider,
		"kind":                 s.Kind.Name,
		"model":                s.Model,
		"alias":                s.Alias,
		"base_url":             RedactURL(s.BaseURL),
		"api_key_env":          s.KeyEnv,
		"api_key_set":          s.APIKey != "",
		"store":                store,
		"tools":                tools,
		"root":                 s.Root,
		"mcp":                  mcp,
		"max_steps":            s.MaxSteps,
		"max_cost":             s.MaxCost,
		"token_budget":         s.TokenBudget,
		"session_max_cost":     s.SessionMaxCost,
		"session_token_budget": s.SessionTokenBudget,
		"context_window":       s.ContextWindow,
		"compact":              s.Compact,
		"system":               s.System,
		"retries":              s.Retries,
		"timeout":              s.Timeout.String(),
		"idle_timeout":         s.IdleTimeout.String(),
		"log":                  s.Log,
		"raw":                  s.Raw,
		"hide_thinking":        s.HideThinking,
		"aliases":              s.Aliases,
		"sources":              s.Sources,
	}
}
