package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
	"github.com/agcore/agcore/session/memstore"
)

// agcoreLibraries returns agcore's rows.
func agcoreLibraries() []Library {
	return []Library{
		{Name: "agcore openai", Wire: WireOpenAI, Note: "provider/openai Model.Stream, events until EventComplete (the assembled Response)", New: newAgcoreOpenAI},
		{Name: "agcore responses", Wire: WireResponses, Note: "provider/openai/responses Model.Stream, events until EventComplete (the assembled Response)", New: newAgcoreResponses},
		{Name: "agcore anthropic", Wire: WireAnthropic, Note: "provider/anthropic Model.Stream, events until EventComplete (the assembled Response)", New: newAgcoreAnthropic},
		{Name: "agcore gemini", Wire: WireGemini, Note: "provider/gemini Model.Stream, events until EventComplete (the assembled Response)", New: newAgcoreGemini},
		{Name: "agcore agent", Wire: WireOpenAI, Note: "agent.Agent over provider/openai built by agent.New (tool loop, retry, budget policy) with a memstore session: one whole turn (request assembly, stream, updates, persistence)", New: newAgcoreAgent},
	}
}

func newAgcoreOpenAI(_ context.Context, env Env) (StreamFunc, error) {
	m := openai.New(openai.WithBaseURL(env.BaseURL+"/v1"), openai.WithAPIKey(APIKey), openai.WithHTTPClient(env.HTTP))
	return modelStream(m), nil
}

func newAgcoreResponses(_ context.Context, env Env) (StreamFunc, error) {
	m := responses.New(responses.WithBaseURL(env.BaseURL+"/v1"), responses.WithAPIKey(APIKey), responses.WithHTTPClient(env.HTTP))
	return modelStream(m), nil
}

func newAgcoreAnthropic(_ context.Context, env Env) (StreamFunc, error) {
	m := anthropic.New(anthropic.WithBaseURL(env.BaseURL), anthropic.WithAPIKey(APIKey), anthropic.WithHTTPClient(env.HTTP))
	return modelStream(m), nil
}

func newAgcoreGemini(_ context.Context, env Env) (StreamFunc, error) {
	m := gemini.New(gemini.WithBaseURL(env.BaseURL), gemini.WithAPIKey(APIKey), gemini.WithHTTPClient(env.HTTP))
	return modelStream(m), nil
}

// modelStream consumes an llm.Model's stream as an application would:
// text deltas as they come, then the final Response.
func modelStream(m llm.Model) StreamFunc {
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		req := &llm.Request{Model: model, Messages: []llm.Message{llm.UserText(Prompt)}}
		var final *llm.Response
		for ev, err := range m.Stream(ctx, req) {
			if err != nil {
				return chunks, textLen, err
			}
			switch ev.Type {
			case llm.EventTextDelta:
				if ev.Delta != "" {
					chunks++
					textLen += len(ev.Delta)
				}
			case llm.EventComplete:
				final = ev.Response
			}
		}
		if final == nil {
			return chunks, textLen, errors.New("no EventComplete")
		}
		if got := len(final.Message.Text()); got != textLen {
			return chunks, textLen, fmt.Errorf("final response holds %d bytes of text, deltas %d", got, textLen)
		}
		return chunks, textLen, nil
	}
}

// newAgcoreAgent runs whole agent turns. The agent's request has no model
// name (RunOptions has none), so there is one agent per model name, each
// over its own adapter; every turn starts a new session in a shared
// memstore, so that no history grows from turn to turn.
func newAgcoreAgent(_ context.Context, env Env) (StreamFunc, error) {
	store := memstore.New()
	var (
		agents  sync.Map // model name → *agent.Agent
		session atomic.Int64
	)
	get := func(model string) (*agent.Agent, error) {
		if a, ok := agents.Load(model); ok {
			return a.(*agent.Agent), nil
		}
		adapter := openai.New(openai.WithBaseURL(env.BaseURL+"/v1"), openai.WithAPIKey(APIKey),
			openai.WithHTTPClient(env.HTTP), openai.WithModel(model))
		a, err := agent.New(adapter, agent.Config{
			Name:         "bench",
			Instructions: "You are a helpful assistant.",
			Store:        store,
		})
		if err != nil {
			return nil, err
		}
		v, _ := agents.LoadOrStore(model, a)
		return v.(*agent.Agent), nil
	}
	return func(ctx context.Context, model string) (chunks, textLen int, err error) {
		a, err := get(model)
		if err != nil {
			return 0, 0, err
		}
		id := "bench-" + strconv.FormatInt(session.Add(1), 10)
		s := a.RunStream(ctx, []llm.Message{llm.UserText(Prompt)}, &agent.RunOptions{SessionID: id})
		for u, err := range s.Updates() {
			if err != nil {
				return chunks, textLen, err
			}
			if u.Kind == agent.UpdateText && u.Text != "" {
				chunks++
				textLen += len(u.Text)
			}
		}
		resp, err := s.Wait()
		if err != nil {
			return chunks, textLen, err
		}
		if err := resp.PersistErr(); err != nil {
			return chunks, textLen, err
		}
		if got := len(resp.Text()); got != textLen {
			return chunks, textLen, fmt.Errorf("final response holds %d bytes of text, updates %d", got, textLen)
		}
		return chunks, textLen, nil
	}, nil
}
