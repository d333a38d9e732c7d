package anthropic

import (
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

// lookupModel returns what the catalog knows about a model's limits.
func lookupModel(name string) (llm.ModelInfo, bool) {
	return catalog.Lookup(name)
}
