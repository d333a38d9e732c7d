package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// With the real tool loop in the pipeline the agent never sees a tool run:
// it gets the loop's events and persists the loop's transcript.
func TestTheToolLoopIsInvisibleToTheAgent(t *testing.T) {
	t.Parallel()
	m := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Checking."}, llmtest.Call("call_1", "search", `{"q":"go"}`), llmtest.Call("call_2", "clock", `{}`)).
			WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 3}),
		llmtest.Text("Found it.").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 2}),
	).WithChunkSize(4).Verify(t)
	store := newStore()
	a := newAgent(t, m, agent.Config{
		Name:  "a",
		Tools: []tool.Tool{echoTool{"search"}, echoTool{"clock"}},
		Store: store,
	})
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

// slowTool implements tool.Timed with its own short limit and a marker
// interface of the user's own, which hooks and approvers look for.
type slowTool struct{ limit time.Duration }

func (slowTool) Name() string                { return "slow" }
func (slowTool) Description() string         { return "Waits for its context." }
func (slowTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s slowTool) Timeout() time.Duration    { return s.limit }
func (slowTool) NeedsApproval() bool         { return true }
func (slowTool) Audited() string             { return "audit-42" } // the user's own interface
func (slowTool) Invoke(ctx context.Context, _ json.RawMessage) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(5 * time.Second):
		return "finished", nil
	}
}

type audited interface{ Audited() string }

// The agent runs the user's own tool value: its own timeout holds (20 ms,
// not the 5 s it would otherwise take), and hooks and the approver receive
// the very value, so a type assertion on the user's interface succeeds.
// Both the blocking and the streaming run.
func TestTheAgentRunsTheUsersOwnTool(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "RunStream"}[streaming], func(t *testing.T) {
			m := llmtest.New(
				llmtest.Reply(llmtest.Call("call_1", "slow", `{}`)),
				llmtest.Text("It timed out."),
			).Verify(t)
			var mu sync.Mutex
			var seen []string
			note := func(who string, tl tool.Tool) {
				mu.Lock()
				defer mu.Unlock()
				if a, ok := tl.(audited); ok {
					seen = append(seen, who+":"+a.Audited())
				} else {
					seen = append(seen, who+":not the user's tool")
				}
			}
			hooks := &middleware.Hooks{PreToolUse: []middleware.Hook[middleware.PreToolUseFunc]{{Name: "audit", Func: func(_ context.Context, c *tool.Call) error {
				note("hook", c.Tool)
				return nil
			}}}}
			approver := tool.ApproverFunc(func(_ context.Context, c tool.Call) (tool.Decision, error) {
				note("approver", c.Tool)
				return tool.Decision{Approved: true}, nil
			})
			a := newAgent(t, m, agent.Config{Tools: []tool.Tool{slowTool{limit: 20 * time.Millisecond}}, Hooks: hooks, Approver: approver})
			start := time.Now()
			var resp *agent.Response
			var err error
			if streaming {
				st := a.RunStream(context.Background(), user("go"), nil)
				for _, err := range st.Updates() {
					if err != nil {
						t.Fatal(err)
					}
				}
				resp, err = st.Wait()
			} else {
				resp, err = a.Run(context.Background(), user("go"), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the run took %v: the tool's own 20 ms timeout was not applied", d)
			}
			result := resp.Messages[1]
			if result.Role != llm.RoleTool || !strings.Contains(result.Text(), "timed out after 20ms") {
				t.Errorf("tool result %q, want the tool's own timeout", result.Text())
			}
			if want := []string{"hook:audit-42", "approver:audit-42"}; !reflect.DeepEqual(seen, want) {
				t.Errorf("seen %q, want %q", seen, want)
			}
		})
	}
}

// A declared tool is the caller's: the turn ends with its call.
func TestDeclaredToolsEndTheTurn(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Reply(llmtest.Call("c1", "ask_user", `{"q":"which?"}`))).Verify(t)
	a := newAgent(t, m, agent.Config{Tools: []tool.Tool{echoTool{"search"}}})
	resp, err := a.Run(context.Background(), user("go"), &agent.RunOptions{Declared: []llm.ToolDefinition{{Name: "ask_user"}, {Name: "search"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishToolUse || len(resp.Message.ToolUses()) != 1 {
		t.Errorf("finish %q, message %+v", resp.FinishReason, resp.Message)
	}
	var names []string
	for _, d := range m.Requests()[0].Tools {
		names = append(names, d.Name)
	}
	if want := []string{"search", "ask_user"}; !reflect.DeepEqual(names, want) {
		t.Errorf("offered %q, want %q (a declared name already taken is skipped)", names, want)
	}
}

func TestNewRejectsBadTools(t *testing.T) {
	t.Parallel()
	m := llmtest.New()
	for name, tools := range map[string][]tool.Tool{
		"duplicate": {echoTool{"a"}, echoTool{"a"}},
		"nameless":  {echoTool{""}},
		"nil":       {nil},
	} {
		if _, err := agent.New(m, agent.Config{Tools: tools}); err == nil {
			t.Errorf("%s: New accepted the tools", name)
		}
	}
	if _, err := agent.New(nil, agent.Config{}); !errors.Is(err, agent.ErrNoModel) {
		t.Errorf("New(nil) = %v, want ErrNoModel", err)
	}
}
