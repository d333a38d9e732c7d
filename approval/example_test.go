package approval_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// A host parks the approval of a risky tool in a Broker and decides it
// when its client answers (here, at once, from the notification).
func Example() {
	deploy := tool.MustFunc("deploy", "Deploy the site.", func(context.Context, struct{}) (string, error) {
		return "deployed", nil
	}, tool.WithApproval())
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "deploy", `{}`)), llmtest.Text("Deployed."))
	broker := &approval.Broker{}
	a, _ := agent.New(model, agent.Config{Tools: []tool.Tool{deploy}, Approver: broker})

	ctx := approval.WithOwner(context.Background(), approval.Owner{Session: "s1", Run: "run-1"})
	ctx = approval.WithNotify(ctx, func(r approval.Request) {
		fmt.Println("waiting:", r.ID, r.Tool)
		go broker.Decide(r.ID, tool.Decision{Approved: true})
	})
	resp, err := a.Run(ctx, []llm.Message{llm.UserText("ship it")}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text())
	// Output:
	// waiting: run-1/call_1 deploy
	// Deployed.
}
