package catalog

import "strings"

// Normalize returns the canonical form of a model id, the one every part
// of agcore compares model names in: lower case, without surrounding
// space, without a routing or namespace prefix ("openai/gpt-4o" on
// OpenRouter, "library/qwen2.5" on Ollama: everything up to the last "/")
// and without the Bedrock and Vertex spelling of Claude
// ("us.anthropic.claude-…" becomes "claude-…"). OpenAI's fine-tune marker
// stays ("ft:gpt-4o-mini:org::id"): a fine-tuned model has prices of its
// own, so the catalog does not take it for its base model.
func Normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "claude-"); i > 0 && strings.Contains(m[:i], "anthropic") {
		m = m[i:]
	}
	return m
}

// InFamily reports whether model, normalized, is one of the families or extends
// one after a separator ("-", ".", ":", "@", "_"): "o3" matches "o3-mini" and
// "gpt-4" matches "gpt-4.1", but "o1" does not match "o1x" and "gpt-5" does not
// match "gpt-50". A fine-tuned model ("ft:gpt-4o-mini:…") belongs to its base
// model's family. A family is given in normalized form. This is the loose test
// of model families (which tokenizer, which request parameter);
// [Catalog.Lookup] matches entries more strictly.
func InFamily(model string, families ...string) bool {
	m := strings.TrimPrefix(Normalize(model), "ft:")
	for _, f := range families {
		if !strings.HasPrefix(m, f) {
			continue
		}
		if len(m) == len(f) {
			return true
		}
		switch m[len(f)] {
		case '-', '.', ':', '@', '_':
			return true
		}
	}
	return false
}
