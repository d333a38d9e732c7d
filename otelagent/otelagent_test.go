package otelagent_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// echoTool is a tool named name that answers with its name and input.
type echoTool struct{ name string }

func (e echoTool) Name() string                { return e.name }
func (e echoTool) Description() string         { return "the " + e.name + " tool" }
func (e echoTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (e echoTool) Invoke(_ context.Context, in json.RawMessage) (string, error) {
	return e.name + " says " + string(in), nil
}

var priced = llm.ModelInfo{Provider: "openai", Name: "gpt-test", Price: &llm.Price{Input: 1, Output: 2, CacheRead: 0.5}}

// contentKeys are the opt-in content attributes.
var contentKeys = []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
	"gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}

func toolLoopModel(t *testing.T) *llmtest.Model {
	return llmtest.New(
		llmtest.Reply(llm.Text{Text: "let me look"}, llmtest.Call("c1", "lookup", `{"q":"paris"}`)).
			WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 10}).WithID("resp-1"),
		llmtest.Text("Sunny in Paris").WithUsage(llm.Usage{InputTokens: 150, OutputTokens: 5, CachedInputTokens: 100}).WithID("resp-2"),
	).WithInfo(priced).Verify(t)
}

func newAgent(t *testing.T, model llm.Model, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func runIDs() func() string { return func() string { return "run-1" } }

// TestToolLoopTurn: a streamed turn that calls one tool is one trace:
// invoke_agent over two chat spans, the execute_tool span and the
// persistence span, each with the conventions' attributes; no message
// content is recorded by default; the metrics count each model call.
func TestToolLoopTurn(t *testing.T) {
	r := newRecorded(t, otelagent.Config{Clock: &stepClock{}})
	a := newAgent(t, toolLoopModel(t), agent.Config{
		Name: "weather", ID: "agent-1", Instructions: "Be brief.", Tools: []tool.Tool{echoTool{"lookup"}},
		Store: memstore.New(), Telemetry: r.tel, NewID: runIDs(),
	})
	s := a.RunStream(context.Background(), []llm.Message{llm.UserText("Weather in Paris?")}, &agent.RunOptions{SessionID: "s1"})
	for _, err := range s.Updates() {
		if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}

	spans := r.ended()
	want := []string{"agcore.persistence", "chat gpt-test", "chat gpt-test", "execute_tool lookup", "invoke_agent weather"}
	if got := names(spans); !slices.Equal(got, want) {
		t.Fatalf("spans %q, want %q", got, want)
	}
	root := one(t, spans, "invoke_agent weather")
	if root.Parent().IsValid() {
		t.Error("invoke_agent has a parent")
	}
	chats := find(spans, "chat gpt-test")
	exec := one(t, spans, "execute_tool lookup")
	persist := one(t, spans, "agcore.persistence")
	for _, s := range []sdktrace.ReadOnlySpan{chats[0], chats[1], exec, persist} {
		childOf(t, s, root)
		ok(t, s)
	}
	ok(t, root)
	// In time: chat, tool, chat, persistence, all inside the run.
	if !(chats[0].EndTime().Before(exec.StartTime()) || chats[0].EndTime().Equal(exec.StartTime())) ||
		exec.EndTime().After(chats[1].StartTime()) || chats[1].EndTime().After(persist.StartTime()) || persist.EndTime().After(root.EndTime()) {
		t.Error("the spans are not in the turn's order")
	}
	if root.SpanKind() != trace.SpanKindInternal || chats[0].SpanKind() != trace.SpanKindClient || exec.SpanKind() != trace.SpanKindInternal {
		t.Errorf("span kinds %v %v %v", root.SpanKind(), chats[0].SpanKind(), exec.SpanKind())
	}

	wantAttrs(t, root, map[string]string{
		"gen_ai.operation.name":                "invoke_agent",
		"gen_ai.agent.name":                    "weather",
		"gen_ai.agent.id":                      "agent-1",
		"gen_ai.conversation.id":               "s1",
		"gen_ai.provider.name":                 "openai",
		"gen_ai.request.model":                 "gpt-test",
		"gen_ai.response.model":                "gpt-test",
		"gen_ai.response.finish_reasons":       `["stop"]`,
		"gen_ai.usage.input_tokens":            "250",
		"gen_ai.usage.output_tokens":           "15",
		"gen_ai.usage.cache_read.input_tokens": "100",
		"agcore.run.id":                        "run-1",
		"agcore.cost.usd":                      "0.00023",
	})
	wantAttrs(t, chats[0], map[string]string{
		"gen_ai.operation.name":          "chat",
		"gen_ai.provider.name":           "openai",
		"gen_ai.request.model":           "gpt-test",
		"gen_ai.request.stream":          "true",
		"gen_ai.conversation.id":         "s1",
		"gen_ai.response.id":             "resp-1",
		"gen_ai.response.model":          "gpt-test",
		"gen_ai.response.finish_reasons": `["tool_use"]`,
		"gen_ai.usage.input_tokens":      "100",
		"gen_ai.usage.output_tokens":     "10",
		"agcore.attempts":                "1",
		"agcore.cost.usd":                "0.00012",
	})
	if _, ok := attrs(chats[0])["gen_ai.response.time_to_first_chunk"]; !ok {
		t.Error("a streamed chat span has no time to first chunk")
	}
	wantAttrs(t, chats[1], map[string]string{"gen_ai.response.id": "resp-2", "gen_ai.usage.cache_read.input_tokens": "100", "agcore.cost.usd": "0.00011"})
	wantAttrs(t, exec, map[string]string{
		"gen_ai.operation.name":   "execute_tool",
		"gen_ai.tool.name":        "lookup",
		"gen_ai.tool.call.id":     "c1",
		"gen_ai.tool.type":        "function",
		"gen_ai.tool.description": "the lookup tool",
	})
	wantAttrs(t, persist, map[string]string{"gen_ai.conversation.id": "s1", "agcore.run.id": "run-1", "agcore.persistence.messages": "4"})
	for _, s := range spans {
		noAttrs(t, s, contentKeys...)
	}
	if resp.CostUSD != 0.00023 {
		t.Errorf("the response's cost %v", resp.CostUSD)
	}

	m := r.metrics(t)
	common := "gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-test,gen_ai.response.model=gpt-test"
	for name, want := range map[string][]string{
		"gen_ai.client.token.usage": {
			common + ",gen_ai.token.type=input count=2 sum=250",
			common + ",gen_ai.token.type=output count=2 sum=15",
		},
		"gen_ai.client.operation.duration": {
			common + " count=2",
			"gen_ai.operation.name=invoke_agent,gen_ai.provider.name=openai,gen_ai.request.model=gpt-test,gen_ai.response.model=gpt-test count=1",
		},
		"gen_ai.client.operation.time_to_first_chunk": {common + " count=2"},
		"agcore.client.cost":                          {common + " sum=0.000230"},
	} {
		if got := points(m[name]); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	if u := m["gen_ai.client.operation.duration"].Unit; u != "s" {
		t.Errorf("duration unit %q", u)
	}
}
