package gemini

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// CatalogProvider is the provider the model catalog lists Gemini's models
// under, and the one Info names for Google's own endpoints.
const CatalogProvider = "google"

// init registers the Gemini API with the provider registry.
func init() {
	registry.Register(registry.Provider{Name: "gemini", Wire: registry.WireGemini, Order: registry.Order["gemini"],
		Structured: llm.StructuredSchema, KeyEnv: "GEMINI_API_KEY", AltKeyEnv: "GOOGLE_API_KEY", BaseEnv: "GOOGLE_GEMINI_BASE_URL",
		DefaultBase: DefaultBaseURL, DefaultModel: DefaultModel, KeyRequired: true, Detect: true,
		Description: "Google Gemini API", Catalog: CatalogProvider,
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
