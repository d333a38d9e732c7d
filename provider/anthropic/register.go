package anthropic

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// init registers the Messages API with the provider registry.
func init() {
	registry.Register(registry.Provider{Name: "anthropic", Wire: registry.WireAnthropic, Order: registry.Order["anthropic"],
		Structured: llm.StructuredSchema, KeyEnv: "ANTHROPIC_API_KEY", BaseEnv: "ANTHROPIC_BASE_URL",
		DefaultBase: DefaultBaseURL, DefaultModel: DefaultModel, KeyRequired: true, Detect: true,
		Description: "Anthropic (Claude, Messages API)",
		Open: func(s registry.Settings) (llm.Model, error) {
			opts := []Option{WithAPIKey(s.APIKey), WithBaseURL(s.BaseURL), WithModel(s.Model)}
			if s.HTTPClient != nil {
				opts = append(opts, WithHTTPClient(s.HTTPClient))
			}
			if s.IdleTimeout > 0 {
				opts = append(opts, WithIdleTimeout(s.IdleTimeout))
			}
			return New(opts...), nil
		}})
}
