package responses

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// init registers the Responses API with the provider registry.
func init() {
	registry.Register(registry.Provider{Name: "openai-responses", Wire: registry.WireResponses, Order: registry.Order["openai-responses"],
		Structured: llm.StructuredStrict, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL",
		DefaultBase: DefaultBaseURL, DefaultModel: DefaultModel, KeyRequired: true,
		Description: "OpenAI through the Responses API ({base}/responses)", Catalog: "openai",
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
