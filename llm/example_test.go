package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/agcore/agcore/llm"
)

func ExampleMessage_MarshalJSON() {
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text{Text: "Checking."},
		llm.ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Beijing"}`)},
	}}
	data, _ := json.Marshal(msg)
	fmt.Println(string(data))
	// Output: {"type":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Beijing"}}]}
}

func ExampleCollect() {
	stream := llm.StreamOf(&llm.Response{Message: llm.AssistantText("Hello!"), FinishReason: llm.FinishStop})
	for ev, err := range stream {
		if err != nil {
			break
		}
		if ev.Type == llm.EventTextDelta {
			fmt.Print(ev.Delta)
		}
	}
	resp, _ := llm.Collect(stream)
	fmt.Println("", resp.FinishReason)
	// Output: Hello! stop
}

// A model decorator written once, as a stream: it serves Generate too,
// whose call stays blocking below it.
func ExampleDecorate() {
	var below llm.Model = llmStub{}
	calls := 0
	counting := llm.Decorate(below, func(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
		calls++
		return next.Stream(ctx, req)
	})
	resp, _ := counting.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	fmt.Println(resp.Message.Text(), calls)
	// Output: hello 1
}

// llmStub answers "hello".
type llmStub struct{}

func (llmStub) Info() llm.ModelInfo { return llm.ModelInfo{} }
func (llmStub) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return &llm.Response{Message: llm.AssistantText("hello"), FinishReason: llm.FinishStop}, nil
}
func (s llmStub) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return llm.Next{Model: s, Blocking: true}.Stream(ctx, req)
}
