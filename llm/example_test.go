package llm_test

import (
	"encoding/json"
	"fmt"

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
