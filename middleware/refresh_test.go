package middleware

import (
	"context"
	"slices"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

type refreshIn struct{}

func namedTool(name, desc string) tool.Tool {
	return tool.MustFunc(name, desc, func(context.Context, refreshIn) (string, error) { return name + " ran", nil })
}

// TestRefreshChangesTheToolsWithinATurn: ToolLoop.Refresh is asked before
// each model call after the first; its tools replace the loop's, and the
// request's definitions follow (gone, changed, new), the caller's own
// definitions kept.
func TestRefreshChangesTheToolsWithinATurn(t *testing.T) {
	old, gone := namedTool("keep", "old description"), namedTool("gone", "removed later")
	now := []tool.Tool{namedTool("keep", "new description"), namedTool("added", "appears mid-turn")}
	asked := 0
	refresh := func() []tool.Tool {
		asked++
		if asked == 1 {
			return nil // no change before the second call
		}
		return now
	}
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "gone", `{}`)),
		llmtest.Reply(llmtest.Call("c2", "keep", `{}`)),
		llmtest.Reply(llmtest.Call("c3", "added", `{}`), llmtest.Call("c4", "gone", `{}`)),
		llmtest.Text("done"),
	).Verify(t)
	loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{old, gone}, Refresh: refresh})(model)
	caller := llm.ToolDefinition{Name: "client_side", Description: "the caller's"}
	resp, err := loop.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Tools: []llm.ToolDefinition{caller}})
	if err != nil {
		t.Fatal(err)
	}
	if asked != 3 {
		t.Errorf("Refresh asked %d times, want 3 (before each call after the first)", asked)
	}
	defs := func(i int) []string {
		var out []string
		for _, d := range model.Requests()[i].Tools {
			out = append(out, d.Name+": "+d.Description)
		}
		return out
	}
	before := []string{"client_side: the caller's", "keep: old description", "gone: removed later"}
	after := []string{"client_side: the caller's", "keep: new description", "added: appears mid-turn"}
	for i, want := range [][]string{before, before, after, after} {
		if got := defs(i); !slices.Equal(got, want) {
			t.Errorf("call %d offered %q, want %q", i+1, got, want)
		}
	}
	var results []string
	for _, m := range resp.Transcript {
		if m.Role == llm.RoleTool {
			results = append(results, m.Text())
		}
	}
	want := []string{"gone ran", "keep ran", "added ran", `tool "gone" not found`}
	if !slices.Equal(results, want) {
		t.Errorf("results %q, want %q", results, want)
	}
}
