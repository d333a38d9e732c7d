package compact

import "strings"

// Scale applied by [CounterFor] to Claude models. Anthropic's tokenizer is
// not public, and Claude models count more tokens than o200k_base for the
// same text, so the estimate is raised to keep budgets on the safe side;
// llm.ModelInfo's safety margin covers the rest. Use Anthropic's
// token-counting endpoint where an exact figure matters.
const anthropicScale = 1.2

// CounterFor returns the counter for a model id: the exact o200k_base
// counter for gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the o-series; the exact
// cl100k_base counter for gpt-4, gpt-4-turbo and gpt-3.5; an [Estimator]
// (scaled up for Claude models) for every other model. A routing prefix such
// as "openai/" (OpenRouter) is ignored. The returned counters are shared and
// safe for concurrent use.
func CounterFor(model string) TokenCounter {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "ft:")
	switch {
	case hasModelPrefix(m, "gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss", "codex-mini"):
		return O200k()
	case hasModelPrefix(m, "gpt-4", "gpt-3.5", "gpt-35"):
		return Cl100k()
	case strings.HasPrefix(m, "claude"):
		return Estimator{Scale: anthropicScale}
	}
	return Estimator{}
}

// hasModelPrefix reports whether m is one of the prefixes or starts with one
// followed by a separator ("-", ".", ":", "@"), so "o3" matches "o3-mini"
// but "o1" does not match "o1x".
func hasModelPrefix(m string, prefixes ...string) bool {
	for _, p := range prefixes {
		if !strings.HasPrefix(m, p) {
			continue
		}
		if len(m) == len(p) {
			return true
		}
		switch m[len(p)] {
		case '-', '.', ':', '@', '_':
			return true
		}
		// gpt-5 vs gpt-50: a digit after the prefix is another model, but
		// gpt-4o after gpt-4 is handled by trying the longer prefix first.
	}
	return false
}
