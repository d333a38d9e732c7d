package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
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

// Guardrails are hooks ([middleware.Hooks]): input guardrails check a
// turn's input alongside its first model call, output guardrails its final
// answer. A tripped guardrail stops the turn with a
// *middleware.GuardrailError before any tool runs, and nothing of the turn
// is stored.
func Example_guardrails() {
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "delete_files", `{}`)), // never reaches the tool loop
		llmtest.Text("Paris is the capital of France."),
	)
	onTopic := func(_ context.Context, req *llm.Request) error {
		last := req.Messages[len(req.Messages)-1] // the caller's new message
		if strings.Contains(strings.ToLower(last.Text()), "delete") {
			return middleware.Tripwire("asks to delete files", map[string]any{"rule": "no-deletes"})
		}
		return nil
	}
	noSecrets := func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
		if strings.Contains(resp.Message.Text(), "password") {
			return middleware.Block("the answer leaks a password")
		}
		return nil
	}
	a, err := agent.New(model, agent.Config{
		Tools: []tool.Tool{tool.MustFunc("delete_files", "Deletes files.", func(context.Context, struct{}) (string, error) {
			return "deleted", nil
		})},
		Hooks: &middleware.Hooks{
			InputGuardrails:  []middleware.Hook[middleware.InputGuardrailFunc]{{Name: "on-topic", Func: onTopic}},
			OutputGuardrails: []middleware.Hook[middleware.OutputGuardrailFunc]{{Name: "no-secrets", Func: noSecrets}},
			// GuardrailMode: middleware.GuardrailsBlocking checks before the model call.
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = a.Run(context.Background(), []llm.Message{llm.UserText("Delete all my files.")}, nil)
	var ge *middleware.GuardrailError
	if errors.As(err, &ge) && errors.Is(err, middleware.ErrTripwire) {
		fmt.Printf("%s guardrail %q tripped: %s %v\n", ge.Stage, ge.Guardrail, ge.Reason, ge.Info)
	}
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText("Capital of France?")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text())
	// Output:
	// input guardrail "on-topic" tripped: asks to delete files map[rule:no-deletes]
	// Paris is the capital of France.
}

// Handoffs: the triage agent's model calls transfer_to_billing, and the
// billing agent answers the rest of the turn under its own instructions.
func ExampleConfig_handoffs() {
	billing, _ := agent.New(llmtest.New(llmtest.Text("Your refund is on its way.")),
		agent.Config{Name: "billing", Instructions: "You handle refunds.", Description: "Invoices and refunds."})
	triage, _ := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("c1", agent.TransferToolName("billing"), `{}`))),
		agent.Config{Name: "triage", Instructions: "Route each question.", Handoffs: []*agent.Agent{billing}})
	_ = billing.AddHandoffs(triage) // and back: a cycle

	for u, err := range triage.RunStream(context.Background(), []llm.Message{llm.UserText("I want a refund")}, nil).Updates() {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch u.Kind {
		case agent.UpdateHandoff:
			fmt.Printf("handed over: %s → %s\n", u.From, u.Agent)
		case agent.UpdateFinish:
			fmt.Printf("%s: %s\n", u.Response.Agent, u.Response.Text())
		}
	}
	// Output:
	// handed over: triage → billing
	// billing: Your refund is on its way.
}

// An agent as another agent's tool: the writer's model calls the
// researcher, whose updates arrive wrapped in UpdateSubAgent.
func ExampleAsTool() {
	researcher, _ := agent.New(llmtest.New(llmtest.Text("Go 1.0: March 2012.")), agent.Config{Name: "researcher"})
	writer, _ := agent.New(llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "researcher", `{"input":"When was Go 1.0 released?"}`)),
		llmtest.Text("Go 1.0 came out in March 2012."),
	), agent.Config{Name: "writer", Tools: []tool.Tool{agent.AsTool(researcher, nil)}})

	for u, err := range writer.RunStream(context.Background(), []llm.Message{llm.UserText("Tell me about Go 1.0")}, nil).Updates() {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case u.Kind == agent.UpdateSubAgent && u.Sub.Kind == agent.UpdateFinish:
			fmt.Printf("%s (call %s) answered: %s\n", u.Sub.Agent, u.ToolCall.ID, u.Sub.Response.Text())
		case u.Kind == agent.UpdateFinish:
			fmt.Printf("%s: %s\n", u.Agent, u.Response.Text())
		}
	}
	// Output:
	// researcher (call c1) answered: Go 1.0: March 2012.
	// writer: Go 1.0 came out in March 2012.
}
