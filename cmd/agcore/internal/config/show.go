package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
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
		mcp = append(mcp, v)
	}
	store := s.Store
	if store == "" {
		store = "sqlite:" + DefaultDB(s.Home)
	}
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
		{"mcp", orName(strings.Join(mcp, "; "), "(none)"), src("mcp")},
		{"max steps", strconv.Itoa(s.MaxSteps), src("max_steps")},
		{"context window", window, src("context_window")},
		{"compact", s.Compact, src("compact")},
		{"system", orName(s.System, "(built-in instructions)"), src("system")},
		{"retries", strconv.Itoa(s.Retries), src("retries")},
		{"log", orName(s.Log, "(off)"), src("log")},
	}
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

// RedactURL hides the credentials and the query of a URL (either may hold a
// secret).
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	out := raw
	if i := strings.IndexAny(out, "?#"); i >= 0 {
		out = out[:i] + "?…"
	}
	if scheme, rest, ok := strings.Cut(out, "://"); ok {
		if at := strings.LastIndexByte(strings.SplitN(rest, "/", 2)[0], '@'); at >= 0 {
			out = scheme + "://…@" + rest[at+1:]
		}
	}
	return out
}
