package registry_test

import (
	_ "github.com/agcore/agcore/provider/builtin"
	. "github.com/agcore/agcore/provider/registry"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSection returns the lines of the README's section that starts
// with heading, up to the next heading of the same level.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("the README has no %q", heading)
	}
	level := strings.SplitN(heading, " ", 2)[0] + " "
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], level) {
			end = i
			break
		}
	}
	return lines[start:end]
}

// cells splits a Markdown table row into its trimmed cells.
func cells(row string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(row), "|"), " | ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

var (
	codeSpan = regexp.MustCompile("`([^`]*)`")
	envName  = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// spans returns the code spans of s; vars only those that name an
// environment variable.
func spans(s string, vars bool) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		if !vars || envName.MatchString(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func set(values ...string) []string {
	var out []string
	for _, v := range values {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// TestREADMEProvidersTable: the README's Providers table has one row per
// provider of the registry, in its order, with the same key variables,
// base-URL variable, default base URL and default model, so the two
// cannot drift.
func TestREADMEProvidersTable(t *testing.T) {
	var names []string
	for _, line := range readmeSection(t, "## Providers") {
		if !strings.HasPrefix(line, "| `") || strings.HasPrefix(line, "| `--provider` |") {
			continue // not a row, or the header
		}
		c := cells(line)
		if len(c) != 6 {
			t.Errorf("row with %d cells, want 6: %s", len(c), line)
			continue
		}
		name := strings.Trim(c[0], "`")
		names = append(names, name)
		p, ok := Lookup(name)
		if !ok {
			t.Errorf("the README names a provider %q the registry does not have", name)
			continue
		}
		if got, want := set(spans(c[2], true)...), set(p.KeyEnv, p.AltKeyEnv); !slices.Equal(got, want) {
			t.Errorf("%s: the README's key variables %v, the registry's %v", name, got, want)
		}
		if got, want := set(spans(c[3], true)...), set(p.BaseEnv); !slices.Equal(got, want) {
			t.Errorf("%s: the README's base-URL variables %v, the registry's %v", name, got, want)
		}
		switch base := spans(c[3], false); {
		case p.Wire == WireDemo:
			if c[3] != p.DefaultBase {
				t.Errorf("%s: base %q, want %q", name, c[3], p.DefaultBase)
			}
		case p.DefaultBase == "":
			if !strings.Contains(c[3], "none") {
				t.Errorf("%s: the README gives a default base URL the registry does not have: %s", name, c[3])
			}
		case !slices.Contains(base, p.DefaultBase):
			t.Errorf("%s: the README's base URL %v, the registry's %s", name, base, p.DefaultBase)
		}
		if model := spans(c[4], false); p.DefaultModel == "" && !strings.HasPrefix(c[4], "none") || p.DefaultModel != "" && !slices.Equal(model, []string{p.DefaultModel}) {
			t.Errorf("%s: the README's default model %q, the registry's %q", name, c[4], p.DefaultModel)
		}
		if p.KeyEnv == "" && !strings.HasPrefix(c[2], "none") {
			t.Errorf("%s: the README asks for a key: %s", name, c[2])
		}
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("the README's providers %v\nthe registry's         %v", names, Names())
	}
}

// TestREADMEFlagTable: the CLI flag table's --provider row names every
// provider, its key row every key variable, its --base-url row every
// base-URL variable.
func TestREADMEFlagTable(t *testing.T) {
	rows := map[string]string{}
	for _, line := range readmeSection(t, "## The `agcore` command") {
		if c := cells(line); len(c) == 3 && strings.HasPrefix(line, "| ") {
			rows[c[0]] = c[1] + " | " + c[2]
		}
	}
	provider, key, base := rows["`--provider NAME`"], rows["(key)"], rows["`--base-url URL`"]
	if provider == "" || key == "" || base == "" {
		t.Fatalf("the flag table lacks the --provider, (key) or --base-url row: %q %q %q", provider, key, base)
	}
	words := regexp.MustCompile(`[a-z][a-z-]*`).FindAllString(provider, -1)
	var keys, bases []string
	for _, p := range All() {
		if !slices.Contains(words, p.Name) {
			t.Errorf("the --provider row does not name %s", p.Name)
		}
		keys = append(keys, p.KeyEnv, p.AltKeyEnv)
		bases = append(bases, p.BaseEnv)
	}
	if got, want := set(spans(key, true)...), set(keys...); !slices.Equal(got, want) {
		t.Errorf("the key row's variables %v, the registry's %v", got, want)
	}
	if got, want := set(spans(base, true)...), set(bases...); !slices.Equal(got, want) {
		t.Errorf("the --base-url row's variables %v, the registry's %v", got, want)
	}
}
