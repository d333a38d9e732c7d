package main_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/testkit/testenv"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverDirEnv names the directory .ci/mcp-setup.sh installs the npm MCP
// server into (as in the mcp package's tests): when it is set, a missing
// server fails the test; when not, the default place is tried and the test
// skips if nothing is there.
const serverDirEnv = "AGCORE_MCP_SERVER_DIR"

// everything returns the --mcp command line that starts
// @modelcontextprotocol/server-everything over stdio, or skips.
func everything(t *testing.T) string {
	t.Helper()
	dir, required := os.LookupEnv(serverDirEnv)
	if !required {
		dir = filepath.Join("..", "..", ".ci", "mcp-server")
	}
	entry, _ := filepath.Abs(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(entry)
	}
	if err != nil {
		msg := fmt.Sprintf("the npm MCP server is not available (%v); run `eval \"$(.ci/mcp-setup.sh)\"` to install it", err)
		if required {
			t.Fatalf("%s is set but %s", serverDirEnv, msg)
		}
		testenv.Missing(t, "%s", msg)
	}
	return fmt.Sprintf("'%s' '%s' stdio", node, entry)
}

func TestMCPToolThroughAFullTurn(t *testing.T) {
	t.Parallel()
	line := everything(t)
	const echo = "mcp__everything__echo"
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"m1", echo, `{"message":"hello from agcore"}`}}}),
		openaiReply(turn{text: "The server echoed it."}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.ok("run", "--json", "--mcp", line, "--session", "m", "Echo something")

	tools, _ := srv.got()[0].body["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	offered := false
	for _, n := range names {
		offered = offered || n == echo
	}
	if !offered || names[0] != "read_file" {
		t.Errorf("tools offered = %v, want the built-ins first and %s among the MCP tools", names, echo)
	}
	res := ofType(events(t, r.stdout), "tool_result")
	if len(res) != 1 || res[0]["name"] != echo || res[0]["is_error"] != false || !strings.Contains(res[0]["output"].(string), "Echo: hello from agcore") {
		t.Errorf("tool results = %v", res)
	}
	if !strings.Contains(srv.messages(1), "Echo: hello from agcore") {
		t.Error("the MCP tool's result was not sent back to the model")
	}
}

func TestMCPServerThatFailsIsNamed(t *testing.T) {
	t.Parallel()
	c := newCLI(t).openai(newFake(t), "sk-test")
	r := c.run("", "run", "--mcp", "agcore-no-such-server --flag", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "agcore-no-such-server") {
		t.Errorf("exit %d, stderr %q: want a failure naming the server", r.code, r.stderr)
	}
}

type noteIn struct {
	Topic string `json:"topic" jsonschema:"what the note is about"`
}

func TestMCPOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	server := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "v1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "get_note", Description: "Returns the note on a topic"}, func(_ context.Context, _ *sdk.CallToolRequest, in noteIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "note on " + in.Topic + ": buy milk"}}}, nil, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)

	// A server at an IP address is named "http" (see package mcp).
	const tool = "mcp__http__get_note"
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"n1", tool, `{"topic":"shopping"}`}}}),
		openaiReply(turn{text: "Buy milk."}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.ok("run", "--json", "--tools", "", "--mcp-url", mcpSrv.URL+"/mcp", "What's on my list?")

	tools, _ := srv.got()[0].body["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["function"].(map[string]any)["name"] != tool {
		t.Errorf("tools offered = %v, want only %s (--tools \"\" offers no built-in)", tools, tool)
	}
	res := ofType(events(t, r.stdout), "tool_result")
	if len(res) != 1 || res[0]["output"] != "note on shopping: buy milk" || res[0]["is_error"] != false {
		t.Errorf("tool results = %v", res)
	}
}
