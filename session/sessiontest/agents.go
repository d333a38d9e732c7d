package sessiontest

import (
	"context"
	"maps"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// testAnsweringAgents: the agents that answered a session's turns
// (session.AgentsKey, set with each turn's state as agent runs whose
// agents hand off record them) are kept turn by turn and read back by Load
// and LoadView.
func testAnsweringAgents(t *testing.T, s session.Store) {
	ctx := context.Background()
	sess := &session.Session{ID: "handoffs"}
	turns := []struct {
		id     string
		msgs   []llm.Message
		agents []session.AgentSpan // recorded with the turn, relative to its first message
	}{
		{"t1", []llm.Message{llm.UserText("refund?"), llm.AssistantText("to billing"), llm.AssistantText("refunded")},
			[]session.AgentSpan{{From: 1, Agent: "triage"}, {From: 2, Agent: "billing"}}},
		{"t2", []llm.Message{llm.UserText("thanks"), llm.AssistantText("welcome")}, []session.AgentSpan{{From: 1, Agent: "billing"}}},
		{"t3", []llm.Message{llm.UserText("a crash"), llm.AssistantText("to support")}, []session.AgentSpan{{From: 1, Agent: "triage"}}},
	}
	base := 0
	for _, tr := range turns {
		before := maps.Clone(sess.State)
		for _, sp := range tr.agents {
			if err := session.RecordAgent(sess, base+sp.From, sp.Agent); err != nil {
				t.Fatal(err)
			}
		}
		delta := session.StateDelta(before, sess.State)
		if err := s.Append(ctx, sess.ID, session.Turn{ID: tr.id, Messages: tr.msgs, State: delta}); err != nil {
			t.Fatal(err)
		}
		base += len(tr.msgs)
	}
	want := []session.AgentSpan{{From: 1, Agent: "triage"}, {From: 2, Agent: "billing"}, {From: 6, Agent: "triage"}}
	for name, load := range map[string]func(context.Context, string) (*session.Session, error){"Load": s.Load, "LoadView": s.LoadView} {
		got, err := load(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		spans := session.Agents(got)
		if len(spans) != len(want) {
			t.Fatalf("%s: agents %+v, want %+v", name, spans, want)
		}
		for i := range want {
			if spans[i] != want[i] {
				t.Errorf("%s: span %d %+v, want %+v", name, i, spans[i], want[i])
			}
		}
		if a := session.AgentAt(spans, 4); a != "billing" {
			t.Errorf("%s: message 4 answered by %q, want billing", name, a)
		}
	}
}
