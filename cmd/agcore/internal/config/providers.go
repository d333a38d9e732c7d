package config

import (
	"fmt"
	"strings"

	"github.com/agcore/agcore/provider/registry"

	// Every adapter agcore ships registers itself.
	_ "github.com/agcore/agcore/provider/builtin"
)

// Kind is one of the provider kinds the CLI can talk to: an entry of the
// provider registry (how its key and base URL are found, which model it
// uses by default, which API it speaks).
type Kind = registry.Provider

// Kinds lists the provider kinds, in the order auto-detection tries them:
// the registry's table, read when called (an adapter registers itself in
// its package's init).
func Kinds() []Kind { return registry.All() }

// KindNamed returns the kind called name.
func KindNamed(name string) (Kind, bool) { return registry.Lookup(name) }

// KindNames lists the kinds' names, comma-separated.
func KindNames() string { return kindNames() }

func kindNames() string { return strings.Join(registry.Names(), ", ") }

// SetupHelp is what run and chat print when no provider is configured
// (problem is empty) or the configured one cannot be used (problem says
// why): exactly how to configure each provider of the registry, and the
// offline demo.
func SetupHelp(home, problem string) string {
	if problem == "" {
		problem = "no model provider is configured"
	}
	var b strings.Builder
	b.WriteString("agcore: " + problem + ".\n\n")
	b.WriteString("Configure one with environment variables (or --provider/--model/--base-url, or " + ConfigPath(home) + "):\n\n")
	var bases []string
	for _, k := range registry.All() {
		if k.BaseEnv != "" && !contains(bases, k.BaseEnv) {
			bases = append(bases, k.BaseEnv)
		}
		if k.Wire == registry.WireDemo {
			continue
		}
		fmt.Fprintf(&b, "  %-17s %s\n", k.Name, setupLine(k))
	}
	b.WriteString("\nWith several keys set, the first in this list is used; AGCORE_PROVIDER=NAME picks another.\n")
	b.WriteString("Base URLs: " + strings.Join(bases, ", ") + " (or --base-url).\n")
	b.WriteString("To see the whole machinery offline first, with no key: agcore demo (or --provider demo)\n")
	return b.String()
}

// setupLine is how to configure kind k in one line.
func setupLine(k Kind) string {
	var export []string
	if !k.Detect {
		export = append(export, "AGCORE_PROVIDER="+k.Name)
	}
	switch {
	case k.DefaultBase == "":
		export = append(export, k.BaseEnv+"=http://HOST:PORT/v1")
	case k.KeyRequired:
		export = append(export, k.KeyEnv+"=...")
	}
	if k.DefaultModel == "" {
		export = append(export, "AGCORE_MODEL=NAME")
	}
	line := fmt.Sprintf("%-50s", "export "+strings.Join(export, " "))
	var notes []string
	if k.AltKeyEnv != "" {
		notes = append(notes, "or "+k.AltKeyEnv)
	}
	if !k.KeyRequired && k.DefaultBase != "" {
		key := "no key"
		if k.KeyEnv != "" {
			key = k.KeyEnv + " if it needs a key"
		}
		notes = append(notes, "server at "+k.DefaultBase+", "+key)
	}
	if k.DefaultModel != "" {
		notes = append(notes, "default model "+k.DefaultModel)
	}
	if len(notes) == 0 {
		return strings.TrimRight(line, " ")
	}
	return line + " (" + strings.Join(notes, "; ") + ")"
}
