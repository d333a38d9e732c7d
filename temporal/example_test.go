package agtemporal_test

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

// A turn as a workflow: the worker registers the models, tools and store
// by name, and the turn's input is data. Here the SDK's test environment
// plays the Temporal server; against a real one, use agtemporal.NewWorker
// on a worker and agtemporal.StartTurn on a client.
func Example() {
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny in Paris."),
	)
	type in struct {
		City string `json:"city"`
	}
	weather := tool.MustFunc("weather", "The weather in a city.", func(_ context.Context, a in) (string, error) {
		return "sunny in " + a.City, nil
	})
	store := memstore.New()

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	agtemporal.Register(env, agtemporal.Options{
		Models: map[string]llm.Model{"scripted": model}, DefaultModel: "scripted",
		Tools: []tool.Tool{weather}, Store: store,
	})
	env.ExecuteWorkflow(agtemporal.TurnWorkflowName, agtemporal.TurnInput{
		SessionID: "trip", TurnID: "turn-1",
		Messages: []llm.Message{llm.UserText("What is the weather in Paris?")},
	})
	var res agtemporal.TurnResult
	if err := env.GetWorkflowResult(&res); err != nil {
		fmt.Println(err)
		return
	}
	sess, _ := store.Load(context.Background(), "trip")
	fmt.Println(res.Text)
	fmt.Println("model calls:", res.Steps, "stored turns:", sess.Turns)
	fmt.Println("workflow id on a server:", agtemporal.TurnWorkflowID("trip", "turn-1"))
	// Output:
	// It is sunny in Paris.
	// model calls: 2 stored turns: 1
	// workflow id on a server: agcore-turn/trip/turn-1
}
