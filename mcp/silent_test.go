package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that stops answering is cut after its Timeout: the call is an
// error naming the server (a *SilentError), one notice says so, the tool
// loop answers the call as an error result, and the session goes on.
func TestASilentServerIsCutNamedAndTheTurnGoesOn(t *testing.T) {
	// (Over HTTP, the CLI's test: cmd/agcore TestMCPSilentServer.)
	for _, transport := range []string{"in memory"} {
		t.Run(transport, func(t *testing.T) {
			var notices noticeLog
			s := Server{Name: "slowpoke", Timeout: 100 * time.Millisecond, Notify: notices.add}
			var c *Client
			if transport == "in memory" {
				c = connectInMemory(t, s)
			} else {
				srv := newTestServer()
				ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
				t.Cleanup(ts.Close)
				s.URL = ts.URL + "/mcp"
				var err error
				if c, err = Connect(startTimeout(t), s); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
			}
			_, err := toolByName(t, c, "mcp__slowpoke__slow").Invoke(context.Background(), nil)
			var silent *SilentError
			if !errors.As(err, &silent) || silent.Server != "slowpoke" || silent.Tool != "slow" {
				t.Fatalf("err = %v; want a *SilentError naming the server and the tool", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, `MCP server "slowpoke" did not answer tools/call "slow" within 100ms`) {
				t.Errorf("message = %q", msg)
			}
			if n := notices.of(NoticeSilent); len(n) != 1 || n[0].Message != err.Error() || n[0].Server != "slowpoke" {
				t.Errorf("silent notices = %+v; want one with the error's line", n)
			}

			var reg tool.Registry
			if err := reg.Register(c.Tools()...); err != nil {
				t.Fatal(err)
			}
			msgs, err := (&tool.Invoker{}).Invoke(context.Background(), reg.Get, []llm.ToolUse{
				{ID: "c1", Name: "mcp__slowpoke__slow", Input: json.RawMessage(`{}`)},
				{ID: "c2", Name: "mcp__slowpoke__echo", Input: json.RawMessage(`{"message":"still here"}`)},
			})
			if err != nil {
				t.Fatalf("the tool loop failed the batch: %v", err)
			}
			if !msgs[0].IsError || !strings.Contains(msgs[0].Text(), "did not answer") {
				t.Errorf("the silent call's result = %+v", msgs[0])
			}
			if msgs[1].IsError || msgs[1].Text() != "echo: still here" {
				t.Errorf("the session did not go on: %+v", msgs[1])
			}
		})
	}
}

// Static headers reach the server with every request and never show in
// an error.
func TestHeadersAreSentAndHidden(t *testing.T) {
	srv := newTestServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret-token-value" {
			http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	c, err := Connect(startTimeout(t), Server{URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret-token-value"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := toolByName(t, c, "mcp__http__echo").Invoke(context.Background(), json.RawMessage(`{"message":"authorized"}`))
	c.Close()
	if err != nil || out != "echo: authorized" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	mu.Lock()
	for _, s := range seen {
		if !strings.HasSuffix(s, " Bearer s3cret-token-value") {
			t.Errorf("a request went without the header: %q", s)
		}
	}
	mu.Unlock()

	_, err = Connect(startTimeout(t), Server{URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer wrong-token-value"}})
	if err == nil || strings.Contains(err.Error(), "wrong-token-value") {
		t.Errorf("err = %v; want a failure that hides the header", err)
	}
}

// A server that changes its tools says so; the client lists them again and
// Tools (what the next model call is offered) has the new list.
func TestToolListChangesAreListedAgain(t *testing.T) {
	srv := newTestServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	changed := make(chan Notice, 4)
	c, err := Connect(startTimeout(t), Server{Name: "live", URL: ts.URL, Notify: func(n Notice) {
		if n.Kind == NoticeToolsChanged {
			changed <- n
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv.AddTool(&sdk.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "new"}}}, nil
	})
	select {
	case n := <-changed:
		if !strings.Contains(n.Message, `"live"`) {
			t.Errorf("notice = %q", n.Message)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no tools_changed notice")
	}
	out, err := toolByName(t, c, "mcp__live__fresh").Invoke(context.Background(), nil)
	if err != nil || out != "new" {
		t.Errorf("the new tool: %q, %v", out, err)
	}
}
