package compact

import (
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

// Scale applied by [CounterFor] to Claude models. Anthropic's tokenizer is
// not public, and Claude models count more tokens than o200k_base for the
// same text, so the estimate is raised to keep budgets on the safe side;
// llm.ModelInfo's safety margin covers the rest. Use Anthropic's
// token-counting endpoint where an exact figure matters.
const anthropicScale = 1.2

// CounterFor returns the counter for a model: an [Estimator], scaled up for
// Claude models (a name in the "claude" family, whoever serves it, see
// catalog.InFamily). It needs no vocabulary and is safe for concurrent use.
// Exact counting for OpenAI models is in package compact/tiktoken
// (tiktoken.For), which links the tokenizer's tables (about 12 MB) into the
// binary; this package does not.
func CounterFor(info llm.ModelInfo) TokenCounter {
	if info.Provider == "anthropic" || catalog.InFamily(info.Name, "claude") {
		return Estimator{Scale: anthropicScale}
	}
	return Estimator{}
}
