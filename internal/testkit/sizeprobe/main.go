// Command sizeprobe is the smallest program that builds a standard agent:
// agent.New over the OpenAI adapter (tool loop, budget policy with the
// estimator, retries), with one typed tool and no session store. Its binary
// size is what every agent program pays for agcore; the tests in this
// directory build it and check the size and what it links.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
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
	a, err := agent.New(adapter, agent.Config{Name: "probe", Tools: []tool.Tool{weather}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText(os.Args[len(os.Args)-1])}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(resp.Text())
}
