package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// noticeBoard passes the MCP servers' notices to the current sink, which
// changes once build has returned (run, chat), while notices may come at
// any time from the servers' goroutines.
type noticeBoard struct {
	mu   sync.Mutex
	sink render.Sink
}

func (b *noticeBoard) set(s render.Sink) {
	b.mu.Lock()
	b.sink = s
	b.mu.Unlock()
}

func (b *noticeBoard) notify(n mcp.Notice) {
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if ms, ok := sink.(render.MCPSink); ok {
		ms.MCP(render.MCPNotice{Kind: string(n.Kind), Server: n.Server, Tool: n.Tool, Message: n.Message,
			Level: n.Level, Progress: n.Progress, Total: n.Total})
	}
}

// setSink makes s the sink of the runtime's turns and its MCP notices.
func (rt *runtime) setSink(s render.Sink) {
	rt.sink = s
	rt.notices.set(s)
}

// terminalElicitor asks the user at the terminal what an MCP server asks
// for (elicitation/create): whether to answer at all, then each field of
// the requested schema, with its default. The approver's lock keeps one
// question at a time.
func terminalElicitor(ap *approver, w io.Writer) mcp.Elicitor {
	return func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		ap.mu.Lock()
		defer ap.mu.Unlock()
		resume := ap.pause()
		defer resume()
		ask := func(q string) (string, error) {
			a, err := ap.ask(ctx, q)
			if err != nil && ctx.Err() != nil {
				return "", ctx.Err()
			}
			return a, err
		}
		if req.Mode == "url" || req.URL != "" {
			a, err := ask(fmt.Sprintf("MCP server %q asks you to open %s (%s). Done? [y/N] ", server, req.URL, oneLine(req.Message)))
			if err != nil {
				return &sdk.ElicitResult{Action: "cancel"}, nil
			}
			if yes(a) {
				return &sdk.ElicitResult{Action: "accept"}, nil
			}
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		a, err := ask(fmt.Sprintf("MCP server %q asks: %s Answer? [y/N] ", server, oneLine(req.Message)))
		if err != nil {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		if !yes(a) {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		content := map[string]any{}
		for _, f := range formFields(req.RequestedSchema) {
			for {
				a, err := ask("  " + f.question())
				if err != nil {
					return &sdk.ElicitResult{Action: "cancel"}, nil
				}
				v, ok, perr := f.parse(strings.TrimSpace(a))
				if perr != nil {
					fmt.Fprintf(w, "  %v\n", perr)
					continue
				}
				if ok {
					content[f.name] = v
				}
				break
			}
		}
		return &sdk.ElicitResult{Action: "accept", Content: content}, nil
	}
}

func yes(a string) bool {
	a = strings.ToLower(strings.TrimSpace(a))
	return a == "y" || a == "yes"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// formField is one property of an elicitation's requested schema (flat:
// MCP allows only primitive properties and arrays of enums).
type formField struct {
	name, typ, title string
	required         bool
	def              any
	enum             []string
}

// formFields lists the schema's properties, required ones first, each group
// by name.
func formFields(schema any) []formField {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Default     any    `json:"default"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
			Items *struct {
				Enum  []any `json:"enum"`
				AnyOf []struct {
					Const any `json:"const"`
				} `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	var out []formField
	for name, p := range s.Properties {
		f := formField{name: name, typ: p.Type, title: p.Title, def: p.Default, required: slices.Contains(s.Required, name)}
		if f.title == "" {
			f.title = p.Description
		}
		add := func(v any) { f.enum = append(f.enum, fmt.Sprint(v)) }
		for _, v := range p.Enum {
			add(v)
		}
		for _, o := range p.OneOf {
			add(o.Const)
		}
		if p.Items != nil {
			for _, v := range p.Items.Enum {
				add(v)
			}
			for _, o := range p.Items.AnyOf {
				add(o.Const)
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b formField) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func (f formField) question() string {
	q := f.name
	if f.title != "" && f.title != f.name {
		q += " (" + oneLine(f.title) + ")"
	}
	var hints []string
	if f.typ != "" && f.typ != "string" {
		hints = append(hints, f.typ)
	}
	if len(f.enum) > 0 {
		hints = append(hints, "one of "+strings.Join(f.enum, ", "))
		if f.typ == "array" {
			hints[len(hints)-1] = "comma-separated, from " + strings.Join(f.enum, ", ")
		}
	}
	if f.def != nil {
		hints = append(hints, fmt.Sprintf("default %v", f.def))
	} else if !f.required {
		hints = append(hints, "optional")
	}
	if len(hints) > 0 {
		q += " [" + strings.Join(hints, "; ") + "]"
	}
	return q + ": "
}

// parse reads an answer: empty takes the default (or leaves an optional
// field out); ok is false when the field is left out.
func (f formField) parse(a string) (v any, ok bool, err error) {
	if a == "" {
		switch {
		case f.def != nil:
			return f.def, true, nil
		case f.required:
			return nil, false, fmt.Errorf("%s is required", f.name)
		}
		return nil, false, nil
	}
	switch f.typ {
	case "boolean":
		switch strings.ToLower(a) {
		case "y", "yes", "true":
			return true, true, nil
		case "n", "no", "false":
			return false, true, nil
		}
		return nil, false, fmt.Errorf("answer yes or no")
	case "integer":
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%q is not an integer", a)
		}
		return n, true, nil
	case "number":
		n, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%q is not a number", a)
		}
		return n, true, nil
	case "array":
		var items []string
		for _, it := range strings.Split(a, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		return items, true, nil
	}
	if len(f.enum) > 0 && !slices.Contains(f.enum, a) {
		return nil, false, fmt.Errorf("answer one of %s", strings.Join(f.enum, ", "))
	}
	return a, true, nil
}

// mcpToolsNow offers each run the MCP servers' tools as they are now, and
// each model call of a turn after its first too (agent.Injection.ToolsNow):
// a tool a server added (tools/list_changed) is offered from the next model
// call on, even within the turn that made the server add it. (The tools of
// the connection stay the agent's own; their descriptions and schemas are
// read as last listed, and a removed one answers that it is gone.)
type mcpToolsNow struct{ rt *runtime }

// Invoking implements agent.ContextProvider.
func (p *mcpToolsNow) Invoking(context.Context, *agent.Invocation) (agent.Injection, error) {
	if p.rt.mcp == nil {
		return agent.Injection{}, nil
	}
	return agent.Injection{Tools: p.rt.mcpTools(), ToolsNow: p.rt.mcpTools}, nil
}

// Invoked implements agent.ContextProvider.
func (p *mcpToolsNow) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }

// mcpTools returns the MCP servers' tools as they are now; under agcore
// serve, those of a server that authorizes with a login are routed to the
// turn's principal's own connection (principalTool).
func (rt *runtime) mcpTools() []tool.Tool {
	var out []tool.Tool
	for i, c := range rt.mcp.Clients() {
		m := rt.s.MCP[i]
		perPrincipal := rt.pool != nil && m.URL != "" && len(m.Headers) == 0 && (m.OAuth == nil || m.OAuth.Grant != "client_credentials")
		for _, t := range c.Tools() {
			if perPrincipal {
				t = &principalTool{Tool: t, pool: rt.pool, cfg: m, name: c.Name()}
			}
			out = append(out, t)
		}
	}
	return out
}

// principalPool holds agcore serve's connections to MCP servers that
// authorize with a login, one per server and principal, each with that
// principal's stored login (agcore mcp login --principal): two principals
// never share a token. The command line's user's connection ("") is the
// runtime's own.
type principalPool struct {
	a      *app
	s      *config.Settings
	notify func(mcp.Notice)
	elicit mcp.Elicitor // the served turns' (approvalElicitor)

	mu      sync.Mutex
	clients map[string]*mcp.Client // server URL + "\x00" + principal
}

// client returns principal's connection to the server, connecting it the
// first time (a failure is not kept: the next call tries again).
func (p *principalPool) client(ctx context.Context, m config.MCPServer, name, principal string) (*mcp.Client, error) {
	key := m.URL + "\x00" + principal
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[key]; c != nil {
		return c, nil
	}
	srv, err := p.a.mcpServer(p.s, m, principal, p.notify, p.elicit)
	if err != nil {
		return nil, err
	}
	srv.Name = name // the same tool names as the shared connection's
	cctx, cancel := context.WithTimeout(ctx, mcpStartTimeout)
	defer cancel()
	c, err := mcp.Connect(cctx, srv)
	if err != nil {
		return nil, err
	}
	p.clients[key] = c
	return c, nil
}

// Close closes every principal's connections.
func (p *principalPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for k, c := range p.clients {
		errs = append(errs, c.Close())
		delete(p.clients, k)
	}
	return errors.Join(errs...)
}

// principalTool is an MCP tool whose calls go through the connection of
// the turn's principal (the command line's user's when the turn has none).
type principalTool struct {
	tool.Tool
	pool *principalPool
	cfg  config.MCPServer
	name string // the server's short name
}

// NeedsApproval is the tool's own.
func (t *principalTool) NeedsApproval() bool { return tool.NeedsApproval(t.Tool) }

// Invoke calls the tool as the turn's principal.
func (t *principalTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	principal := host.Owner(ctx)
	if principal == "" {
		return t.Tool.Invoke(ctx, args)
	}
	c, err := t.pool.client(ctx, t.cfg, t.name, principal)
	if err != nil {
		return "", errors.New(mcpErrorLine(err))
	}
	for _, x := range c.Tools() {
		if x.Name() == t.Name() {
			return x.Invoke(ctx, args)
		}
	}
	return "", fmt.Errorf("MCP server %q offers principal %q no tool %s", t.name, principal, t.Name())
}

// approvalElicitor asks through a served turn's approver what an MCP server
// asks for (elicitation/create during one of the turn's tool calls): under
// agcore serve it is a pending decision like a tool call's (GET
// /v1/approvals lists it as the tool mcp.ElicitationTool with the requested
// schema; approving accepts with the decision's content over the form's
// defaults, checked against the schema when decided; denying declines);
// under agcore mcp serve the question goes to the MCP client's user as it
// is (mcpserve.Approver.Elicit). A request that belongs to no turn (no call
// in flight, or several) has nobody to answer it: declined, and a notice
// says so.
func approvalElicitor(ap tool.Approver, notify func(mcp.Notice)) mcp.Elicitor {
	return func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		if e, ok := ap.(interface {
			Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error)
		}); ok {
			return e.Elicit(ctx, req)
		}
		if _, inTurn := approval.OwnerFrom(ctx); !inTurn {
			if notify != nil {
				notify(mcp.Notice{Kind: mcp.NoticeElicitation, Server: server, Message: fmt.Sprintf("MCP server %q asked for input (%s) outside a turn's call, and nobody can answer it; declined", server, oneLine(req.Message))})
			}
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		res, err := mcp.AskApprover(ctx, ap, "elicitation-"+rand.Text()[:12], server, req)
		switch {
		case err != nil && res == nil:
			return nil, err
		case err != nil && notify != nil: // a decision whose content did not fit: cancelled
			notify(mcp.Notice{Kind: mcp.NoticeElicitation, Server: server, Message: fmt.Sprintf("the answer to MCP server %q's request for input was cancelled: %v", server, err)})
		}
		return res, nil
	}
}
