package agent_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
)

// replayModel streams the same precomputed events on every call: a model
// that costs next to nothing, so what a benchmark measures is the agent.
type replayModel struct{ events []llm.Event }

func newReplayModel() *replayModel {
	resp := &llm.Response{ID: "r", Model: "replay", Message: llm.AssistantText("Here is a short answer to your question."),
		FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 200, OutputTokens: 12}}
	return &replayModel{events: llm.Events(resp)}
}

func (m *replayModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *replayModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range m.events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (m *replayModel) Info() llm.ModelInfo { return llm.ModelInfo{Name: "replay"} }

// turnsPerSession bounds the history a benchmark turn loads: every
// session gets this many turns, then the next one starts.
const turnsPerSession = 10

// BenchmarkAgentTurn measures one blocking run with no tools, persistence
// included: the session is loaded, the request assembled and hashed, the
// stream converted, the turn appended. model=replay costs almost nothing,
// so its figures are the framework's own; model=llmtest adds the scripted
// model (which deep-copies and records every request). Sessions hold up to
// 20 messages.
func BenchmarkAgentTurn(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) session.Store
	}{
		{"store=none", func(*testing.B) session.Store { return nil }},
		{"store=memstore", func(*testing.B) session.Store { return memstore.New() }},
		{"store=sqlite", func(b *testing.B) session.Store {
			s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	for _, st := range stores {
		for _, modelName := range []string{"replay", "llmtest"} {
			b.Run(st.name+"/model="+modelName, func(b *testing.B) {
				var model llm.Model = newReplayModel()
				if modelName == "llmtest" {
					model = &refillModel{m: llmtest.New()}
				}
				a := newAgent(b, model, agent.Config{Name: "bench", Instructions: "You are a helpful assistant. Answer briefly.", Store: st.open(b)})
				ctx := context.Background()
				msgs := []llm.Message{llm.UserText("What is the capital of France, and why is it famous?")}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					opts := &agent.RunOptions{SessionID: fmt.Sprintf("s%d", i/turnsPerSession)}
					resp, err := a.Run(ctx, msgs, opts)
					if err != nil {
						b.Fatal(err)
					}
					if err := resp.PersistErr(); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// refillModel is an llmtest model given one fresh step per call, so a
// benchmark of any length never runs out of script.
type refillModel struct{ m *llmtest.Model }

var refillStep = llmtest.Text("Here is a short answer to your question.").WithUsage(llm.Usage{InputTokens: 200, OutputTokens: 12})

func (r *refillModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	r.m.Add(refillStep)
	return r.m.Generate(ctx, req)
}

func (r *refillModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	r.m.Add(refillStep)
	return r.m.Stream(ctx, req)
}

func (r *refillModel) Info() llm.ModelInfo { return r.m.Info() }
