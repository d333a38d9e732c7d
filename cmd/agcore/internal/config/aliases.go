package config

import (
	"maps"
	"slices"

	"github.com/agcore/agcore/catalog"
)

// BuiltinAliases are the short model names every user has: `-m sonnet`,
// `-m 4o`. The config file's "aliases" add to them and may replace them.
var BuiltinAliases = map[string]string{
	"sonnet":  "claude-sonnet-4-6",
	"opus":    "claude-opus-4-8",
	"haiku":   "claude-haiku-4-5",
	"4o":      "gpt-4o",
	"4o-mini": "gpt-4o-mini",
	"4.1":     "gpt-4.1",
	"mini":    "gpt-4.1-mini",
	"nano":    "gpt-4.1-nano",
	"5":       "gpt-5",
	"gpt5":    "gpt-5",
	"o3":      "o3",
	"ds":      "deepseek-chat",
	"r1":      "deepseek-reasoner",
}

// Aliases returns the built-in aliases with the user's added over them.
func Aliases(user map[string]string) map[string]string {
	out := maps.Clone(BuiltinAliases)
	for k, v := range user {
		if k != "" && v != "" {
			out[k] = v
		}
	}
	return out
}

// SortedAliases returns the alias names in order.
func SortedAliases(aliases map[string]string) []string {
	return slices.Sorted(maps.Keys(aliases))
}

// modelVendors are the kinds a model name alone can name: the companies
// that make the models the catalog lists under them.
var modelVendors = []string{"openai", "anthropic", "deepseek", "gemini"}

// catalogProvider is the provider the catalog lists a kind's models under
// (the registry's CatalogName: "google" for gemini).
func catalogProvider(kind string) string {
	if k, ok := KindNamed(kind); ok {
		return k.CatalogName()
	}
	return kind
}

// KindOfModel returns the kind whose own model model is (claude-* is
// Anthropic's, gpt-* OpenAI's, gemini-* Google's), as the catalog lists it.
func KindOfModel(model string) (Kind, bool) {
	if model == "" {
		return Kind{}, false
	}
	cat := catalog.Default()
	for _, name := range modelVendors {
		info, ok := cat.LookupFor(catalogProvider(name), model)
		if ok && info.Price != nil { // listed with this vendor's own price
			return KindNamed(name)
		}
	}
	return Kind{}, false
}

// kindOfModel returns the kind the model given by flag or environment
// (after aliases) belongs to, when no provider is named.
func (r *resolver) kindOfModel() (Kind, bool) {
	model, ok := r.in.Flags["model"]
	if !ok {
		model, _ = r.in.Getenv("AGCORE_MODEL")
	}
	if m, ok := r.set.Aliases[model]; ok {
		model = m
	}
	return KindOfModel(model)
}
