// Command agent runs an agent with a tool and a context provider for three
// turns against a scripted model, persists the session into SQLite, then
// reloads it and prints the history and the usage. It runs offline.
//
//	go run ./examples/agent
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
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

// profile is a context provider: it tells the model who the user is and
// counts the user's turns in the session's state bag, which the agent
// persists with each successful turn. Its instructions stay the same from
// turn to turn, so each request extends the previous one byte-for-byte and
// the provider's prompt cache can serve the prefix (a turn number in the
// instructions would change the system message and miss the cache every
// time; the session's prefix statistic would show it).
type profile struct{ name string }

func (p profile) Name() string { return "profile" }

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

func (p profile) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agcore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")

	// The scripted model: turn 1 calls the tool, turns 2 and 3 answer.
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 210, OutputTokens: 18}),
		llmtest.Text("Paris is sunny at 18°C.").WithUsage(llm.Usage{InputTokens: 260, OutputTokens: 9}),
		llmtest.Text("Take sunglasses, Ada.").WithUsage(llm.Usage{InputTokens: 300, OutputTokens: 7, CachedInputTokens: 256}),
		llmtest.Text("You asked about Paris.").WithUsage(llm.Usage{InputTokens: 330, OutputTokens: 6, CachedInputTokens: 256}),
	)

	store, err := sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	a := &agent.Agent{
		Name:         "travel",
		Instructions: "You are a brief travel assistant.",
		Tools:        []tool.Tool{tool.MustFunc("get_weather", "Current weather in a city.", getWeather)},
		Providers:    []agent.ContextProvider{profile{name: "Ada"}},
		Model:        middleware.Chain(model, middleware.FunctionInvocation(middleware.ToolLoop{})),
		Store:        store,
	}
	const id = "trip-1"
	for _, q := range []string{"What's the weather in Paris?", "What should I pack?", "Which city did I ask about?"} {
		fmt.Println("> " + q)
		st := a.RunStream(ctx, []llm.Message{llm.UserText(q)}, &agent.RunOptions{SessionID: id})
		for u, err := range st.Updates() {
			if err != nil {
				log.Fatal(err)
			}
			switch u.Kind {
			case agent.UpdateText:
				fmt.Print(u.Text)
			case agent.UpdateToolCall:
				fmt.Printf("[calling %s %s]\n", u.ToolCall.Name, u.ToolCall.Input)
			case agent.UpdateToolResult:
				fmt.Printf("[%s → %s]\n", u.ToolResult.ToolCallID, u.ToolResult.Text())
			}
		}
		resp, err := st.Wait()
		if err != nil {
			log.Fatal(err)
		}
		if err := resp.PersistErr(); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\n(%d in + %d out tokens)\n\n", resp.Usage.InputTokens, resp.Usage.OutputTokens)
	}
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	// Reopen the database as a new process would and print what it holds.
	store, err = sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	s, err := store.Load(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("session %s: %d turns, %d messages\n", s.ID, s.Turns, len(s.Messages))
	for i, m := range s.Messages {
		text := m.Text()
		for _, c := range m.ToolUses() {
			text += fmt.Sprintf("[call %s %s]", c.Name, c.Input)
		}
		fmt.Printf("%2d %-11s %s\n", i, m.Role, text)
	}
	turns, _, _ := session.GetState[int](s, "profile.turns")
	fmt.Printf("usage: %d input (%d cached) + %d output tokens\n", s.Usage.InputTokens, s.Usage.CachedInputTokens, s.Usage.OutputTokens)
	fmt.Printf("prompt-cache prefix: %d requests, %d extended the previous one\n", s.Prefix.Requests, s.Prefix.PrefixStable)
	fmt.Printf("profile state: %d turns\n", turns)
}
