package middleware

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// freeModel answers from prebuilt responses at no cost of its own: tool
// calls when the last message is the user's, the final answer after tool
// results. It lets the benchmarks measure the framework alone.
type freeModel struct {
	calls, answer         *llm.Response
	callEvents, ansEvents []llm.Event
}

func newFreeModel() *freeModel {
	uses := make([]llm.Block, 4)
	for i := range uses {
		uses[i] = llm.ToolUse{ID: "call_" + string(rune('a'+i)), Name: "noop", Input: json.RawMessage(`{}`)}
	}
	m := &freeModel{
		calls:  &llm.Response{ID: "r1", Message: llm.Message{Role: llm.RoleAssistant, Content: uses}, FinishReason: llm.FinishToolUse, Usage: llm.Usage{InputTokens: 10, OutputTokens: 10}},
		answer: &llm.Response{ID: "r2", Message: llm.AssistantText("done"), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 20, OutputTokens: 2}},
	}
	m.callEvents, m.ansEvents = llm.Events(m.calls), llm.Events(m.answer)
	return m
}

func (m *freeModel) Info() llm.ModelInfo { return llm.ModelInfo{Name: "free"} }

func (m *freeModel) pick(req *llm.Request) (*llm.Response, []llm.Event) {
	if req.Messages[len(req.Messages)-1].Role == llm.RoleTool {
		return m.answer, m.ansEvents
	}
	return m.calls, m.callEvents
}

func (m *freeModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	r, _ := m.pick(req)
	return r, nil
}

func (m *freeModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	_, evs := m.pick(req)
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// BenchmarkToolLoop measures one turn of the tool loop: a model call asking
// for 4 parallel no-op tools, the tools, and a model call answering. The
// model and the tools cost nothing, so ns/op and allocs/op are the
// framework's own per turn.
func BenchmarkToolLoop(b *testing.B) {
	noop := funcTool{"noop", func(context.Context, json.RawMessage) (string, error) { return "ok", nil }}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Tools: []llm.ToolDefinition{tool.Definition(noop)}}
	loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{noop}})(newFreeModel())
	ctx := context.Background()

	b.Run("Generate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := loop.Generate(ctx, req)
			if err != nil || len(resp.Transcript) != 6 {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := llm.Collect(loop.Stream(ctx, req))
			if err != nil || len(resp.Transcript) != 6 {
				b.Fatal(err)
			}
		}
	})
	b.Run("FullPipeline", func(b *testing.B) {
		// Tool loop, hooks (one of each model hook), retry and a disabled
		// logger: the cost of the whole pipeline when nothing goes wrong.
		h := &Hooks{
			PreRequest:  []Hook[PreRequestFunc]{{Name: "pre", Func: func(context.Context, *llm.Request) error { return nil }}},
			PostRequest: []Hook[PostRequestFunc]{{Name: "post", Func: func(context.Context, *llm.Request, *llm.Response) error { return nil }}},
		}
		full := Chain(newFreeModel(), FunctionInvocation(ToolLoop{}), h.Middleware(), Retry(RetryConfig{}), Logging(LogConfig{Logger: discardLogger()}))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := llm.Collect(full.Stream(ctx, req)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
