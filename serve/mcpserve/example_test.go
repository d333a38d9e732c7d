package mcpserve_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/mcpserve"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Go program offers its agent to MCP clients in one call. Here the
// client is in the same process (an in-memory transport); a program
// started by Claude Desktop or VS Code passes &sdk.StdioTransport{}.
func ExampleServe() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := agent.New(llmtest.New(llmtest.Text("Paris.")), agent.Config{Name: "geo"})
	if err != nil {
		log.Fatal(err)
	}
	serverSide, clientSide := sdk.NewInMemoryTransports()
	go mcpserve.Serve(ctx, serverSide, mcpserve.Options{}, host.Agent{Name: "geo", Description: "Answers geography questions", Agent: a})

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "geo", Arguments: map[string]any{"prompt": "The capital of France?"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output: Paris.
}
