package mcpserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteIn struct {
	Text string `json:"text"`
}

// newAgent is an agent whose scripted model, for each prompt, calls the
// "note" tool (which needs approval) and then answers with how many user
// messages its request held (the conversation so far).
func newAgent(t *testing.T, turns int) (host.Agent, *[]string) {
	t.Helper()
	var mu sync.Mutex
	noted := &[]string{}
	note, err := tool.Func("note", "Writes a note", func(_ context.Context, in noteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		*noted = append(*noted, in.Text)
		return "noted", nil
	}, tool.WithApproval())
	if err != nil {
		t.Fatal(err)
	}
	var steps []llmtest.Step
	for range turns {
		steps = append(steps,
			llmtest.Reply(llm.ToolUse{ID: "n1", Name: "note", Input: json.RawMessage(`{"text":"hello"}`)}),
			llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				users := 0
				for _, m := range req.Messages {
					if m.Role == llm.RoleUser {
						users++
					}
				}
				return &llm.Response{Message: llm.AssistantText("prompts so far: " + string(rune('0'+users))), FinishReason: llm.FinishStop}, nil
			}))
	}
	store := memstore.New()
	a, err := agent.New(llmtest.New(steps...), agent.Config{Name: "helper", Tools: []tool.Tool{note}, Store: store, Approver: mcpserve.Approver{}})
	if err != nil {
		t.Fatal(err)
	}
	return host.Agent{Name: "helper", Description: "Helps", Agent: a, Store: store}, noted
}

func connect(t *testing.T, h host.Agent, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpserve.Serve(ctx, st, mcpserve.Options{}, h) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestAnAgentIsAToolThatRunsATurn(t *testing.T) {
	h, noted := newAgent(t, 2)
	var mu sync.Mutex
	var progress []string
	cs := connect(t, h, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if !strings.Contains(req.Params.Message, "helper wants to call note") {
				t.Errorf("elicitation: %q", req.Params.Message)
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	})
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "helper" || !strings.Contains(tools.Tools[0].Description, "Helps") {
		t.Fatalf("tools: %+v, %v", tools, err)
	}
	for i, want := range []string{"prompts so far: 1", "prompts so far: 2"} {
		params := &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"prompt": "take a note"}}
		params.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError || text(res) != want {
			t.Fatalf("call %d: %q (error %v), %v; want %q (one session per MCP session)", i, text(res), res != nil && res.IsError, err, want)
		}
	}
	if len(*noted) != 2 {
		t.Errorf("the approved tool ran %d times, want 2", len(*noted))
	}
	// Notifications may trail the answer.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		got := strings.Join(progress, "|")
		mu.Unlock()
		if n >= 6 {
			if !strings.Contains(got, "helper: calling note") || !strings.Contains(got, "helper: note answered") || !strings.Contains(got, "helper: done") {
				t.Errorf("progress: %s", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress notifications: %s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestApprovalIsRefusedWhenTheClientCannotAsk(t *testing.T) {
	h, noted := newAgent(t, 1)
	cs := connect(t, h, nil) // no elicitation
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"prompt": "take a note"}})
	if err != nil || res.IsError {
		t.Fatalf("%v, %v", res, err)
	}
	if len(*noted) != 0 {
		t.Error("the tool ran without approval")
	}
}

func TestOverHTTPEachPrincipalHasItsOwnSession(t *testing.T) {
	h, _ := newAgent(t, 3)
	set, err := host.NewSet(h)
	if err != nil {
		t.Fatal(err)
	}
	approveAll := &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}}
	ts := httptest.NewServer(mcpserve.Handler(mcpserve.NewServer(set, mcpserve.Options{}), map[string]string{"alice": "a-secret", "bob": "b-secret"}))
	defer ts.Close()
	client := func(secret string) *http.Client {
		return &http.Client{Transport: bearer{secret}}
	}
	ctx := context.Background()
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: client("wrong")}, nil); err == nil {
		t.Error("a wrong token connected")
	}
	var stores []string
	for _, who := range []string{"a-secret", "b-secret", "a-secret"} {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, approveAll).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: client(who)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"prompt": "hi"}})
		cs.Close()
		if err != nil || res.IsError || text(res) != "prompts so far: 1" {
			t.Fatalf("%s: %q, %v (a new MCP session starts a new conversation)", who, text(res), err)
		}
		stores = append(stores, who)
	}
	_ = stores
	for owner, want := range map[string]int{"alice": 2, "bob": 1} {
		page, err := h.Store.List(ctx, session.ListOptions{Owner: owner})
		if err != nil || len(page.Sessions) != want {
			t.Errorf("%s owns %d sessions (%v), want %d: one per MCP session, never another principal's", owner, len(page.Sessions), err, want)
		}
	}
}

type bearer struct{ secret string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// Options.Tools are offered as they are; one that needs approval is asked
// of the client's user first, and refused when the client cannot ask.
func TestOfferedToolsAskApproval(t *testing.T) {
	var mu sync.Mutex
	var written []string
	write, err := tool.Func("write_note", "Writes a note", func(_ context.Context, in noteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		written = append(written, in.Text)
		return "written", nil
	}, tool.WithApproval())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newAgent(t, 0)
	set, _ := host.NewSet(h)
	tests := []struct {
		name   string
		opts   *sdk.ClientOptions
		answer bool
		want   string
		ran    int
	}{
		{"the user allows it", &sdk.ClientOptions{}, true, "written", 1},
		{"the user refuses", &sdk.ClientOptions{}, false, "did not allow", 0},
		{"the client cannot ask", nil, false, "cannot ask its user", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written = nil
			if tt.opts != nil {
				answer := tt.answer
				tt.opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": answer}}, nil
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, ct := sdk.NewInMemoryTransports()
			if _, err := mcpserve.NewServer(set, mcpserve.Options{Tools: []tool.Tool{write}}).Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, tt.opts).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "hi"}})
			if err != nil || !strings.Contains(text(res), tt.want) || len(written) != tt.ran {
				t.Errorf("%q (error %v), %v; ran %d times; want %q, %d", text(res), res != nil && res.IsError, err, len(written), tt.want, tt.ran)
			}
		})
	}
}
