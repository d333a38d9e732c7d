// Command agent runs an agent with a tool and a context provider for three
// turns against a scripted model, persists the session into SQLite, then
// reloads it and prints the history and the usage. It runs offline.
//
//	go run ./examples/agent
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

// CityArgs are get_weather's arguments.
type CityArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
}

func getWeather(_ context.Context, in CityArgs) (string, error) {
	return map[string]string{"Paris": "sunny, 18°C", "Oslo": "rain, 9°C"}[in.City], nil
}

// id is the session the example talks in.
const id = "trip-1"

// profile is a context provider: it tells the model who the user is and
// counts the user's turns in the session's state bag, which the agent
// persists with each successful turn. Its instructions stay the same from
// turn to turn, so each request extends the previous one byte-for-byte and
// the provider's prompt cache can serve the prefix (a turn number in the
// instructions would change the system message and miss the cache every
// time; the session's prefix statistic would show it).
type profile struct{ name string }

// Name names the provider in logs.
func (p profile) Name() string { return "profile" }

// Invoking adds the user's name and counts the turn.
func (p profile) Invoking(_ context.Context, inv *agent.Invocation) (agent.Injection, error) {
	n, _, err := session.GetState[int](inv.Session, "profile.turns")
	if err != nil {
		return agent.Injection{}, err
	}
	if err := session.SetState(inv.Session, "profile.turns", n+1); err != nil {
		return agent.Injection{}, err
	}
	return agent.Injection{Instructions: "The user is " + p.name + "."}, nil
}

// Invoked has nothing to do.
func (p profile) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the three turns, the reload and the printing.
func run(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "agcore-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")

	// The scripted model: turn 1 calls the tool, turns 2 and 3 answer.
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 210, OutputTokens: 18}),
		llmtest.Text("Paris is sunny at 18°C.").WithUsage(llm.Usage{InputTokens: 260, OutputTokens: 9}),
		llmtest.Text("Take sunglasses, Ada.").WithUsage(llm.Usage{InputTokens: 300, OutputTokens: 7, CachedInputTokens: 256}),
		llmtest.Text("You asked about Paris.").WithUsage(llm.Usage{InputTokens: 330, OutputTokens: 6, CachedInputTokens: 256}),
	).WithInfo(gpt4oMini()) // answers as gpt-4o-mini, so turns are priced

	if err := converse(ctx, w, path, model); err != nil {
		return err
	}
	return reload(ctx, w, path)
}

// converse runs the three turns, persisting into the database at path.
func converse(ctx context.Context, w io.Writer, path string, model llm.Model) (err error) {
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := store.Close(); err == nil {
			err = cerr
		}
	}()
	a, err := agent.New(model, agent.Config{
		Name:         "travel",
		Instructions: "You are a brief travel assistant.",
		Tools:        []tool.Tool{tool.MustFunc("get_weather", "Current weather in a city.", getWeather)},
		Providers:    []agent.ContextProvider{profile{name: "Ada"}},
		Store:        store,
	})
	if err != nil {
		return err
	}
	for _, q := range []string{"What's the weather in Paris?", "What should I pack?", "Which city did I ask about?"} {
		fmt.Fprintln(w, "> "+q)
		st := a.RunStream(ctx, []llm.Message{llm.UserText(q)}, &agent.RunOptions{SessionID: id})
		for u, err := range st.Updates() {
			if err != nil {
				return err
			}
			switch u.Kind {
			case agent.UpdateText:
				fmt.Fprint(w, u.Text)
			case agent.UpdateToolCall:
				fmt.Fprintf(w, "[calling %s %s]\n", u.ToolCall.Name, u.ToolCall.Input)
			case agent.UpdateToolResult:
				fmt.Fprintf(w, "[%s → %s]\n", u.ToolResult.ToolCallID, u.ToolResult.Text())
			}
		}
		resp, err := st.Wait()
		if err != nil {
			return err
		}
		if err := resp.PersistErr(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n(%d in + %d out tokens, $%.6f)\n\n", resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.CostUSD)
	}
	return nil
}

// reload opens the database as a new process would and prints what it
// holds.
func reload(ctx context.Context, w io.Writer, path string) error {
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer store.Close()
	s, err := store.Load(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "session %s: %d turns, %d messages\n", s.ID, s.Turns, len(s.Messages))
	for i, m := range s.Messages {
		text := m.Text()
		for _, c := range m.ToolUses() {
			text += fmt.Sprintf("[call %s %s]", c.Name, c.Input)
		}
		fmt.Fprintf(w, "%2d %-11s %s\n", i, m.Role, text)
	}
	turns, _, _ := session.GetState[int](s, "profile.turns")
	fmt.Fprintf(w, "usage: %d input (%d cached) + %d output tokens, $%.6f (prices of %s)\n",
		s.Usage.InputTokens, s.Usage.CachedInputTokens, s.Usage.OutputTokens, s.CostUSD, catalog.PricesAsOf)
	fmt.Fprintf(w, "prompt-cache prefix: %d requests, %d extended the previous one\n", s.Prefix.Requests, s.Prefix.PrefixStable)
	fmt.Fprintf(w, "profile state: %d turns\n", turns)
	return nil
}

// gpt4oMini is what the catalog knows of gpt-4o-mini sold by OpenAI, its
// price included.
func gpt4oMini() llm.ModelInfo {
	info, _ := catalog.Default().LookupFor("openai", "gpt-4o-mini")
	return info
}
