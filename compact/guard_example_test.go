package compact_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

func ExampleGuard() {
	// A turn of a tool loop that has read ten large files.
	msgs := []llm.Message{llm.SystemText("You read files."), llm.UserText("Read f0.txt to f9.txt.")}
	for i := range 10 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call(id, "read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, i))}},
			llm.ToolResultText(id, strings.Repeat(fmt.Sprintf("line of f%d.txt\n", i), 60), false))
	}

	adapter := llmtest.New(llmtest.Text("Done."))
	counter := compact.Estimator{}
	// In a pipeline: middleware.Chain(adapter, middleware.FunctionInvocation(loop),
	// compact.Guard(policy), hooks.Middleware(), middleware.Retry(retry), ...);
	// agent.New puts it there itself.
	model := compact.Guard(&compact.Policy{Counter: counter, Budget: 1500})(adapter)

	req := &llm.Request{Messages: msgs}
	if _, err := model.Generate(context.Background(), req); err != nil {
		fmt.Println(err)
		return
	}
	sent := adapter.Requests()[0]
	fmt.Println("caller's request:", len(req.Messages), "messages, over the budget:", counter.CountMessages(req.Messages) > 1500)
	fmt.Println("sent:", len(sent.Messages), "messages, within the budget:", counter.CountMessages(sent.Messages) <= 1500)
	fmt.Println("valid:", compact.Validate(sent.Messages) == nil)
	// Output:
	// caller's request: 22 messages, over the budget: true
	// sent: 10 messages, within the budget: true
	// valid: true
}
