package structured_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/structured"
)

// Invoice is the answer type of the examples.
type Invoice struct {
	Number string  `json:"number" jsonschema:"the invoice number"`
	Total  float64 `json:"total"`
	Paid   bool    `json:"paid,omitempty"`
}

func ExampleRun() {
	// A scripted model standing for OpenAI (strict json_schema): its first
	// answer misses a property, the repair turn's is whole.
	model := llmtest.New(
		llmtest.Text(`{"number":"A-17","paid":null}`),
		llmtest.Text(`{"number":"A-17","total":120.5,"paid":null}`),
	).WithInfo(llm.ModelInfo{Provider: "openai", Name: "gpt-4o", Structured: llm.StructuredStrict})
	a, _ := agent.New(model, agent.Config{Instructions: "Extract the invoice."})

	inv, _, err := structured.Run[Invoice](context.Background(), a,
		[]llm.Message{llm.UserText("Invoice A-17, total 120.50 EUR, not paid yet.")}, nil)
	if err != nil {
		var se *structured.Error
		if errors.As(err, &se) {
			fmt.Println(se.Kind, se.Path, se.Raw)
		}
		return
	}
	fmt.Printf("%s %.2f paid=%v\n", inv.Number, inv.Total, inv.Paid)
	fmt.Println(model.Requests()[0].ResponseFormat.Strict)
	// Output:
	// A-17 120.50 paid=false
	// true
}

func ExampleStream() {
	model := llmtest.New(llmtest.Text(`{"number":"A-17","total":120.5,"paid":true}`)).
		WithInfo(llm.ModelInfo{Provider: "anthropic", Structured: llm.StructuredSchema}).WithChunkSize(12)
	a, _ := agent.New(model, agent.Config{})
	for p, err := range structured.Stream[Invoice](context.Background(), a, []llm.Message{llm.UserText("Invoice A-17?")}, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if p.Done {
			fmt.Printf("done: %+v\n", p.Value)
		} else {
			fmt.Printf("so far: %s\n", p.JSON)
		}
	}
	// Output:
	// so far: {"number":"A"}
	// so far: {"number":"A-17"}
	// so far: {"number":"A-17","total":120.5}
	// so far: {"number":"A-17","total":120.5,"paid":true}
	// done: {Number:A-17 Total:120.5 Paid:true}
}
