package otelagent_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/tool"
)

// TestContentOptIn: with RecordContent the spans carry the conversation in
// the conventions' JSON shapes: system instructions, input and output
// messages, tool definitions, tool arguments and results.
func TestContentOptIn(t *testing.T) {
	r := newRecorded(t, otelagent.Config{RecordContent: true})
	a := newAgent(t, toolLoopModel(t), agent.Config{Name: "weather", Instructions: "Be brief.", Tools: []tool.Tool{echoTool{"lookup"}}, Telemetry: r.tel})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("Weather in Paris?")}, nil); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	chats := find(spans, "chat gpt-test")
	wantAttrs(t, chats[0], map[string]string{
		"gen_ai.system_instructions": `[{"type":"text","content":"Be brief."}]`,
		"gen_ai.input.messages":      `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`,
		"gen_ai.output.messages":     `[{"role":"assistant","parts":[{"type":"text","content":"let me look"},{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":"paris"}}],"finish_reason":"tool_use"}]`,
		"gen_ai.tool.definitions":    `[{"type":"function","name":"lookup","description":"the lookup tool","parameters":{"type":"object"}}]`,
	})
	wantAttrs(t, chats[1], map[string]string{
		"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]},` +
			`{"role":"assistant","parts":[{"type":"text","content":"let me look"},{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":"paris"}}]},` +
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"lookup says {\"q\":\"paris\"}"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Sunny in Paris"}],"finish_reason":"stop"}]`,
	})
	wantAttrs(t, one(t, spans, "execute_tool lookup"), map[string]string{
		"gen_ai.tool.call.arguments": `{"q":"paris"}`,
		"gen_ai.tool.call.result":    `lookup says {"q":"paris"}`,
	})
	wantAttrs(t, one(t, spans, "invoke_agent weather"), map[string]string{
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Sunny in Paris"}],"finish_reason":"stop"}]`,
	})
}

// TestBareModelAndTools: the middleware traces a bare model (Generate
// here, so no time to first chunk), its retries through a hand-placed
// Retry's OnRetry, and the tool middleware a tool.Invoker's calls; each is a root
// span when the caller's context has none.
func TestBareModelAndTools(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	inner := llmtest.New(llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, Message: "slow down"}), llmtest.Text("hi").WithUsage(llm.Usage{InputTokens: 3, OutputTokens: 1})).
		WithInfo(llm.ModelInfo{Provider: "xai", Name: "grok-test"}).Verify(t)
	model := middleware.Chain(inner, r.tel.Middleware(), middleware.Retry(middleware.RetryConfig{Clock: &stepClock{}, OnRetry: r.tel.OnRetry}))
	temp := 0.5
	if _, err := model.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 64, Temperature: &temp}); err != nil {
		t.Fatal(err)
	}
	inv := tool.Invoker{Middleware: []tool.Middleware{r.tel.ToolMiddleware()}}
	res, err := inv.Invoke(context.Background(), func(string) (tool.Tool, bool) { return echoTool{"lookup"}, true }, []llm.ToolUse{llmtest.Call("c9", "lookup", `{}`)})
	if err != nil || len(res) != 1 {
		t.Fatal(res, err)
	}
	spans := r.ended()
	chat, exec := one(t, spans, "chat grok-test"), one(t, spans, "execute_tool lookup")
	for _, s := range []sdktrace.ReadOnlySpan{chat, exec} {
		if s.Parent().IsValid() {
			t.Errorf("%q has a parent", s.Name())
		}
		ok(t, s)
	}
	wantAttrs(t, chat, map[string]string{
		"gen_ai.provider.name": "x_ai", "gen_ai.request.stream": "false", "gen_ai.request.max_tokens": "64",
		"gen_ai.request.temperature": "0.5", "agcore.attempts": "2", "gen_ai.usage.input_tokens": "3",
	})
	noAttrs(t, chat, "gen_ai.response.time_to_first_chunk", "agcore.cost.usd", "gen_ai.conversation.id")
	if len(chat.Events()) != 1 {
		t.Errorf("events %v", chat.Events())
	}
	wantAttrs(t, exec, map[string]string{"gen_ai.tool.call.id": "c9"})
}

// TestGlobalProviders: a Telemetry made without providers uses the global
// ones, including those set after it was made.
func TestGlobalProviders(t *testing.T) {
	tel, err := otelagent.New(otelagent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prevTP, prevMP := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	defer func() {
		otel.SetTracerProvider(prevTP)
		otel.SetMeterProvider(prevMP)
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	}()
	a := newAgent(t, llmtest.New(llmtest.Text("ok")).WithInfo(priced).Verify(t), agent.Config{Name: "g", Telemetry: tel})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := names(rec.Ended()); !slices.Equal(got, []string{"chat gpt-test", "invoke_agent g"}) {
		t.Errorf("the global provider recorded %q", got)
	}
	r := &recorded{reader: reader}
	if got := points(r.metrics(t)["gen_ai.client.token.usage"]); len(got) != 2 {
		t.Errorf("the global meter provider recorded %q", got)
	}
}

// TestCallerSpanIsTheParent: a run inside the caller's own span is its
// child, so an agent run joins the trace of the request that started it.
func TestCallerSpanIsTheParent(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	defer tp.Shutdown(context.Background())
	ctx, parent := tp.Tracer("caller").Start(context.Background(), "handle request", trace.WithSpanKind(trace.SpanKindServer))
	a := newAgent(t, llmtest.New(llmtest.Text("ok")).WithInfo(priced).Verify(t), agent.Config{Name: "j", Telemetry: r.tel})
	if _, err := a.Run(ctx, []llm.Message{llm.UserText("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := r.ended()
	childOf(t, one(t, spans, "invoke_agent j"), one(t, spans, "handle request"))
}
