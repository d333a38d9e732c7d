package replay_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
)

// A run is recorded, then replayed with changed instructions: the replay
// answers with the recorded response and names the drift.
func ExampleNewModel() {
	ctx := context.Background()
	input := []llm.Message{llm.UserText("Hi")}

	// Record (a scripted model stands in for a provider).
	var file bytes.Buffer
	rec, _ := replay.NewRecorder(&file, replay.Header{Provider: "openai", Model: "gpt-4o"})
	live, _ := agent.New(llmtest.New(llmtest.Text("Hello!")), agent.Config{
		Instructions: "Be brief.",
		Middleware:   []middleware.Middleware{rec.Middleware()},
	})
	rec.Turn("", input)
	live.Run(ctx, input, nil)
	rec.Close()

	// Replay, with no model behind it.
	record, _ := replay.Parse(&file)
	m := replay.NewModel(record, replay.Options{OnDrift: func(d replay.Drift) { fmt.Println(d) }})
	a, _ := agent.New(m, agent.Config{Instructions: "Be thorough.", Retry: middleware.RetryConfig{MaxAttempts: 1}})
	resp, _ := a.Run(ctx, record.Turns[0].Input, nil)
	fmt.Println(resp.Text())
	// Output:
	// call 1: system prompt changed: "Be brief." → "Be thorough."
	// Hello!
}

// Diff names what differs between two requests in the message model's
// terms.
func ExampleDiff() {
	recorded := &llm.Request{Messages: []llm.Message{llm.SystemText("Be brief."), llm.UserText("Hi")}}
	replayed := &llm.Request{Messages: []llm.Message{llm.SystemText("Be brief."), llm.UserText("Hi"), llm.UserText("And?")},
		Tools: []llm.ToolDefinition{{Name: "grep"}}}
	for _, d := range replay.Diff(recorded, replayed) {
		fmt.Println(d)
	}
	// Output:
	// message 2 added: user [text]
	// tool grep added to the definitions
}
