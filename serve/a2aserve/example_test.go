package a2aserve_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
)

// An agent served over A2A, asked a question by the SDK's own client.
func Example() {
	broker := &approval.Broker{}
	a, _ := agent.New(llmtest.New(llmtest.Text("Paris.")), agent.Config{Name: "geo", Approver: broker})
	set, _ := host.NewSet(host.Agent{Name: "geo", Description: "Answers geography questions.", Agent: a})
	h, _ := a2aserve.New(set, broker, a2aserve.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL+"/a2a/geo")
	if err != nil {
		panic(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		panic(err)
	}
	defer client.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "What is the capital of France?"})
	res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
	if err != nil {
		panic(err)
	}
	task := res.(*a2a.Task)
	fmt.Println(card.Name, task.Status.State)
	fmt.Println(task.Artifacts[0].Parts[0].(a2a.TextPart).Text)
	// Output:
	// geo completed
	// Paris.
}
