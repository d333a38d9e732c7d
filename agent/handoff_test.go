package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

// namedTool is a tool that answers its own name.
type namedTool string

func (n namedTool) Name() string                { return string(n) }
func (n namedTool) Description() string         { return "the " + string(n) + " tool" }
func (n namedTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (n namedTool) Invoke(context.Context, json.RawMessage) (string, error) {
	return string(n) + " done", nil
}

func toolNames(defs []llm.ToolDefinition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

func TestTransferToolName(t *testing.T) {
	for in, want := range map[string]string{
		"billing":        "transfer_to_billing",
		"Billing Agent":  "transfer_to_billing_agent",
		"refunds-v2.eu":  "transfer_to_refunds_v2_eu",
		"Über_Agent 7":   "transfer_to__ber_agent_7",
		"ALREADY_snake0": "transfer_to_already_snake0",
	} {
		if got := agent.TransferToolName(in); got != want {
			t.Errorf("TransferToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHandoffContinuesWithTarget: the transfer call is answered and the
// next model call of the same turn is the target's, under its own
// instructions and tools, over the history and the turn so far.
func TestHandoffContinuesWithTarget(t *testing.T) {
	triageModel := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "transfer_to_billing", `{}`)).WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 1}),
	).Verify(t)
	billingModel := llmtest.New(
		llmtest.Text("Your refund is on its way.").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 2}),
	).Verify(t)
	billing, err := agent.New(billingModel, agent.Config{Name: "billing", Instructions: "You handle billing.", Tools: []tool.Tool{namedTool("refund")}})
	if err != nil {
		t.Fatal(err)
	}
	triage, err := agent.New(triageModel, agent.Config{Name: "triage", Instructions: "You route.", Tools: []tool.Tool{namedTool("lookup")}, Handoffs: []*agent.Agent{billing}})
	if err != nil {
		t.Fatal(err)
	}

	var kinds []string
	var handoff agent.Update
	var textAgent string
	stream := triage.RunStream(t.Context(), []llm.Message{llm.UserText("I want my money back")}, nil)
	for u, err := range stream.Updates() {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, u.Kind.String())
		switch u.Kind {
		case agent.UpdateHandoff:
			handoff = u
		case agent.UpdateText:
			textAgent = u.Agent
		}
	}
	resp, err := stream.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if handoff.From != "triage" || handoff.Agent != "billing" {
		t.Errorf("handoff update from %q to %q; updates %v", handoff.From, handoff.Agent, kinds)
	}
	if textAgent != "billing" || resp.Agent != "billing" || resp.Text() != "Your refund is on its way." {
		t.Errorf("text by %q, response by %q: %q", textAgent, resp.Agent, resp.Text())
	}
	if got := toolNames(triageModel.Requests()[0].Tools); strings.Join(got, ",") != "lookup,transfer_to_billing" {
		t.Errorf("triage offered %v", got)
	}
	req := billingModel.Requests()[0]
	if got := toolNames(req.Tools); strings.Join(got, ",") != "refund" {
		t.Errorf("billing offered %v, want only its own tools", got)
	}
	if len(req.Messages) != 4 || req.Messages[0].Text() != "You handle billing." || req.Messages[1].Text() != "I want my money back" ||
		len(req.Messages[2].ToolUses()) != 1 || req.Messages[3].Role != llm.RoleTool || req.Messages[3].Text() != "Transferred to billing." {
		t.Errorf("billing's request: %+v", req.Messages)
	}
	if resp.Usage.InputTokens != 30 || resp.Usage.OutputTokens != 3 {
		t.Errorf("usage %+v, want both agents' calls summed", resp.Usage)
	}
	if len(resp.Messages) != 3 {
		t.Errorf("transcript of %d messages, want call, result, answer", len(resp.Messages))
	}
}

