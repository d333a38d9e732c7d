package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
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

// One agent serves two sessions at once; each run carries its session's
// record in its context, so the calls of the two never mix. (replay.Dir
// keeps such records as files, one per session.)
func ExampleWithTurn() {
	ctx := context.Background()
	echo := llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.AssistantText("echo: " + req.Messages[len(req.Messages)-1].Text())}, nil
	})
	a, _ := agent.New(llmtest.New(echo, echo, echo), agent.Config{
		Middleware:     []middleware.Middleware{replay.ContextMiddleware()},
		ToolMiddleware: []tool.Middleware{replay.ContextToolMiddleware()},
	})
	records := map[string]*replay.Recorder{"alice": replay.Memory(replay.Header{}), "bob": replay.Memory(replay.Header{})}
	sessions := map[string]*session.Session{"alice": {ID: "alice"}, "bob": {ID: "bob"}}
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			input := []llm.Message{llm.UserText("hi from " + who)}
			a.Run(replay.WithTurn(ctx, records[who], who, input), input, &agent.RunOptions{Session: sessions[who]})
		})
	}
	wg.Wait()
	input := []llm.Message{llm.UserText("again from alice")}
	a.Run(replay.WithTurn(ctx, records["alice"], "alice", input), input, &agent.RunOptions{Session: sessions["alice"]})

	for _, who := range []string{"alice", "bob"} {
		for _, c := range records[who].Record().Calls {
			fmt.Printf("%s: turn %d: %s\n", who, c.Turn, c.Response.Message.Text())
		}
	}
	// Output:
	// alice: turn 1: echo: hi from alice
	// alice: turn 2: echo: again from alice
	// bob: turn 1: echo: hi from bob
}
