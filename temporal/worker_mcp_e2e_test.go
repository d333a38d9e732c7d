package agtemporal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteIn struct {
	Topic string `json:"topic" jsonschema:"what the note is about"`
}

// TestE2EWorkerTakesMCPTools: `agcore worker --mcp-url URL` offers the
// MCP server's tools, named as agcore run names them, and runs their
// calls in the turn.
func TestE2EWorkerTakesMCPTools(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "v1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "get_note", Description: "Returns the note on a topic"}, func(_ context.Context, _ *sdk.CallToolRequest, in noteIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "note on " + in.Topic + ": buy milk"}}}, nil, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	const name = "mcp__http__get_note" // a server at an IP address is named "http" (package mcp)
	w, _ := newWorld(t,
		sseReply("", fakeCall{"n1", name, `{"topic":"shopping"}`}),
		sseReply("You need milk."))
	worker := agcoreWorker(t, w, "--tools", "none", "--mcp-url", mcpSrv.URL)
	run := startAgcore(t, "run", "--temporal", w.addr, "--session", uniqueSession("mcp"), "what do I need?")
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	first, second := w.fake.bodies[0], w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(first, `"name":"`+name+`"`) {
		t.Fatalf("the worker did not offer %s: %s", name, first)
	}
	if !strings.Contains(second, "note on shopping: buy milk") {
		t.Fatalf("the MCP tool's result did not reach the model: %s", second)
	}
	if !strings.Contains(run.out.String(), "You need milk.") {
		t.Fatalf("stdout %q", run.out)
	}
	worker.stop(t, syscall.SIGTERM) // its MCP sessions end with it
}
