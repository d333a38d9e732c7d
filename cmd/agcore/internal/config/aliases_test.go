package config

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// TestAliasesAndDefaultsAreInTheCatalog: every built-in alias and every
// provider's default model names a model the catalog lists under its
// maker, so `-m sonnet` and a bare `--provider X` get a known window and
// price.
func TestAliasesAndDefaultsAreInTheCatalog(t *testing.T) {
	models := catalog.Default().Models()
	listed := func(model string) bool {
		return slices.ContainsFunc(models, func(e llm.ModelInfo) bool { return e.Name == catalog.Normalize(model) && e.Price != nil })
	}
	for alias, model := range BuiltinAliases {
		if !listed(model) {
			t.Errorf("alias %s → %s: not a priced model of the catalog", alias, model)
		}
		if _, ok := KindOfModel(model); !ok {
			t.Errorf("alias %s → %s: no provider makes it", alias, model)
		}
	}
	for _, k := range registry.All() {
		if k.DefaultModel != "" && k.Wire != registry.WireDemo && !slices.ContainsFunc(models, func(e llm.ModelInfo) bool { return e.Name == k.DefaultModel }) {
			t.Errorf("provider %s: default model %s is not in the catalog", k.Name, k.DefaultModel)
		}
	}
}

// TestClaudeAliasesAreTheNewest: sonnet, opus and haiku name the newest
// model of their family in the catalog, and the anthropic provider's
// default is the newest Sonnet: one default per maker.
func TestClaudeAliasesAreTheNewest(t *testing.T) {
	newest := map[string]string{}
	best := map[string][]int{}
	for _, e := range catalog.Default().Models() {
		if e.Provider != "anthropic" {
			continue
		}
		for _, family := range []string{"sonnet", "opus", "haiku"} {
			rest, ok := strings.CutPrefix(e.Name, "claude-"+family+"-")
			if !ok {
				continue
			}
			var version []int
			for _, part := range strings.Split(rest, "-") {
				n, err := strconv.Atoi(part)
				if err != nil {
					version = nil
					break
				}
				version = append(version, n)
			}
			if version != nil && slices.Compare(version, best[family]) > 0 {
				best[family], newest[family] = version, e.Name
			}
		}
	}
	for _, family := range []string{"sonnet", "opus", "haiku"} {
		if newest[family] == "" || BuiltinAliases[family] != newest[family] {
			t.Errorf("alias %s → %s; the catalog's newest is %s", family, BuiltinAliases[family], newest[family])
		}
	}
	if k, _ := KindNamed("anthropic"); k.DefaultModel != newest["sonnet"] {
		t.Errorf("anthropic's default model %s; the newest Sonnet is %s", k.DefaultModel, newest["sonnet"])
	}
}
