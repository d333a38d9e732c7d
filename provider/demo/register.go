package demo

import (
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// init registers the demo model with the provider registry.
func init() {
	registry.Register(registry.Provider{Name: "demo", Wire: registry.WireDemo, Order: registry.Order["demo"],
		Structured: llm.StructuredSchema, DefaultBase: "offline", DefaultModel: Name,
		Description: "the offline scripted model of agcore demo (not a language model)",
		Open:        func(registry.Settings) (llm.Model, error) { return &Model{}, nil }})
}
