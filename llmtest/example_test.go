package llmtest_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

func ExampleNew() {
	m := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Checking."}, llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny in Paris."),
	)
	// In a test: m.Verify(t) fails the test if a step is left unused.
	ctx := context.Background()
	r1, _ := m.Generate(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("Weather in Paris?")}})
	fmt.Println(r1.FinishReason, r1.Message.ToolUses()[0].Name)

	r2, _ := llm.Collect(m.Stream(ctx, &llm.Request{}))
	fmt.Println(r2.Message.Text())
	fmt.Println(len(m.Requests()), "requests recorded")
	// Output:
	// tool_use get_weather
	// It is sunny in Paris.
	// 2 requests recorded
}
