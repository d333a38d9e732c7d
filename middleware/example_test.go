package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

type cityArgs struct {
	City string `json:"city"`
}

func ExampleFunctionInvocation() {
	weather := tool.MustFunc("get_weather", "Current weather.", func(_ context.Context, in cityArgs) (string, error) {
		return "sunny in " + in.City, nil
	})
	model := llmtest.New( // stands in for a provider adapter
		llmtest.Reply(llmtest.Call("c1", "get_weather", `{"city":"Paris"}`), llmtest.Call("c2", "get_weather", `{"city":"Oslo"}`)),
		llmtest.Text("Both sunny."),
	)
	// agent.New assembles this (and more) itself; composing by hand:
	m := middleware.Chain(model, middleware.FunctionInvocation(middleware.ToolLoop{
		Tools:    []tool.Tool{weather}, // offered on every request, run as they are
		MaxSteps: 10,
	}))

	resp, err := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{llm.UserText("Weather in Paris and Oslo?")},
	})
	if err != nil {
		panic(err)
	}
	for _, msg := range resp.Transcript {
		switch msg.Role {
		case llm.RoleAssistant:
			fmt.Printf("assistant: %d tool calls %q\n", len(msg.ToolUses()), msg.Text())
		case llm.RoleTool:
			fmt.Printf("result for %s: %s\n", msg.ToolCallID, msg.Text())
		}
	}
	fmt.Println(resp.FinishReason)
	// Output:
	// assistant: 2 tool calls ""
	// result for c1: sunny in Paris
	// result for c2: sunny in Oslo
	// assistant: 0 tool calls "Both sunny."
	// stop
}

func ExampleRetry() {
	model := llmtest.New(
		llmtest.Fail(&llm.Error{Kind: llm.KindOverloaded, StatusCode: 529}),
		llmtest.Text("hello"),
	)
	m := middleware.Retry(middleware.RetryConfig{
		BaseDelay: time.Millisecond,
		OnRetry: func(_ context.Context, attempt int, _ time.Duration, err error) {
			fmt.Println("retry after:", err)
		},
	})(model)
	resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	fmt.Println(resp.Message.Text(), err)
	// Output:
	// retry after: llm: overloaded (HTTP 529)
	// hello <nil>
}

func ExampleHooks() {
	hooks := &middleware.Hooks{
		PreRequest: []middleware.Hook[middleware.PreRequestFunc]{{
			Name: "budget",
			Func: func(_ context.Context, req *llm.Request) error {
				if len(req.Messages) > 100 {
					return middleware.Block("conversation too long")
				}
				return nil
			},
		}},
		PreToolUse: []middleware.Hook[middleware.PreToolUseFunc]{{
			Name: "no-rm",
			Func: func(_ context.Context, call *tool.Call) error {
				if call.Name == "shell" {
					return middleware.Deny("shell commands are disabled")
				}
				return nil
			},
		}},
		Logger: slog.New(slog.DiscardHandler),
	}
	type shellArgs struct {
		Cmd string `json:"cmd"`
	}
	shell := tool.MustFunc("shell", "Runs a command.", func(context.Context, shellArgs) (string, error) { return "ran", nil })
	model := llmtest.New(llmtest.Reply(llmtest.Call("c1", "shell", `{"cmd":"rm -rf /"}`)), llmtest.Text("ok, I won't"))
	// agent.New installs both halves from one Config.Hooks; by hand:
	m := middleware.Chain(model,
		middleware.FunctionInvocation(middleware.ToolLoop{
			Tools:   []tool.Tool{shell},
			Invoker: tool.Invoker{Middleware: []tool.Middleware{hooks.ToolMiddleware()}},
		}),
		hooks.Middleware(),
	)
	resp, _ := m.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{llm.UserText("clean the disk")},
	})
	fmt.Println(resp.Transcript[1].Text())
	// Output:
	// the call to tool "shell" was denied by hook "no-rm" and did not run: shell commands are disabled
}

func ExampleChain() {
	model := llmtest.New(llmtest.Text("hi"))
	m := middleware.Chain(model,
		middleware.FunctionInvocation(middleware.ToolLoop{}), // outermost: the whole turn
		middleware.Retry(middleware.RetryConfig{}),           // each model call
		middleware.Logging(middleware.LogConfig{Logger: slog.New(slog.DiscardHandler)}),
	)
	resp, _ := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hello")}})
	fmt.Println(resp.Message.Text())
	// Output: hi
}
