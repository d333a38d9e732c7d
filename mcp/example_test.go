package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agcore/agcore/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

func Example() {
	ctx := context.Background()

	// A server built with the SDK and reached in memory. A real one is a
	// Command (mcp.ParseCommand("npx -y @modelcontextprotocol/server-everything"))
	// or a URL.
	srv := sdk.NewServer(&sdk.Implementation{Name: "greeter", Version: "v1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "greet", Description: "Greets someone"}, func(_ context.Context, _ *sdk.CallToolRequest, in greetArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
	})
	serverEnd, clientEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()

	c, err := mcp.Connect(ctx, mcp.Server{Name: "greeter", Transport: clientEnd})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, t := range c.Tools() {
		fmt.Println(t.Name(), "-", t.Description())
	}
	out, err := c.Tools()[0].Invoke(ctx, json.RawMessage(`{"name":"Ada"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// mcp__greeter__greet - Greets someone
	// Hello, Ada!
}

func ExampleParseCommand() {
	s, err := mcp.ParseCommand(`GITHUB_TOKEN=t0k npx -y @modelcontextprotocol/server-filesystem "/my docs"`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %q %q\n", s.Command, s.Args, s.Env)
	// Output: npx ["-y" "@modelcontextprotocol/server-filesystem" "/my docs"] ["GITHUB_TOKEN=t0k"]
}
