package agent_test

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

func ExampleNew() {
	type args struct {
		City string `json:"city" jsonschema:"the city"`
	}
	weather := tool.MustFunc("get_weather", "Current weather in a city.", func(_ context.Context, a args) (string, error) {
		return "sunny, 18°C in " + a.City, nil
	})
	// A scripted model stands in for a provider adapter such as openai.New().
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny and 18°C in Paris."),
	)
	a, err := agent.New(model, agent.Config{
		Name:         "weather",
		Instructions: "Answer in one sentence.",
		Tools:        []tool.Tool{weather},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var s session.Session // an in-memory session; Config.Store persists them
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
	a, err := agent.New(llmtest.New(llmtest.Text("Roses are red.")), agent.Config{Name: "poet"})
	if err != nil {
		fmt.Println(err)
		return
	}
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
	// Output:
	// Roses are red.
	// finish: stop
}
