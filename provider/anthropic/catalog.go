package anthropic

import (
	"net/url"
	"strings"

	"github.com/agcore/agcore/llm"
)

// lookupModel returns what the model's catalog knows about a model's
// limits.
func (m *Model) lookupModel(name string) (llm.ModelInfo, bool) {
	return m.o.Catalog.Lookup(name)
}

// servingProvider is the provider identity Info reports: "anthropic" for
// Anthropic's own API, "compatible" for any other base URL.
func (m *Model) servingProvider() string {
	if u, err := url.Parse(m.o.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.anthropic.com") {
		return providerName
	}
	return "compatible"
}
