package agent_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

type cityArgs struct {
	City string `json:"city"`
}

func ExampleAgent_Run() {
	weather := tool.MustFunc("get_weather", "Current weather in a city.",
		func(_ context.Context, in cityArgs) (string, error) { return "sunny, 18°C in " + in.City, nil })
	model := llmtest.New( // a scripted model: a tool call, then the answer
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny and 18°C in Paris."),
	)
	a := &agent.Agent{
		Name:         "weather",
		Instructions: "Answer in one sentence.",
		Tools:        []tool.Tool{weather},
		Model:        middleware.Chain(model, middleware.FunctionInvocation(middleware.ToolLoop{})),
	}
	var s session.Session // an in-memory session; use Agent.Store to persist
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText("Weather in Paris?")}, &agent.RunOptions{Session: &s})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text())
	for _, m := range s.Messages {
		fmt.Printf("%s %q\n", m.Role, m.Text())
	}
	// Output:
	// It is sunny and 18°C in Paris.
	// user "Weather in Paris?"
	// assistant ""
	// tool_result "sunny, 18°C in Paris"
	// assistant "It is sunny and 18°C in Paris."
}

func ExampleAgent_RunStream() {
	a := &agent.Agent{Name: "poet", Model: llmtest.New(llmtest.Text("Roses are red."))}
	st := a.RunStream(context.Background(), []llm.Message{llm.UserText("A poem?")}, nil)
	for u, err := range st.Updates() {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch u.Kind {
		case agent.UpdateText:
			fmt.Print(u.Text) // arrives in pieces as the model writes
		case agent.UpdateFinish:
			fmt.Println("\nfinish:", u.FinishReason)
		}
	}
	resp, err := st.Wait() // waits for persistence, if any
	fmt.Println(resp.Agent, err, resp.PersistErr())
	// Output:
	// Roses are red.
	// finish: stop
	// poet <nil> <nil>
}
