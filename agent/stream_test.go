package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
)

// eventModel streams a fixed list of events, then err if set.
type eventModel struct {
	events []llm.Event
	err    error
}

func (m *eventModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *eventModel) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range m.events {
			if !yield(ev, nil) {
				return
			}
		}
		if m.err != nil {
			yield(llm.Event{}, m.err)
		}
	}
}

func (m *eventModel) Info() llm.ModelInfo { return llm.ModelInfo{Name: "events"} }

func call(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

// toolLoopEvents is what a tool loop streams for one search call: the
// first model call asks for the tool, the result comes back, the second
// model call answers. withTranscript sets the final Response.Transcript.
func toolLoopEvents(withTranscript bool) []llm.Event {
	asst1 := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "hm"}, llm.Text{Text: "Hello"}, call("c1", "search", `{"q":"x"}`)}}
	result := llm.ToolResultText("c1", "found", false)
	asst2 := llm.AssistantText("Done.")
	final := &llm.Response{Model: "m", Message: asst2, FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 30, OutputTokens: 7}}
	if withTranscript {
		final.Transcript = []llm.Message{asst1, result, asst2}
	}
	return []llm.Event{
		{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r1"}},
		{Type: llm.EventBlockStart, Index: 0, Block: llm.Thinking{}},
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "hm"},
		{Type: llm.EventBlockStop, Index: 0, Block: llm.Thinking{Text: "hm"}},
		{Type: llm.EventBlockStart, Index: 1, Block: llm.Text{}},
		{Type: llm.EventTextDelta, Index: 1, Delta: "Hel"},
		{Type: llm.EventTextDelta, Index: 1, Delta: "lo"},
		{Type: llm.EventBlockStop, Index: 1, Block: llm.Text{Text: "Hello"}},
		{Type: llm.EventBlockStart, Index: 2, Block: llm.ToolUse{ID: "c1", Name: "search"}},
		{Type: llm.EventToolInputDelta, Index: 2, Delta: `{"q":`},
		{Type: llm.EventToolInputDelta, Index: 2, Delta: `"x"}`},
		{Type: llm.EventBlockStop, Index: 2, Block: call("c1", "search", `{"q":"x"}`)},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}},
		{Type: llm.EventStepComplete, Response: &llm.Response{Message: asst1, FinishReason: llm.FinishToolUse}},
		{Type: llm.EventToolResult, Message: &result},
		{Type: llm.EventBlockStart, Index: 0, Block: llm.Text{}},
		{Type: llm.EventTextDelta, Index: 0, Delta: "Done."},
		{Type: llm.EventBlockStop, Index: 0, Block: llm.Text{Text: "Done."}},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 2}},
		{Type: llm.EventStepComplete, Response: &llm.Response{Message: asst2, FinishReason: llm.FinishStop}},
		{Type: llm.EventComplete, Response: final},
	}
}

func collect(t *testing.T, st *agent.Stream) []agent.Update {
	t.Helper()
	var ups []agent.Update
	for u, err := range st.Updates() {
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
	}
	return ups
}

func describe(u agent.Update) string {
	switch u.Kind {
	case agent.UpdateText, agent.UpdateThinking:
		return u.Kind.String() + ":" + u.Text
	case agent.UpdateToolCall:
		return "tool_call:" + u.ToolCall.ID + ":" + u.ToolCall.Name + ":" + string(u.ToolCall.Input)
	case agent.UpdateToolResult:
		return "tool_result:" + u.ToolResult.ToolCallID + ":" + u.ToolResult.Text()
	case agent.UpdateUsage:
		return "usage:" + strings.Repeat("i", u.Usage.InputTokens/10)
	case agent.UpdateFinish:
		return "finish:" + string(u.FinishReason)
	}
	return "?"
}

