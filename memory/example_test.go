package memory_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/memory"
)

// An agent without a session store remembers each session's conversation
// through the memory provider: the second run's request carries the first
// run's exchange.
func ExampleProvider() {
	model := llmtest.New(llmtest.Text("Hello, Ada!"), llmtest.Text("Your name is Ada."))
	a, err := agent.New(model, agent.Config{
		Instructions: "You are friendly.",
		Providers:    []agent.ContextProvider{&memory.Provider{Store: &memory.MapStore{}, Config: memory.Config{MaxMessages: 20}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	opts := &agent.RunOptions{SessionID: "user-42"}
	for _, q := range []string{"I am Ada.", "What is my name?"} {
		resp, err := a.Run(ctx, []llm.Message{llm.UserText(q)}, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resp.Text())
	}
	for _, m := range model.Requests()[1].Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// Hello, Ada!
	// Your name is Ada.
	// system: You are friendly.
	// user: I am Ada.
	// assistant: Hello, Ada!
	// user: What is my name?
}
