// Package echo is a provider adapter written outside agcore's module, as
// a third party writes one: a tiny JSON API (POST {base}/echo with the
// prompt, the answer in "text") that registers itself with agcore's
// provider registry when imported.
package echo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

func init() {
	registry.Register(registry.Provider{
		Name: "echo", Wire: "echo", KeyEnv: "ECHO_API_KEY", BaseEnv: "ECHO_BASE_URL",
		DefaultModel: "echo-1", Description: "an adapter from outside agcore's module (testdata)",
		Open: func(s registry.Settings) (llm.Model, error) {
			c := s.HTTPClient
			if c == nil {
				c = http.DefaultClient
			}
			return &model{s: s, c: c}, nil
		},
	})
}

type model struct {
	s registry.Settings
	c *http.Client
}

func (m *model) Info() llm.ModelInfo { return llm.ModelInfo{Provider: "echo", Name: m.s.Model} }

func (m *model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	prompt := ""
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleUser {
			prompt = msg.Text()
		}
	}
	body, _ := json.Marshal(map[string]string{"model": m.s.Model, "prompt": prompt})
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.s.BaseURL+"/echo", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Authorization", "Bearer "+m.s.APIKey)
	resp, err := m.c.Do(hr)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindNetwork, Provider: "echo", Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	var out struct{ Text string }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return nil, &llm.Error{Kind: llm.KindServer, Provider: "echo", StatusCode: resp.StatusCode, Message: fmt.Sprintf("status %d", resp.StatusCode)}
	}
	return &llm.Response{ID: "echo-1", Model: m.s.Model, FinishReason: llm.FinishStop,
		Message: llm.AssistantText(out.Text), Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.StreamOf(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
