// Command subagents runs a research agent that has two sub-agents as tools
// (agent.AsTool): a historian and a critic. The research agent asks both
// (in parallel), then writes its answer from theirs. The sub-agents'
// updates reach the research agent's stream marked with their names; each
// sub-agent's transcript is a session of its own, linked to the call that
// ran it; the turn's usage includes theirs.
//
// It runs offline on the scripted demo model (which asks every agent tool
// once and answers with their answers), and against any provider:
//
//	go run ./examples/subagents
//	OPENAI_API_KEY=sk-... go run ./examples/subagents -provider openai
//	GEMINI_API_KEY=AIza... go run ./examples/subagents -provider gemini
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	_ "github.com/agcore/agcore/provider/builtin" // every adapter agcore ships registers itself
	"github.com/agcore/agcore/provider/registry"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
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

// researcher builds the research agent over m, with its two sub-agents.
func researcher(m llm.Model, store session.Store) (*agent.Agent, error) {
	historian, err := agent.New(m, agent.Config{
		Name:         "historian",
		Description:  "Knows where a technology comes from and when it appeared.",
		Instructions: "You are a historian of computing. Answer in two sentences with dates.",
	})
	if err != nil {
		return nil, err
	}
	critic, err := agent.New(m, agent.Config{
		Name:         "critic",
		Description:  "Weighs a technology's strengths and weaknesses.",
		Instructions: "You are a critic. Name one strength and one weakness, one sentence each.",
	})
	if err != nil {
		return nil, err
	}
	return agent.New(m, agent.Config{
		Name:         "research",
		Instructions: "You research questions: ask the historian and the critic, then answer in one paragraph from what they said.",
		Tools:        []tool.Tool{agent.AsTool(historian, nil), agent.AsTool(critic, nil)},
		Store:        store,
	})
}

// run asks one question and prints the streamed turn, then the sessions.
func run(ctx context.Context, m llm.Model, w io.Writer) error {
	store := memstore.New()
	research, err := researcher(m, store)
	if err != nil {
		return err
	}
	q := "What is Go, the programming language?"
	fmt.Fprintf(w, "> %s\n", q)
	st := research.RunStream(ctx, []llm.Message{llm.UserText(q)}, &agent.RunOptions{SessionID: "study-1"})
	sub := map[string]string{} // each sub-agent's text, by tool call id
	var calls []string
	for u, err := range st.Updates() {
		if err != nil {
			return err
		}
		switch u.Kind {
		case agent.UpdateText:
			fmt.Fprint(w, u.Text)
		case agent.UpdateToolCall:
			fmt.Fprintf(w, "[asking %s]\n", u.ToolCall.Name)
		case agent.UpdateSubAgent:
			// The sub-agents run in parallel: collect their text by call.
			if u.Sub.Kind == agent.UpdateText {
				if _, seen := sub[u.ToolCall.ID]; !seen {
					calls = append(calls, u.ToolCall.ID)
				}
				sub[u.ToolCall.ID] += u.Sub.Text
			}
			if u.Sub.Kind == agent.UpdateFinish {
				fmt.Fprintf(w, "[%s answered %s: %d tokens]\n", u.Sub.Agent, u.ToolCall.ID, u.Sub.Usage.InputTokens+u.Sub.Usage.OutputTokens)
			}
		}
	}
	resp, err := st.Wait()
	if err != nil {
		return err
	}
	if err := resp.PersistErr(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n(the turn: %d tokens in, %d out, sub-agents included)\n\n", resp.Usage.InputTokens, resp.Usage.OutputTokens)

	slices.Sort(calls)
	for _, id := range calls {
		child, err := store.Load(ctx, agent.ChildSessionID("study-1", id))
		if err != nil {
			return err
		}
		p, _, _ := session.GetState[session.Parent](child, session.ParentKey)
		fmt.Fprintf(w, "session %s (called by %s in session %s, call %s): %d messages, %d tokens\n",
			child.ID, p.Agent, p.Session, p.ToolCallID, len(child.Messages), child.Usage.InputTokens+child.Usage.OutputTokens)
	}
	return nil
}
