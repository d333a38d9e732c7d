package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// TestMain runs the package's tests, or, when the test binary is started as
// a child with serverModeEnv set, an MCP server over stdio (see
// stdio_test.go).
func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		os.Exit(runChildServer(mode))
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type sumIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// newTestServer is an MCP server whose tools cover the kinds of result.
func newTestServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes the message"}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Message}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "sum", Title: "Sum of two integers"}, func(_ context.Context, _ *sdk.CallToolRequest, in sumIn) (*sdk.CallToolResult, sumOut, error) {
		return nil, sumOut{Sum: in.A + in.B}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, errors.New("the disk is full")
	})
	s.AddTool(&sdk.Tool{Name: "media", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "here:"},
			&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 68)},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
			&sdk.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Description: "a file"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "note text"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://blob", MIMEType: "application/zip", Blob: make([]byte, 5)}},
		}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "too late"}}}, nil
		}
	})
	s.AddTool(&sdk.Tool{Name: "read.file/v2", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "dotted"}}}, nil
	})
	return s
}

// connectInMemory connects a Client to newTestServer over an in-memory
// transport and closes both at the end of the test.
func connectInMemory(t *testing.T, s Server) *Client {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := newTestServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Transport = ct
	c, err := Connect(ctx, s)
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ss.Wait()
	})
	return c
}

func toolByName(t *testing.T, c *Client, name string) tool.Tool {
	t.Helper()
	for _, x := range c.Tools() {
		if x.Name() == name {
			return x
		}
	}
	t.Fatalf("no tool %q among %v", name, names(c.Tools()))
	return nil
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, x := range ts {
		out = append(out, x.Name())
	}
	return out
}

func TestServerToolsAreOfferedUnderPrefixedNames(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	got := strings.Join(names(c.Tools()), " ")
	want := "mcp__test__echo mcp__test__fail mcp__test__media mcp__test__read_file_v2 mcp__test__slow mcp__test__sum"
	if got != want {
		t.Errorf("tools: %s\nwant:  %s", got, want)
	}
	echo := toolByName(t, c, "mcp__test__echo")
	if echo.Description() != "Echoes the message" {
		t.Errorf("description %q", echo.Description())
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(echo.Parameters(), &schema); err != nil || schema.Type != "object" || schema.Properties["message"] == nil || len(schema.Required) != 1 {
		t.Errorf("schema %s: %v", echo.Parameters(), err)
	}
	if d := toolByName(t, c, "mcp__test__sum").Description(); d != "Sum of two integers" {
		t.Errorf("a tool without a description is described by its title; got %q", d)
	}
}

func TestInvokeTurnsResultsIntoText(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	tests := []struct {
		rule    string
		tool    string
		args    string
		want    string
		wantErr string
	}{
		{"text content is the text", "echo", `{"message":"hi"}`, "echo: hi", ""},
		{"structured content alone is shown as JSON", "sum", `{"a":2,"b":3}`, `{"sum":5}`, ""},
		{"media and resources are described, one item a line", "media", `{}`,
			"here:\n[image: image/png, 68 bytes]\n[audio: audio/wav, 10 bytes]\n[resource link: a.txt <file:///a.txt>, text/plain: a file]\n[resource <mem://note>, text/plain]\nnote text\n[resource <mem://blob>: application/zip, 5 bytes]", ""},
		{"empty arguments are an empty object", "media", ``, "here:", ""},
		{"a sanitized name calls the server's own name", "read_file_v2", `{}`, "dotted", ""},
		{"an isError result is an error with its text", "fail", `{}`, "", "the disk is full"},
		{"arguments the server rejects are an error", "echo", `{"message":5}`, "", "message"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			out, err := toolByName(t, c, "mcp__test__"+tt.tool).Invoke(context.Background(), json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(out, tt.want) {
				t.Errorf("got %q, %v\nwant %q", out, err, tt.want)
			}
		})
	}
}

func TestAnIsErrorResultIsAToolError(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	_, err := toolByName(t, c, "mcp__test__fail").Invoke(context.Background(), nil)
	var te *ToolError
	if !errors.As(err, &te) || te.Server != "test" || te.Tool != "fail" || te.Error() != "the disk is full" {
		t.Fatalf("err = %#v", err)
	}
	if tool.IsFatal(err) {
		t.Error("a tool's failure must not stop the turn")
	}
}

func TestTheToolLoopShowsAnIsErrorResultAsAnErrorResult(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	var reg tool.Registry
	if err := reg.Register(c.Tools()...); err != nil {
		t.Fatal(err)
	}
	msgs, err := (&tool.Invoker{}).Invoke(context.Background(), reg.Get, []llm.ToolUse{
		{ID: "1", Name: "mcp__test__echo", Input: json.RawMessage(`{"message":"a"}`)},
		{ID: "2", Name: "mcp__test__fail", Input: json.RawMessage(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].IsError || msgs[0].Text() != "echo: a" || !msgs[1].IsError || msgs[1].Text() != "the disk is full" {
		t.Errorf("results: %+v", msgs)
	}
}

func TestCancellingACallStopsItPromptly(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := toolByName(t, c, "mcp__test__slow").Invoke(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want one matching context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call returned %v after its deadline", d)
	}
}

func TestNeedsApprovalMarksEveryToolOfTheServer(t *testing.T) {
	for _, approval := range []bool{false, true} {
		t.Run(fmt.Sprint(approval), func(t *testing.T) {
			c := connectInMemory(t, Server{Name: "test", NeedsApproval: approval})
			for _, x := range c.Tools() {
				if tool.NeedsApproval(x) != approval {
					t.Errorf("%s: NeedsApproval = %v", x.Name(), !approval)
				}
			}
		})
	}
}

func TestCallsAfterCloseFail(t *testing.T) {
	c := connectInMemory(t, Server{Name: "test"})
	echo := toolByName(t, c, "mcp__test__echo")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := echo.Invoke(context.Background(), json.RawMessage(`{"message":"x"}`)); err == nil || !strings.Contains(err.Error(), `server "test"`) {
		t.Errorf("err = %v; want an error naming the server", err)
	}
}

func TestAServerWithoutToolsOffersNone(t *testing.T) {
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := sdk.NewServer(&sdk.Implementation{Name: "empty", Version: "v1"}, nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Wait()
	c, err := Connect(ctx, Server{Name: "empty", Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Tools()) != 0 {
		t.Errorf("tools: %v", names(c.Tools()))
	}
}

func TestABadServerDescriptionIsAConnectError(t *testing.T) {
	tests := []struct {
		rule string
		s    Server
		want string
	}{
		{"nothing to connect to", Server{Name: "x"}, "no Command, URL or Transport"},
		{"two ways to connect", Server{Name: "x", Command: "a", URL: "http://b"}, "more than one"},
		{"a URL that is not HTTP", Server{Name: "x", URL: "ftp://host/mcp"}, "not http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			_, err := Connect(context.Background(), tt.s)
			var ce *ConnectError
			if !errors.As(err, &ce) || ce.Server != "x" || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want a ConnectError for server x containing %q", err, tt.want)
			}
		})
	}
}
