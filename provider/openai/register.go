package openai

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// init registers OpenAI's Chat Completions, every preset and any
// compatible server with the provider registry, from the presets' facts.
func init() {
	registry.Register(registry.Provider{Name: "openai", Wire: registry.WireOpenAI, Order: registry.Order["openai"],
		Structured: llm.StructuredStrict, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL",
		DefaultBase: DefaultBaseURL, DefaultModel: DefaultModel, KeyRequired: true, Detect: true,
		Description: "OpenAI (Chat Completions)", Open: open(nil)})
	for _, f := range presets {
		registry.Register(registry.Provider{Name: f.name, Wire: registry.WireOpenAI, Order: registry.Order[f.name],
			Structured: f.structured, KeyEnv: f.keyEnv, BaseEnv: f.baseEnv, DefaultBase: f.defaultBase,
			DefaultModel: f.defaultModel, KeyRequired: f.keyRequired, Detect: f.detect,
			Description: f.description, Open: open(preset(f.name))})
	}
	registry.Register(registry.Provider{Name: "compatible", Wire: registry.WireOpenAI, Order: registry.Order["compatible"],
		Structured: llm.StructuredNone, KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL",
		Description: "any OpenAI-compatible server (LM Studio, llama.cpp, a gateway, ...)", Open: open(nil)})
}

// open returns the registry's constructor of a model with preset (none
// when nil).
func open(preset Option) func(registry.Settings) (llm.Model, error) {
	return func(s registry.Settings) (llm.Model, error) {
		var opts []Option
		if preset != nil {
			opts = append(opts, preset)
		}
		opts = append(opts, WithAPIKey(s.APIKey), WithBaseURL(s.BaseURL), WithModel(s.Model), WithStructuredOutput(s.Structured))
		if s.HTTPClient != nil {
			opts = append(opts, WithHTTPClient(s.HTTPClient))
		}
		if s.IdleTimeout > 0 {
			opts = append(opts, WithIdleTimeout(s.IdleTimeout))
		}
		return New(opts...), nil
	}
}
