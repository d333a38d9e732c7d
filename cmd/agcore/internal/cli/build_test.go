package cli

import (
	"testing"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/provider/openai/responses"
)

// TestResponsesProvider: --provider openai-responses builds the Responses
// API adapter, priced as OpenAI's models are.
func TestResponsesProvider(t *testing.T) {
	kind, ok := config.KindNamed("openai-responses")
	if !ok {
		t.Fatal("no openai-responses kind")
	}
	s := &config.Settings{Kind: kind, Provider: "openai-responses", Model: "gpt-5-mini", BaseURL: kind.DefaultBase, APIKey: "sk-test"}
	adapter, err := newAdapter(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := adapter.(*responses.Model); !ok {
		t.Fatalf("adapter = %T", adapter)
	}
	info := modelInfo(s, adapter)
	if info.Provider != "openai-responses" || !info.Known() || info.Price == nil {
		t.Fatalf("info = %+v", info)
	}
}
