package render

import "fmt"

// MCPNotice is something an MCP server said besides its answers (progress
// of a call, a log message, a changed tool list, an elicitation nobody
// could answer) or a request it left unanswered. Message is one line for
// people, naming the server.
type MCPNotice struct {
	Kind     string  `json:"kind"` // progress, log, tools_changed, silent, elicitation
	Server   string  `json:"server"`
	Tool     string  `json:"tool,omitempty"`
	Message  string  `json:"message"`
	Level    string  `json:"level,omitempty"` // of a log message
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
}

// MCPSink is a Sink that shows MCP notices. Both sinks of this package are
// one; MCP may be called at any time, from any goroutine.
type MCPSink interface {
	MCP(n MCPNotice)
}

type mcpEvent struct {
	Type string `json:"type"`
	MCPNotice
}

// MCP implements MCPSink: an event {"type":"mcp","kind":...,"server":...,
// "message":...} with the notice's other fields when set.
func (j *JSON) MCP(n MCPNotice) { j.emit(mcpEvent{Type: "mcp", MCPNotice: n}) }

// MCP implements MCPSink: a running call's progress on the status line of
// a terminal, every other notice (and progress elsewhere) as a dim line on
// stderr; a silent server's line in yellow.
func (t *Text) MCP(n MCPNotice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.Kind == "progress" && t.opts.Terminal {
		t.busyLocked(n.Message)
		return
	}
	t.st.setLocked("")
	t.lineLocked()
	code := "2"
	if n.Kind == "silent" {
		code = "33"
	}
	fmt.Fprintln(t.errw, t.color(code, n.Message))
}
