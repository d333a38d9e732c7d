package otelagent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/otelagent"
)

// TestMCPProgressIsAnEventOnTheToolSpan: an MCP server's progress
// notifications about a tool call are events on the call's execute_tool
// span, recorded by the in-memory exporter.
func TestMCPProgressIsAnEventOnTheToolSpan(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: "step " + string(rune('0'+i))})
		}
		time.Sleep(100 * time.Millisecond) // the notifications arrive before the answer
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.Server{Name: "slow", URL: ts.URL, HTTPClient: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	r := newRecorded(t, otelagent.Config{})
	model := llmtest.New(llmtest.Reply(llmtest.Call("c1", "mcp__slow__work", `{}`)), llmtest.Text("done"))
	a := newAgent(t, model, agent.Config{Name: "worker", Tools: c.Tools(), Telemetry: r.tel})
	if _, err := a.Run(ctx, []llm.Message{llm.UserText("work")}, nil); err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, s := range r.ended() {
		if !strings.HasPrefix(s.Name(), "execute_tool") {
			continue
		}
		for _, ev := range s.Events() {
			if ev.Name != observe.EventMCPProgress {
				continue
			}
			attrs := attribute.NewSet(ev.Attributes...)
			server, _ := attrs.Value(observe.AttrMCPServer)
			tool, _ := attrs.Value(observe.AttrMCPTool)
			progress, _ := attrs.Value(observe.AttrMCPProgress)
			total, _ := attrs.Value(observe.AttrMCPTotal)
			msg, _ := attrs.Value(observe.AttrMCPMessage)
			events = append(events, strings.Join([]string{server.AsString(), tool.AsString(), progress.Emit(), total.Emit(), msg.AsString()}, " "))
		}
	}
	want := "slow work 1 3 step 1|slow work 2 3 step 2|slow work 3 3 step 3"
	if strings.Join(events, "|") != want {
		t.Errorf("execute_tool events %q, want %q", events, want)
	}
}