func TestResponseConversion(t *testing.T) {
	t.Parallel()
	a := newAgent(t, &eventModel{events: toolLoopEvents(true)}, agent.Config{Name: "helper", NewID: ids()})
	ups := collect(t, a.RunStream(context.Background(), user("hi"), nil))
	var got []string
	for _, u := range ups {
		got = append(got, describe(u))
		if u.Agent != "helper" || u.RunID != "run-1" {
			t.Errorf("%s carries agent %q run %q, want helper run-1", describe(u), u.Agent, u.RunID)
		}
	}
	want := []string{
		"thinking:hm", "text:Hel", "text:lo",
		`tool_call:c1:search:{"q":"x"}`, // once, whole, when its arguments are complete
		"usage:i", "tool_result:c1:found", "text:Done.", "usage:ii", "finish:stop",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("updates\n got %q\nwant %q", got, want)
	}
	fin := ups[len(ups)-1]
	if fin.Usage == nil || *fin.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 7}) || fin.Response.Text() != "Done." {
		t.Errorf("finish = %+v: want the turn's total usage and the response", fin)
	}
}

func TestAToolCallWithoutAStopIsFlushedWholeAtTheEnd(t *testing.T) {
	t.Parallel()
	events := []llm.Event{
		{Type: llm.EventBlockStart, Index: 0, Block: llm.ToolUse{ID: "c9", Name: "calc"}},
		{Type: llm.EventToolInputDelta, Index: 0, Delta: `{"a":`},
		{Type: llm.EventToolInputDelta, Index: 0, Delta: `1}`},
		{Type: llm.EventComplete, Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call("c9", "calc", `{"a":1}`)}}, FinishReason: llm.FinishToolUse}},
	}
	a := newAgent(t, &eventModel{events: events}, agent.Config{})
	var got []string
	declared := &agent.RunOptions{Declared: []llm.ToolDefinition{{Name: "calc"}}}
	for _, u := range collect(t, a.RunStream(context.Background(), user("hi"), declared)) {
		got = append(got, describe(u))
	}
	if want := []string{`tool_call:c9:calc:{"a":1}`, "finish:tool_use"}; !reflect.DeepEqual(got, want) {
		t.Errorf("updates %q, want %q", got, want)
	}
}

// gatedModel streams one text delta, then waits for release before it
// completes.
type gatedModel struct{ release chan struct{} }

func (m *gatedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *gatedModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if !yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) ||
			!yield(llm.Event{Type: llm.EventTextDelta, Delta: "first"}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Event{}, llm.Cancelled("gated", ctx.Err()))
			return
		}
		yield(llm.Event{Type: llm.EventComplete, Response: &llm.Response{Message: llm.AssistantText("first")}}, nil)
	}
}

func (m *gatedModel) Info() llm.ModelInfo { return llm.ModelInfo{} }

func TestTheCallerGetsEachUpdateAsItArrives(t *testing.T) {
	t.Parallel()
	m := &gatedModel{release: make(chan struct{})}
	a := newAgent(t, m, agent.Config{})
	timer := time.AfterFunc(5*time.Second, func() { close(m.release) }) // unblocks a buffering agent, late
	defer timer.Stop()
	start := time.Now()
	for u, err := range a.RunStream(context.Background(), user("hi"), nil).Updates() {
		if err != nil {
			t.Fatal(err)
		}
		if u.Kind == agent.UpdateText {
			if time.Since(start) > 2*time.Second {
				t.Fatal("the first delta arrived only after the model finished")
			}
			if timer.Stop() {
				close(m.release)
			}
		}
	}
}

func TestWaitRunsAStreamNobodyRanged(t *testing.T) {
	t.Parallel()
	a := newAgent(t, llmtest.New(llmtest.Text("ok")).Verify(t), agent.Config{})
	st := a.RunStream(context.Background(), user("hi"), nil)
	resp, err := st.Wait()
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("Wait = %v, %v", resp, err)
	}
	for _, err := range st.Updates() {
		if !errors.Is(err, agent.ErrStreamUsed) {
			t.Errorf("second range err = %v, want ErrStreamUsed", err)
		}
	}
}
