// Command tools shows typed tools made from plain Go functions and an
// agent's streamed multi-step tool loop with parallel calls. It runs offline: the
// model is scripted with llmtest.
//
//	go run ./examples/tools
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// WeatherArgs are get_weather's arguments. The JSON Schema the model sees
// is generated from this struct: json names, omitempty for optional fields,
// the jsonschema tag for descriptions, the enum tag for allowed values.
type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Unit string `json:"unit,omitempty" jsonschema:"temperature unit (default celsius)" enum:"celsius,fahrenheit"`
}

// Weather is get_weather's result; the model reads it as JSON.
type Weather struct {
	City       string  `json:"city"`
	Conditions string  `json:"conditions"`
	Temp       float64 `json:"temp"`
	Unit       string  `json:"unit"`
}

func getWeather(ctx context.Context, in WeatherArgs) (Weather, error) {
	temps := map[string]float64{"Paris": 18, "Tokyo": 24}
	t, ok := temps[in.City]
	if !ok {
		return Weather{}, fmt.Errorf("no weather station in %q", in.City) // the model reads this
	}
	w := Weather{City: in.City, Conditions: "sunny", Temp: t, Unit: "celsius"}
	if in.Unit == "fahrenheit" {
		w.Temp, w.Unit = t*9/5+32, "fahrenheit"
	}
	return w, nil
}

func main() {
	// A typed tool from a Go function, and a registry that keeps the order.
	var reg tool.Registry
	err := reg.Register(
		tool.MustFunc("get_weather", "Current weather in a city.", getWeather),
		tool.MustFunc("local_time", "Current local time in a city.",
			func(_ context.Context, in struct {
				City string `json:"city"`
			}) (string, error) {
				return in.City + ": 14:05", nil
			}, tool.WithTimeout(2*time.Second)),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get_weather parameters: %s\n\n", reg.Definitions()[0].Parameters)

	// The scripted model: first it asks for three calls at once (one with a
	// city the tool does not know), then it answers.
	model := llmtest.New(
		llmtest.Reply(
			llm.Text{Text: "Let me check both cities. "},
			llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`),
			llmtest.Call("call_2", "get_weather", `{"city":"Tokyo","unit":"fahrenheit"}`),
			llmtest.Call("call_3", "local_time", `{"city":"Tokyo"}`),
		).WithUsage(llm.Usage{InputTokens: 120, OutputTokens: 40}),
		llmtest.Reply(
			llm.Text{Text: "And Atlantis? "},
			llmtest.Call("call_4", "get_weather", `{"city":"Atlantis"}`),
		).WithUsage(llm.Usage{InputTokens: 260, OutputTokens: 20}),
		llmtest.Text("Paris is sunny at 18°C; Tokyo is sunny at 75.2°F (it is 14:05 there). Atlantis has no weather station.").
			WithUsage(llm.Usage{InputTokens: 330, OutputTokens: 30}),
	)

	// The agent: the tool loop over the model, up to 4 calls at once, tool
	// calls logged (warnings only here).
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := agent.New(model, agent.Config{
		Tools:           reg.List(),
		ToolConcurrency: 4,
		ToolTimeout:     10 * time.Second, // local_time sets its own 2 s
		Logger:          logger,
	})
	if err != nil {
		log.Fatal(err)
	}

	st := a.RunStream(context.Background(), []llm.Message{llm.UserText("What's the weather in Paris and Tokyo?")}, nil)
	afterResults := false
	for u, err := range st.Updates() {
		if err != nil {
			log.Fatal(err)
		}
		switch u.Kind {
		case agent.UpdateText:
			if afterResults { // the next model call of the loop
				fmt.Print("\n")
				afterResults = false
			}
			fmt.Print(u.Text) // arrives in small pieces, as it is generated
		case agent.UpdateToolCall: // whole, once its arguments are complete
			fmt.Printf("\n  → %s %s (%s)", u.ToolCall.Name, u.ToolCall.Input, u.ToolCall.ID)
		case agent.UpdateToolResult:
			mark := "✓"
			if u.ToolResult.IsError {
				mark = "✗"
			}
			fmt.Printf("\n  %s %s: %s", mark, u.ToolResult.ToolCallID, u.ToolResult.Text())
			afterResults = true
		case agent.UpdateFinish:
			r := u.Response
			fmt.Printf("\n\nturn done: %s, %d messages in the transcript, %d+%d tokens over %d model calls\n",
				r.FinishReason, len(r.Messages), r.Usage.InputTokens, r.Usage.OutputTokens, model.Calls())
			var roles []string
			for _, m := range r.Messages {
				roles = append(roles, string(m.Role))
			}
			fmt.Println("transcript:", strings.Join(roles, " → "))
		}
	}
}
