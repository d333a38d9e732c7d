package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

type addArgs struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

func ExampleFunc() {
	add, err := tool.Func("add", "Add two integers.", func(_ context.Context, in addArgs) (int, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(add.Parameters()))

	out, _ := add.Invoke(context.Background(), json.RawMessage(`{"a":2,"b":3}`))
	fmt.Println(out)

	_, err = add.Invoke(context.Background(), json.RawMessage(`{"a":2}`))
	fmt.Println(err)
	// Output:
	// {"type":"object","properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer","description":"second addend"}},"required":["a","b"],"additionalProperties":false}
	// 5
	// invalid arguments for tool "add": does not match the schema: required: missing properties: ["b"]
}

func ExampleInvoker_Invoke() {
	var reg tool.Registry
	_ = reg.Register(tool.MustFunc("add", "Add two integers.", func(_ context.Context, in addArgs) (int, error) {
		return in.A + in.B, nil
	}))
	inv := tool.Invoker{Concurrency: 4, MaxResultBytes: 1 << 10}
	results, err := inv.Invoke(context.Background(), reg.Get, []llm.ToolUse{
		{ID: "call_1", Name: "add", Input: json.RawMessage(`{"a":1,"b":2}`)},
		{ID: "call_2", Name: "subtract", Input: json.RawMessage(`{"a":1,"b":2}`)},
		{ID: "call_3", Name: "add", Input: json.RawMessage(`{"a":"one"}`)},
	})
	if err != nil {
		panic(err) // a fatal tool error or cancellation
	}
	for _, r := range results {
		fmt.Printf("%s error=%v: %s\n", r.ToolCallID, r.IsError, r.Text())
	}
	// Output:
	// call_1 error=false: 3
	// call_2 error=true: tool "subtract" not found
	// call_3 error=true: invalid arguments for tool "add": does not match the schema: validating /properties/a: type: one has type "string", want "integer"
}
