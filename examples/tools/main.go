// Command tools shows a typed tool made from a plain Go function and a
// streamed multi-step tool loop with parallel calls. It runs offline: the
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

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
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

	// The pipeline: the tool loop over the model, tool calls logged.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pipeline := middleware.Chain(model,
		middleware.FunctionInvocation(middleware.ToolLoop{
			Invoker: tool.Invoker{
				Concurrency: 4,
				Timeout:     10 * time.Second,
				Middleware:  []tool.Middleware{middleware.ToolLogging(middleware.LogConfig{Logger: logger})},
			},
		}),
	)

	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("What's the weather in Paris and Tokyo?")},
		Tools:    reg.Definitions(),
	}
	step := 0
	for ev, err := range pipeline.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Type {
		case llm.EventMessageStart: // each model call of the loop starts a message
			step++
			fmt.Printf("── model call %d ──\n", step)
		case llm.EventTextDelta:
			fmt.Print(ev.Delta) // arrives in small pieces, as it is generated
		case llm.EventBlockStop:
			if u, ok := ev.Block.(llm.ToolUse); ok {
				fmt.Printf("\n  → %s %s (%s)", u.Name, u.Input, u.ID)
			}
		case llm.EventStepComplete:
			fmt.Printf("\n  [model call done: %s]\n", ev.Response.FinishReason)
		case llm.EventToolResult:
			mark := "✓"
			if ev.Message.IsError {
				mark = "✗"
			}
			fmt.Printf("  %s %s: %s\n", mark, ev.Message.ToolCallID, ev.Message.Text())
		case llm.EventComplete:
			r := ev.Response
			fmt.Printf("\nturn done: %s, %d messages in the transcript, %d+%d tokens over %d model calls\n",
				r.FinishReason, len(r.Transcript), r.Usage.InputTokens, r.Usage.OutputTokens, model.Calls())
			var roles []string
			for _, m := range r.Transcript {
				roles = append(roles, string(m.Role))
			}
			fmt.Println("transcript:", strings.Join(roles, " → "))
		}
	}
}
