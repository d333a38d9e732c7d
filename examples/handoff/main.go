// Command handoff runs a triage agent that hands each question over to one
// of two specialists (billing, tech_support), which can hand it back: two
// turns of one session, printed as they stream, each line marked with the
// agent that wrote it, then the session's record of who answered what.
//
// It runs offline on the scripted demo model (which hands over to the
// specialist the question names), and against any provider:
//
//	go run ./examples/handoff
//	OPENAI_API_KEY=sk-... go run ./examples/handoff -provider openai
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/handoff -provider anthropic -model sonnet
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	_ "github.com/agcore/agcore/provider/builtin" // every adapter agcore ships registers itself
	"github.com/agcore/agcore/provider/registry"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

func main() {
	provider := flag.String("provider", "demo", "a provider name of provider/registry (demo: offline)")
	model := flag.String("model", "", "the model (default: the provider's)")
	flag.Parse()
	m, err := registry.New(*provider, registry.Config{Model: *model})
	if err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), m, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// team builds the triage agent and its two specialists over one model;
// the specialists hand back to triage (AddHandoffs joins the cycle).
func team(m llm.Model, store session.Store) (*agent.Agent, error) {
	billing, err := agent.New(m, agent.Config{
		Name:         "billing",
		Description:  "Invoices, payments, refunds.",
		Instructions: "You are the billing specialist. Answer questions about invoices, payments and refunds in two sentences. Hand anything else back to triage.",
	})
	if err != nil {
		return nil, err
	}
	tech, err := agent.New(m, agent.Config{
		Name:         "tech_support",
		Description:  "Crashes, errors, installation.",
		Instructions: "You are the technical support specialist. Answer questions about crashes, errors and installation in two sentences. Hand anything else back to triage.",
	})
	if err != nil {
		return nil, err
	}
	triage, err := agent.New(m, agent.Config{
		Name:         "triage",
		Instructions: "You route customer questions: hand each over to the specialist it concerns. Never answer yourself.",
		Store:        store,
		Handoffs:     []*agent.Agent{billing, tech},
		MaxHandoffs:  3,
	})
	if err != nil {
		return nil, err
	}
	for _, s := range []*agent.Agent{billing, tech} {
		if err := s.AddHandoffs(triage); err != nil {
			return nil, err
		}
	}
	return triage, nil
}

// run asks two questions in one session and prints who answered what.
func run(ctx context.Context, m llm.Model, w io.Writer) error {
	store := memstore.New()
	triage, err := team(m, store)
	if err != nil {
		return err
	}
	for _, q := range []string{
		"I was charged twice on my last invoice: a billing question.",
		"The app crashes when I open it; I need tech support.",
	} {
		fmt.Fprintf(w, "> %s\n", q)
		st := triage.RunStream(ctx, []llm.Message{llm.UserText(q)}, &agent.RunOptions{SessionID: "customer-1"})
		who := ""
		for u, err := range st.Updates() {
			if err != nil {
				return err
			}
			switch u.Kind {
			case agent.UpdateText:
				if u.Agent != who {
					who = u.Agent
					fmt.Fprintf(w, "[%s] ", who)
				}
				fmt.Fprint(w, u.Text)
			case agent.UpdateHandoff:
				fmt.Fprintf(w, "\n-- handed over: %s → %s --\n", u.From, u.Agent)
			}
		}
		resp, err := st.Wait()
		if err != nil {
			return err
		}
		if err := resp.PersistErr(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n(answered by %s; %d tokens in, %d out)\n\n", resp.Agent, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	}
	s, err := store.Load(ctx, "customer-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "session %s: %d turns, %d messages\n", s.ID, s.Turns, len(s.Messages))
	spans := session.Agents(s)
	for i, msg := range s.Messages {
		if msg.Role == llm.RoleAssistant {
			fmt.Fprintf(w, "%2d %-12s %s\n", i, session.AgentAt(spans, i), firstLine(msg))
		}
	}
	return nil
}

// firstLine is a message's first text line, or its tool calls.
func firstLine(m llm.Message) string {
	text := m.Text()
	for i, r := range text {
		if r == '\n' {
			text = text[:i]
			break
		}
	}
	for _, c := range m.ToolUses() {
		text += " [" + c.Name + "]"
	}
	return text
}
