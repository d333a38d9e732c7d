package agent_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// With the real tool loop in the pipeline the agent never sees a tool run:
// it gets the loop's events and persists the loop's transcript.
func TestTheToolLoopIsInvisibleToTheAgent(t *testing.T) {
	m := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Checking."}, llmtest.Call("call_1", "search", `{"q":"go"}`), llmtest.Call("call_2", "clock", `{}`)).
			WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 3}),
		llmtest.Text("Found it.").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 2}),
	).WithChunkSize(4).Verify(t)
	store := newStore()
	a := &agent.Agent{
		Name:  "a",
		Tools: []tool.Tool{echoTool{"search"}, echoTool{"clock"}},
		Model: middleware.Chain(m, middleware.FunctionInvocation(middleware.ToolLoop{})),
		Store: store,
	}
	st := a.RunStream(context.Background(), user("find go"), withSession("s"))
	var calls, results []string
	for _, u := range collect(t, st) {
		switch u.Kind {
		case agent.UpdateToolCall:
			calls = append(calls, u.ToolCall.ID+" "+string(u.ToolCall.Input))
		case agent.UpdateToolResult:
			results = append(results, u.ToolResult.ToolCallID+" "+u.ToolResult.Text())
		}
	}
	if !reflect.DeepEqual(calls, []string{`call_1 {"q":"go"}`, "call_2 {}"}) {
		t.Errorf("tool call updates %q: want each call once, whole", calls)
	}
	if !reflect.DeepEqual(results, []string{"call_1 search result", "call_2 clock result"}) {
		t.Errorf("tool result updates %q", results)
	}
	resp, err := st.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:find go", "assistant:Checking.[calls search,clock]", "tool_result:search result", "tool_result:clock result", "assistant:Found it."}
	if got := texts(store.session(t, "s").Messages); !reflect.DeepEqual(got, want) {
		t.Errorf("stored\n got %q\nwant %q", got, want)
	}
	if resp.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 5}) {
		t.Errorf("usage %+v, want the sum over both model calls", resp.Usage)
	}
}
