package mcpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocols are the two ways a turn's question reaches the client: as
// elicitation/create or sampling/createMessage during the call (2025-11-25
// clients), and as input requests in the call's result, answered by the
// client's retry (multi round-trip, 2026-07-28).
var protocols = []string{"2025-11-25", "2026-07-28"}

// askingAgent asks the user twice with ask_user, then answers with what
// the two results said.
func askingAgent(t *testing.T) host.Agent {
	t.Helper()
	ask := func(id, msg string) llmtest.Step {
		return llmtest.Reply(llm.ToolUse{ID: id, Name: mcpserve.AskUserName, Input: json.RawMessage(`{"message":"` + msg + `","schema":{"type":"object","properties":{"city":{"type":"string","default":"Oslo"}}}}`)})
	}
	answer := llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		var results []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.Text())
			}
		}
		return &llm.Response{Message: llm.AssistantText(strings.Join(results, " | ")), FinishReason: llm.FinishStop}, nil
	})
	a, err := agent.New(llmtest.New(ask("a1", "Where do you live?"), ask("a2", "Where were you born?"), answer), agent.Config{Name: "asker", Tools: []tool.Tool{mcpserve.AskUser()}})
	if err != nil {
		t.Fatal(err)
	}
	return host.Agent{Name: "asker", Agent: a}
}

func TestAnAgentAsksTheUserThroughElicitation(t *testing.T) {
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			cs := serveVersion(t, version, mcpserve.Options{}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					if len(asked) == 1 {
						return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"city": "Bergen"}}, nil
					}
					return &sdk.ElicitResult{Action: "decline"}, nil
				},
			}, askingAgent(t))
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "asker", Arguments: map[string]any{"prompt": "plan my trip"}})
			if err != nil {
				t.Fatal(err)
			}
			want := `User response: action=accept, content={"city":"Bergen"} | User response: action=decline, content={}`
			if res.IsError || text(res) != want {
				t.Errorf("answer %q (error %v), want %q", text(res), res.IsError, want)
			}
			if len(asked) != 2 || asked[0] != "Where do you live?" || asked[1] != "Where were you born?" {
				t.Errorf("asked %q", asked)
			}
		})
	}
}

func TestAskUserIsRefusedWhenNobodyCanAnswer(t *testing.T) {
	// A client without elicitation: the tool's error is what the model
	// reads, and the turn goes on.
	cs := serveWith(t, mcpserve.Options{}, nil, askingAgent(t))
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "asker", Arguments: map[string]any{"prompt": "plan my trip"}})
	if err != nil || res.IsError || strings.Count(text(res), "no elicitation") != 2 {
		t.Errorf("answer %q, %v; want both questions refused for want of elicitation", text(res), err)
	}
	// Out of an MCP call.
	_, err = mcpserve.AskUser().Invoke(context.Background(), json.RawMessage(`{"message":"hi"}`))
	if !errors.Is(err, mcpserve.ErrNoClient) {
		t.Errorf("Invoke out of a call: %v, want ErrNoClient", err)
	}
}

func TestAnAgentThinksWithTheClientsModel(t *testing.T) {
	a, err := agent.New(mcpserve.ClientModel{}, agent.Config{Name: "thinker", Instructions: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			var got *sdk.CreateMessageParams
			cs := serveVersion(t, version, mcpserve.Options{}, &sdk.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
					got = req.Params
					return &sdk.CreateMessageResult{Role: "assistant", Model: "client-model", Content: &sdk.TextContent{Text: "Forty-two."}}, nil
				},
			}, host.Agent{Name: "thinker", Agent: a})
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "thinker", Arguments: map[string]any{"prompt": "What is the answer?"}})
			if err != nil || res.IsError || text(res) != "Forty-two." {
				t.Fatalf("answer %q, %v", text(res), err)
			}
			if got == nil || got.SystemPrompt != "Be brief." || got.MaxTokens != 1024 || len(got.Messages) != 1 || got.Messages[0].Role != "user" {
				t.Fatalf("sampling request %+v", got)
			}
			if tc, ok := got.Messages[0].Content.(*sdk.TextContent); !ok || tc.Text != "What is the answer?" {
				t.Errorf("sampled message %#v", got.Messages[0].Content)
			}
		})
	}
	// A client without sampling: the turn fails with one clear line.
	cs := serveWith(t, mcpserve.Options{}, nil, host.Agent{Name: "thinker", Agent: a})
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "thinker", Arguments: map[string]any{"prompt": "What is the answer?"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "no sampling capability") {
		t.Errorf("answer %q, %v; want the turn refused for want of sampling", text(res), err)
	}
}

func TestATurnLogsItsProgress(t *testing.T) {
	h, _ := newAgent(t, 1)
	var mu sync.Mutex
	var logs []string
	cs := serveVersion(t, "2025-11-25", mcpserve.Options{}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, string(req.Params.Level)+" "+req.Params.Data.(string))
		},
	}, h)
	ctx := context.Background()
	// No level set: no log messages.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"prompt": "note"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(logs)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("log messages before a level was set: %q", logs)
	}
	h2, _ := newAgent(t, 1)
	cs = serveVersion(t, "2025-11-25", mcpserve.Options{}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, string(req.Params.Level)+" "+req.Params.Logger+": "+req.Params.Data.(string))
		},
	}, h2)
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"prompt": "note"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"info agcore: helper: started", "info agcore: helper: calling note", "info agcore: helper: note answered", "info agcore: helper: done"}
	// Notifications are handled apart from the call's result: the last
	// may come just after it.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(logs)
		mu.Unlock()
		if n >= len(want) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(logs, "\n") != strings.Join(want, "\n") {
		t.Errorf("log messages:\n%s\nwant:\n%s", strings.Join(logs, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnMCPServersQuestionReachesTheClient: what an MCP server the agent
// uses asks during a call (Approver.Elicit, which agcore mcp serve gives
// those servers) is asked of the MCP client's user as it is; a client
// that cannot ask declines it.
func TestAnMCPServersQuestionReachesTheClient(t *testing.T) {
	relay := tool.MustFunc("remote", "a tool of an MCP server that asks the user", func(ctx context.Context, _ struct{}) (string, error) {
		res, err := mcpserve.Approver{}.Elicit(ctx, &sdk.ElicitParams{Message: "Which branch?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(res.Content)
		return res.Action + " " + string(b), nil
	})
	newRelay := func() host.Agent {
		a, err := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("r1", "remote", `{}`)), llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			return &llm.Response{Message: llm.AssistantText(req.Messages[len(req.Messages)-1].Text()), FinishReason: llm.FinishStop}, nil
		})), agent.Config{Name: "relay", Tools: []tool.Tool{relay}})
		if err != nil {
			t.Fatal(err)
		}
		return host.Agent{Name: "relay", Agent: a}
	}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			cs := serveVersion(t, version, mcpserve.Options{}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					if req.Params.Message != "Which branch?" {
						t.Errorf("asked %q", req.Params.Message)
					}
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"branch": "main"}}, nil
				},
			}, newRelay())
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "relay", Arguments: map[string]any{"prompt": "deploy"}})
			if err != nil || text(res) != `accept {"branch":"main"}` {
				t.Errorf("answer %q, %v", text(res), err)
			}
		})
	}
	cs := serveWith(t, mcpserve.Options{}, nil, newRelay())
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "relay", Arguments: map[string]any{"prompt": "deploy"}})
	if err != nil || text(res) != "decline null" {
		t.Errorf("without elicitation: %q, %v; want it declined", text(res), err)
	}
}