// TestHandoffCycleBounded: agents that hand off to each other are joined
// with AddHandoffs, and a turn makes at most MaxHandoffs handoffs: the
// transfer past the limit is an error result, and its agent answers.
func TestHandoffCycleBounded(t *testing.T) {
	transfer := func(to string) llmtest.Step { return llmtest.Reply(llmtest.Call("c_"+to, "transfer_to_"+to, `{}`)) }
	aModel := llmtest.New(transfer("b"), transfer("b")).Verify(t)
	bModel := llmtest.New(transfer("a"), transfer("a"), llmtest.Text("b answers")).Verify(t)
	a, _ := agent.New(aModel, agent.Config{Name: "a", MaxHandoffs: 3})
	b, _ := agent.New(bModel, agent.Config{Name: "b"})
	if err := a.AddHandoffs(b); err != nil {
		t.Fatal(err)
	}
	if err := b.AddHandoffs(a); err != nil {
		t.Fatal(err)
	}
	handoffs := 0
	stream := a.RunStream(t.Context(), []llm.Message{llm.UserText("ping")}, nil)
	for u, err := range stream.Updates() {
		if err != nil {
			t.Fatal(err)
		}
		if u.Kind == agent.UpdateHandoff {
			handoffs++
		}
	}
	resp, _ := stream.Wait()
	if handoffs != 3 || resp.Agent != "b" || resp.Text() != "b answers" {
		t.Fatalf("%d handoffs, answer %q by %q; want 3 handoffs and b's answer", handoffs, resp.Text(), resp.Agent)
	}
	// b's last transfer (the 4th) was refused with the limit's error.
	last := bModel.Requests()[2].Messages
	res := last[len(last)-1]
	if res.Role != llm.RoleTool || !res.IsError || !strings.Contains(res.Text(), "handoff limit reached") {
		t.Errorf("the 4th transfer's result: %+v", res)
	}
	if err := a.AddHandoffs(b); err == nil {
		t.Error("adding the same handoff twice succeeded")
	}
}

// TestHandoffAgentRecorded: a turn records which agent answered which of
// its messages in the session (session.AgentsKey), in each store.
func TestHandoffAgentRecorded(t *testing.T) {
	dir := t.TempDir()
	stores := map[string]func(t *testing.T) session.Store{
		"memstore": func(*testing.T) session.Store { return memstore.New() },
		"filestore": func(t *testing.T) session.Store {
			s, err := filestore.Open(filepath.Join(dir, "files"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"sqlite": func(t *testing.T) session.Store {
			s, err := sqlite.Open(t.Context(), filepath.Join(dir, "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			billing, _ := agent.New(llmtest.New(llmtest.Text("refunded"), llmtest.Text("you're welcome")), agent.Config{Name: "billing"})
			triage, _ := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("c1", "transfer_to_billing", `{}`)), llmtest.Text("hello again")),
				agent.Config{Name: "triage", Store: store, Handoffs: []*agent.Agent{billing}})
			opts := &agent.RunOptions{SessionID: "s1"}
			if _, err := triage.Run(t.Context(), []llm.Message{llm.UserText("refund please")}, opts); err != nil {
				t.Fatal(err)
			}
			if _, err := triage.Run(t.Context(), []llm.Message{llm.UserText("hi")}, opts); err != nil {
				t.Fatal(err)
			}
			sess, err := store.Load(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			spans := session.Agents(sess)
			// turn 1: user (0), triage's call (1), result (2), billing's answer (3); turn 2: user (4), triage (5).
			want := []session.AgentSpan{{From: 1, Agent: "triage"}, {From: 3, Agent: "billing"}, {From: 5, Agent: "triage"}}
			if len(spans) != len(want) {
				t.Fatalf("spans %+v, want %+v", spans, want)
			}
			for i := range want {
				if spans[i] != want[i] {
					t.Errorf("span %d: %+v, want %+v", i, spans[i], want[i])
				}
			}
			if got := session.AgentAt(spans, 3); got != "billing" || sess.Messages[3].Text() != "refunded" {
				t.Errorf("message 3 %q by %q", sess.Messages[3].Text(), got)
			}
		})
	}
}

func TestHandoffConfigErrors(t *testing.T) {
	m := llmtest.New()
	if _, err := agent.New(m, agent.Config{Handoffs: []*agent.Agent{nil}}); err == nil {
		t.Error("a nil handoff was accepted")
	}
	unnamed, _ := agent.New(m, agent.Config{})
	if _, err := agent.New(m, agent.Config{Handoffs: []*agent.Agent{unnamed}}); err == nil {
		t.Error("an unnamed handoff was accepted")
	}
	x, _ := agent.New(m, agent.Config{Name: "x"})
	if _, err := agent.New(m, agent.Config{Tools: []tool.Tool{namedTool("transfer_to_x")}, Handoffs: []*agent.Agent{x}}); err == nil {
		t.Error("a handoff whose tool name is taken was accepted")
	}
	if !errors.Is(agent.ErrHandoffLimit, agent.ErrHandoffLimit) {
		t.Fatal("unreachable")
	}
}
