// Command sizeprobe is the smallest program that builds a standard agent:
// an agent.Agent over the tool loop and retries on the OpenAI adapter, with
// one typed tool, the estimator counter and no session store. Its binary
// size is what every agent program pays for agcore; the tests in this
// directory build it and check the size and what it links.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/tool"
)

type cityArgs struct {
	City string `json:"city"`
}

func main() {
	weather := tool.MustFunc("get_weather", "Current weather in a city.",
		func(_ context.Context, in cityArgs) (string, error) { return "sunny in " + in.City, nil })
	adapter := openai.New(openai.WithModel("gpt-4o-mini"))
	info := adapter.Info()
	a := &agent.Agent{
		Name:  "probe",
		Tools: []tool.Tool{weather},
		Model: middleware.Chain(adapter,
			middleware.FunctionInvocation(middleware.ToolLoop{}),
			middleware.Retry(middleware.RetryConfig{}),
		),
		ModelInfo:   &info,
		Compression: compact.Truncate{},
		Counter:     compact.CounterFor(info),
	}
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText(os.Args[len(os.Args)-1])}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(resp.Text())
}
