package otelagent_test

import (
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/tool"
)

// TestSubAgentSpanNested: a sub-agent's invoke_agent span is a child of
// the caller's execute_tool span for the call that ran it, in one trace.
func TestSubAgentSpanNested(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	child := newAgent(t, llmtest.New(llmtest.Text("2009")), agent.Config{Name: "researcher", Telemetry: r.tel})
	parent := newAgent(t, llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "researcher", `{"input":"when?"}`)),
		llmtest.Text("In 2009."),
	), agent.Config{Name: "writer", Telemetry: r.tel, Tools: []tool.Tool{agent.AsTool(child, nil)}})
	if _, err := parent.Run(t.Context(), []llm.Message{llm.UserText("q")}, nil); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	root := one(t, spans, "invoke_agent writer")
	exec := one(t, spans, "execute_tool researcher")
	sub := one(t, spans, "invoke_agent researcher")
	childOf(t, exec, root)
	childOf(t, sub, exec)
	for _, s := range find(spans, "chat "+llmtest.New().Info().Name) {
		if s.Parent().SpanID() != root.SpanContext().SpanID() && s.Parent().SpanID() != sub.SpanContext().SpanID() {
			t.Errorf("chat span outside both runs")
		}
	}
}

// TestHandoffSpan: a handoff opens an agcore.handoff span under the run's
// invoke_agent span; the target agent's model calls nest in it.
func TestHandoffSpan(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	billing := newAgent(t, llmtest.New(llmtest.Text("refunded")), agent.Config{Name: "billing", Telemetry: r.tel})
	triage := newAgent(t, llmtest.New(llmtest.Reply(llmtest.Call("c1", "transfer_to_billing", `{}`))),
		agent.Config{Name: "triage", Telemetry: r.tel, Handoffs: []*agent.Agent{billing}})
	if _, err := triage.Run(t.Context(), []llm.Message{llm.UserText("refund")}, nil); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	root := one(t, spans, "invoke_agent triage")
	h := one(t, spans, "agcore.handoff")
	childOf(t, h, root)
	ok(t, h)
	wantAttrs(t, h, map[string]string{"agcore.handoff.from": "triage", "agcore.handoff.to": "billing"})
	chats := find(spans, "chat "+llmtest.New().Info().Name)
	if len(chats) != 2 {
		t.Fatalf("%d chat spans; have %q", len(chats), names(spans))
	}
	inHandoff := 0
	for _, c := range chats {
		if c.Parent().SpanID() == h.SpanContext().SpanID() {
			inHandoff++
		}
	}
	if inHandoff != 1 {
		t.Errorf("%d chat spans under the handoff, want billing's one", inHandoff)
	}
}
