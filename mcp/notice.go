package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agcore/agcore/observe"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NoticeKind says what a [Notice] reports.
type NoticeKind string

// The kinds of notices.
const (
	// NoticeProgress: a running call's progress (notifications/progress).
	NoticeProgress NoticeKind = "progress"
	// NoticeLog: a log message of the server (notifications/message).
	NoticeLog NoticeKind = "log"
	// NoticeToolsChanged: the server's tool list changed and was listed
	// again (notifications/tools/list_changed); Client.Tools has the new
	// list.
	NoticeToolsChanged NoticeKind = "tools_changed"
	// NoticeSilent: the server left a request unanswered for its Timeout;
	// the request was cancelled and answered as an error.
	NoticeSilent NoticeKind = "silent"
	// NoticeElicitation: the server asked the user for input and nobody
	// could answer, so the request was declined.
	NoticeElicitation NoticeKind = "elicitation"
)

// Notice is something a server said besides its answers, or a request it
// left unanswered. Message is one line for people, naming the server.
type Notice struct {
	Kind    NoticeKind
	Server  string // the server's short name
	Tool    string // the server's name for the tool whose call it concerns, if any
	Message string
	// Progress and Total are a NoticeProgress's figures (Total 0 when
	// unknown).
	Progress, Total float64
	// Level and Logger are a NoticeLog's severity ("info", "error", ...)
	// and the server's logger name.
	Level, Logger string
}

// Elicitor answers a server's request for input from the user. server is
// the server's short name. When exactly one tool call of the server is in
// flight, ctx is that call's (its values, such as the turn's approval
// owner, and its end), since the request is the call's; otherwise it is
// the connection's. It returns the user's action ("accept",
// "decline" or "cancel") and, when accepted, the content matching the
// requested schema. An error is sent to the server as the request's error.
type Elicitor func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error)

// SilentError is the error of a request the server did not answer in
// time (Server.Timeout). The request was cancelled; the session stays
// open for the next one.
type SilentError struct {
	Server string        // the server's short name
	Method string        // the MCP method, such as "tools/call"
	Tool   string        // for a tools/call, the server's name for the tool
	After  time.Duration // how long the server was silent
}

// Error says which server left which request unanswered, and for how long.
func (e *SilentError) Error() string {
	what := e.Method
	if e.Tool != "" {
		what = fmt.Sprintf("%s %q", e.Method, e.Tool)
	}
	return fmt.Sprintf("MCP server %q did not answer %s within %s (its timeout); the request was cancelled", e.Server, what, e.After)
}

// notify sends n to the server's Notify, if any.
func (c *Client) notify(n Notice) {
	if c.onNotice == nil {
		return
	}
	n.Server = c.name
	c.noticeMu.Lock()
	defer c.noticeMu.Unlock()
	c.onNotice(n)
}

// clientOptions are the SDK client's handlers for what the server sends on
// its own: elicitation, progress, log messages and tool-list changes.
func (c *Client) clientOptions(s *Server) *sdk.ClientOptions {
	return &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if s.Elicit == nil {
				c.notify(Notice{Kind: NoticeElicitation, Message: fmt.Sprintf("MCP server %q asked for input (%s) and nobody can answer here; declined", c.name, oneLine(req.Params.Message))})
				return &sdk.ElicitResult{Action: "decline"}, nil
			}
			if call := c.calls.only(); call != nil {
				ctx = call.ctx
			}
			return s.Elicit(ctx, c.name, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			p := req.Params
			call := c.calls.progress(p.ProgressToken)
			if call == nil {
				return
			}
			msg := fmt.Sprintf("MCP server %q: %s: %s", c.name, call.tool, progressText(p))
			c.notify(Notice{Kind: NoticeProgress, Tool: call.tool, Message: msg, Progress: p.Progress, Total: p.Total})
			attrs := map[string]any{observe.AttrMCPServer: c.name, observe.AttrMCPTool: call.tool, observe.AttrMCPProgress: p.Progress}
			if p.Total > 0 {
				attrs[observe.AttrMCPTotal] = p.Total
			}
			if p.Message != "" {
				attrs[observe.AttrMCPMessage] = c.scrub(oneLine(p.Message))
			}
			observe.AddEvent(call.ctx, observe.EventMCPProgress, attrs)
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			p := req.Params
			msg := fmt.Sprintf("MCP server %q %s: %s", c.name, p.Level, logText(p.Data))
			c.notify(Notice{Kind: NoticeLog, Message: msg, Level: string(p.Level), Logger: p.Logger})
			// A log message belongs to no request: it goes on the span of
			// each call of the server in flight.
			for _, call := range c.calls.inFlight() {
				observe.AddEvent(call.ctx, observe.EventMCPLog, map[string]any{
					observe.AttrMCPServer: c.name, observe.AttrMCPTool: call.tool, observe.AttrMCPLevel: string(p.Level),
					observe.AttrMCPLogger: p.Logger, observe.AttrMCPMessage: c.scrub(logText(p.Data)),
				})
			}
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Listing is a request to the same server: never from the
			// goroutine that delivers its messages. Tools waits for it.
			c.relistMu.Lock()
			if c.relistN == 0 {
				c.relistWait = make(chan struct{})
			}
			c.relistN++
			c.relistMu.Unlock()
			go func() {
				c.relist()
				c.relistMu.Lock()
				if c.relistN--; c.relistN == 0 {
					close(c.relistWait)
					c.relistWait = nil
				}
				c.relistMu.Unlock()
			}()
		},
	}
}

// relist lists the server's tools again after a list_changed notification.
func (c *Client) relist() {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	select {
	case <-c.connected:
	case <-ctx.Done():
		return
	}
	if c.session == nil {
		return // connecting failed
	}
	if err := c.listTools(ctx); err != nil {
		c.notify(Notice{Kind: NoticeToolsChanged, Message: fmt.Sprintf("MCP server %q changed its tools, and listing them again failed: %v", c.name, redact(err, c.secrets))})
		return
	}
	c.toolsMu.RLock()
	n := len(c.tools) // not Tools, which waits for this very relist
	c.toolsMu.RUnlock()
	c.notify(Notice{Kind: NoticeToolsChanged, Message: fmt.Sprintf("MCP server %q changed its tools: %d now", c.name, n)})
}

func progressText(p *sdk.ProgressNotificationParams) string {
	var s string
	switch {
	case p.Total > 0:
		s = fmt.Sprintf("%g/%g", p.Progress, p.Total)
	default:
		s = fmt.Sprintf("%g", p.Progress)
	}
	if p.Message != "" {
		s += " " + oneLine(p.Message)
	}
	return s
}

// logText is a log message's data as one line: a string as is, anything
// else as JSON.
func logText(data any) string {
	if s, ok := data.(string); ok {
		return oneLine(s)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Sprint(data)
	}
	return oneLine(string(b))
}

// oneLine folds s onto one line of at most 300 characters.
func oneLine(s string) string {
	r := []rune(s)
	out := make([]rune, 0, min(len(r), 300))
	for _, c := range r {
		if c == '\n' || c == '\r' || c == '\t' {
			c = ' '
		}
		out = append(out, c)
		if len(out) == 300 {
			out = append(out, '…')
			break
		}
	}
	return string(out)
}
