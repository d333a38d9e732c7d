package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolName is the longest tool name providers accept.
const maxToolName = 64

// ToolError is the error of a call the server answered with isError: the
// tool ran and failed. Its message is the result's text, which the tool
// loop shows the model as an error result.
type ToolError struct {
	Server string // the server's short name
	Tool   string // the server's name for the tool
	Text   string // the result's content as text
}

// Error returns the result's text, as the model should read it.
func (e *ToolError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("MCP tool %q of server %q failed without saying why", e.Tool, e.Server)
	}
	return e.Text
}

// remoteTool is one tool of a server, as a tool.Tool.
type remoteTool struct {
	c        *Client
	name     string // mcp__SERVER__TOOL
	remote   string // the server's name for it
	desc     string
	params   json.RawMessage
	approval bool
}

func (t *remoteTool) Name() string        { return t.name }
func (t *remoteTool) NeedsApproval() bool { return t.approval }

// Description is the server's, as it last listed the tool (a list change
// is seen by the next request built).
func (t *remoteTool) Description() string {
	if cur := t.c.current(t.name); cur != nil {
		return cur.desc
	}
	return t.desc
}

// Parameters is the server's input schema, as it last listed the tool.
func (t *remoteTool) Parameters() json.RawMessage {
	if cur := t.c.current(t.name); cur != nil {
		return cur.params
	}
	return t.params
}

// Invoke calls the tool on the server and returns its content as text; see
// the package documentation.
func (t *remoteTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	if o := observe.From(ctx); o != nil {
		// The trace context of the call, where MCP carries it: _meta
		// (traceparent, tracestate), for stdio and HTTP servers alike.
		params.Meta = sdk.Meta{}
		o.Inject(ctx, func(k, v string) { params.Meta[k] = v })
	}
	// The call's deadline is a silence deadline: progress restarts it.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silent := &SilentError{Server: t.c.name, Method: "tools/call", Tool: t.remote, After: t.c.timeout}
	token, done := t.c.calls.start(ctx, t.remote, t.c.timeout, func() { cancel(silent) })
	defer done()
	params.SetProgressToken(token)
	if !t.c.offers(t.name) {
		return "", fmt.Errorf("MCP server %q no longer offers the tool %q (its tool list changed)", t.c.name, t.remote)
	}
	res, err := t.c.session.CallTool(cctx, params)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("calling MCP tool %q of server %q: %w", t.remote, t.c.name, cerr)
		}
		if errors.Is(context.Cause(cctx), silent) {
			t.c.notify(Notice{Kind: NoticeSilent, Tool: t.remote, Message: silent.Error()})
			return "", silent
		}
		return "", fmt.Errorf("calling MCP tool %q of server %q: %w", t.remote, t.c.name, redact(err, t.c.secrets))
	}
	text := resultText(res)
	if res.IsError {
		return "", &ToolError{Server: t.c.name, Tool: t.remote, Text: text}
	}
	return text, nil
}

// toolsOf wraps a server's tools, naming them by the rule of the package
// documentation.
func toolsOf(c *Client, remote []*sdk.Tool, approval bool) []tool.Tool {
	taken := make(map[string]bool, len(remote))
	out := make([]tool.Tool, 0, len(remote))
	for _, r := range remote {
		if r == nil {
			continue
		}
		name := toolName(c.name, r.Name, taken)
		taken[name] = true
		desc := r.Description
		if desc == "" {
			desc = r.Title
		}
		out = append(out, &remoteTool{c: c, name: name, remote: r.Name, desc: desc, params: schemaOf(r.InputSchema), approval: approval})
	}
	return out
}

// toolName is mcp__SERVER__TOOL, made unique among taken and at most 64
// characters long.
func toolName(server, remote string, taken map[string]bool) string {
	prefix := "mcp__" + server + "__"
	name := prefix + sanitize(remote)
	if len(name) <= maxToolName && !taken[name] {
		return name
	}
	sum := sha256.Sum256([]byte(remote))
	suffix := "_" + hex.EncodeToString(sum[:4])
	keep := min(len(sanitize(remote)), maxToolName-len(prefix)-len(suffix))
	return prefix + sanitize(remote)[:max(keep, 0)] + suffix
}

// schemaOf is a tool's input schema as JSON; a missing one is an object
// with no properties.
func schemaOf(s any) json.RawMessage {
	if s != nil {
		if b, err := json.Marshal(s); err == nil && string(b) != "null" {
			return b
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// resultText turns a call's content into the text the model reads.
func resultText(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		if res.StructuredContent != nil {
			if b, err := json.Marshal(res.StructuredContent); err == nil {
				return string(b)
			}
		}
		return ""
	}
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
		case *sdk.ResourceLink:
			writeLink(&b, c)
		case *sdk.EmbeddedResource:
			writeResource(&b, c.Resource)
		default:
			fmt.Fprintf(&b, "[content of type %T not shown]", c)
		}
	}
	return b.String()
}

func writeLink(b *strings.Builder, l *sdk.ResourceLink) {
	b.WriteString("[resource link: ")
	if l.Name != "" {
		b.WriteString(l.Name + " ")
	}
	b.WriteString("<" + l.URI + ">")
	if l.MIMEType != "" {
		b.WriteString(", " + l.MIMEType)
	}
	if l.Description != "" {
		b.WriteString(": " + l.Description)
	}
	b.WriteByte(']')
}

func writeResource(b *strings.Builder, r *sdk.ResourceContents) {
	switch {
	case r == nil:
		b.WriteString("[resource]")
	case r.Text == "" && len(r.Blob) > 0:
		fmt.Fprintf(b, "[resource <%s>: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	default:
		fmt.Fprintf(b, "[resource <%s>", r.URI)
		if r.MIMEType != "" {
			b.WriteString(", " + r.MIMEType)
		}
		b.WriteString("]\n" + r.Text)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
