package anthropic

import "github.com/agcore/agcore/llm"

// lookupModel returns what is known about a model's limits.
//
// TODO(catalog): use catalog.Lookup once package catalog lands; until then
// nothing is known and callers fall back to their defaults.
func lookupModel(name string) (llm.ModelInfo, bool) {
	_ = name
	return llm.ModelInfo{}, false
}
