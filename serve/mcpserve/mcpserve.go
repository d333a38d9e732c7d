package mcpserve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options adjust the server. The zero value serves the agents alone.
type Options struct {
	// Name and Version introduce the server to clients; empty means
	// "agcore" and "0.1.0".
	Name, Version string
	// Tools are offered as they are besides the agents (agcore's built-in
	// file tools, say). One that needs approval (tool.NeedsApproval) asks
	// the client's user through elicitation before each call.
	Tools []tool.Tool
	// Logger records failed turns; nil means slog.Default().
	Logger *slog.Logger
	// AgentTools say how an agent (by name) is offered, when not as a tool
	// taking one prompt: its input schema and prompt template.
	AgentTools map[string]AgentTool
	// Prompts are offered as MCP prompts (prompts/list, prompts/get, and
	// the completion of their arguments).
	Prompts []Prompt
	// Resources and ResourceTemplates are offered read-only as MCP
	// resources; a client may subscribe to one and is told when its file
	// changes.
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	// ReadFile reads the files Prompts and Resources name (a path relative
	// to the server's root); agcore mcp serve gives fstool.ReadFile under
	// --root, with its secret rules. Nil refuses every file.
	ReadFile func(name string) ([]byte, error)
}

// AgentTool is how an agent is offered as an MCP tool when its input is
// not one prompt (the config file's agents' "mcp_tool").
type AgentTool struct {
	// InputSchema is the tool's input schema, a JSON Schema object sent to
	// clients as it is (any draft; 2020-12 keywords such as $defs are
	// kept). Empty means {"prompt": string}.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Prompt is the turn's input made from the call's arguments: each
	// {{name}} is replaced by the argument name (a string as it is, any
	// other value as JSON). Empty means the arguments as JSON, or the
	// prompt argument without an InputSchema.
	Prompt string `json:"prompt,omitempty"`
	// Sampling makes the agent's model the MCP client's: each model call
	// of its turns is a sampling/createMessage request to the client that
	// called (text in, text out; the agent should have no tools). A client
	// without the sampling capability is refused. The CLI reads it.
	Sampling bool `json:"sampling,omitempty"`
	// AskUser gives the agent the ask_user tool ([AskUser]): it asks the
	// client's user a question, with a form, through elicitation. The CLI
	// reads it.
	AskUser bool `json:"ask_user,omitempty"`
}

// server is what the tools of one server share.
type server struct {
	ids    *sessionIDs
	turns  turns
	logger *slog.Logger
}

// agentCall is what an agent's tool is called with: the arguments, and the
// prompt they make.
type agentCall struct {
	args   json.RawMessage
	prompt string
}

// agentInput is the input of an agent's tool.
type agentInput struct {
	Prompt string `json:"prompt" jsonschema:"what to ask the agent: a task or a question, in plain language"`
}

// NewServer returns an MCP server offering each agent of set as a tool
// named after it, and opts.Tools.
func NewServer(set *host.Set, opts Options) *sdk.Server {
	if opts.Name == "" {
		opts.Name = "agcore"
	}
	if opts.Version == "" {
		opts.Version = "0.1.0"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c := newContent(opts)
	s := sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{
		Instructions:       "Each tool is an agent: give it a prompt and it answers after working on it (its own tools included). Calls in one session continue one conversation.",
		CompletionHandler:  c.complete,
		SubscribeHandler:   c.subscribe,
		UnsubscribeHandler: c.unsubscribe,
		// Logging: a turn's progress is also sent as log messages.
		Capabilities: &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}},
	})
	srv := &server{ids: &sessionIDs{ids: map[*sdk.ServerSession]string{}, mem: map[string]*session.Session{}}, logger: logger}
	for _, a := range set.All() {
		desc := a.Description
		if desc == "" {
			desc = "the agent " + a.Name
		}
		at, typed := opts.AgentTools[a.Name]
		if !typed || len(at.InputSchema) == 0 {
			desc += ". Give it a prompt; it runs a turn (calling its own tools as it needs) and answers in text. Calls in one MCP session continue one conversation."
			sdk.AddTool(s, &sdk.Tool{Name: toolName(a.Name), Description: desc},
				func(ctx context.Context, req *sdk.CallToolRequest, in agentInput) (*sdk.CallToolResult, any, error) {
					prompt := in.Prompt
					if typed && at.Prompt != "" {
						prompt = expand(at.Prompt, map[string]any{"prompt": in.Prompt})
					}
					return srv.runTurn(ctx, req, a, agentCall{prompt: prompt}), nil, nil
				})
			continue
		}
		schema, err := inputSchema(at.InputSchema)
		if err != nil {
			logger.Warn("mcp serve: the agent's input schema cannot check arguments", "agent", a.Name, "error", err)
		}
		s.AddTool(&sdk.Tool{Name: toolName(a.Name), Description: desc, InputSchema: at.InputSchema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				args := req.Params.Arguments
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				if schema != nil {
					if err := schema.Validate(args); err != nil {
						return errorResult("the arguments " + err.Error()), nil
					}
				}
				var values map[string]any
				if err := json.Unmarshal(args, &values); err != nil {
					return errorResult("the arguments are not a JSON object: " + err.Error()), nil
				}
				prompt := string(args)
				if at.Prompt != "" {
					prompt = expand(at.Prompt, values)
				}
				return srv.runTurn(ctx, req, a, agentCall{args: args, prompt: prompt}), nil
			})
	}
	c.register(s)
	for _, t := range opts.Tools {
		s.AddTool(&sdk.Tool{Name: t.Name(), Description: t.Description(), InputSchema: t.Parameters()},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return callTool(req, t), nil
			})
	}
	return s
}

// inputSchema resolves an agent tool's input schema, to check the
// arguments of its calls.
func inputSchema(raw json.RawMessage) (*tool.Schema, error) {
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, err
	}
	return tool.NewSchema(&js)
}

// toolName makes an agent's name a valid MCP tool name.
func toolName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 0x80 && (r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// sessionIDs gives each MCP session its agcore session id, and keeps the
// in-memory sessions of agents without a store.
type sessionIDs struct {
	mu  sync.Mutex
	ids map[*sdk.ServerSession]string
	mem map[string]*session.Session
}

// id is the agcore session of an MCP session, an agent and a principal:
// "mcp-" and a hash, the same for every call of the MCP session.
func (s *sessionIDs) id(ss *sdk.ServerSession, agentName, principal string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	base, ok := s.ids[ss]
	if !ok {
		base = ss.ID()
		if base == "" { // stdio: one session per connection
			base = rand.Text()
		}
		s.ids[ss] = base
		go func() { // forget it when the client leaves
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.ids, ss)
			s.mu.Unlock()
		}()
	}
	sum := sha256.Sum256([]byte(base + "\x00" + agentName + "\x00" + principal))
	return "mcp-" + hex.EncodeToString(sum[:10])
}

func (s *sessionIDs) memory(id string) *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mem[id]; ok {
		return m
	}
	m := &session.Session{ID: id}
	s.mem[id] = m
	return m
}

// principalOf is the principal of a call: the bearer token's name over
// HTTP (Handler), else host.LocalPrincipal.
func principalOf(ctx context.Context, req *sdk.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return req.Extra.TokenInfo.UserID
	}
	if p, ok := host.PrincipalFrom(ctx); ok {
		return p
	}
	return host.LocalPrincipal
}

// callTool runs one of Options.Tools; one that needs approval asks the
// client's user first (an input request; the retry brings the answer).
func callTool(req *sdk.CallToolRequest, t tool.Tool) *sdk.CallToolResult {
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if tool.NeedsApproval(t) {
		if p := req.Session.InitializeParams(); p != nil && (p.Capabilities == nil || p.Capabilities.Elicitation == nil) {
			return errorResult(fmt.Sprintf("%s needs the user's approval, and the MCP client cannot ask its user (no elicitation)", t.Name()))
		}
		if req.Params.RequestState != "approve" {
			a := string(args)
			if len(a) > 300 {
				a = a[:300] + "…"
			}
			return &sdk.CallToolResult{
				InputRequests: sdk.InputRequestMap{"approve": &sdk.ElicitParams{Message: fmt.Sprintf("Allow %s %s?", t.Name(), a), RequestedSchema: approvalSchema}},
				RequestState:  "approve",
			}
		}
		if err := decisionOf(req.Params.InputResponses["approve"]).Denial(t.Name()); err != nil {
			return errorResult(err.Error())
		}
	}
	out, err := t.Invoke(context.Background(), args)
	if err != nil {
		return errorResult(err.Error())
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// Serve runs the server on t (such as &sdk.StdioTransport{} for a client
// that starts the program) until the client leaves or ctx ends: a Go
// program exposes its agents in one call.
func Serve(ctx context.Context, t sdk.Transport, opts Options, agents ...host.Agent) error {
	set, err := host.NewSet(agents...)
	if err != nil {
		return err
	}
	ss, err := NewServer(set, opts).Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return ignoreClosed(err)
	case <-ctx.Done():
		ss.Close()
		<-done
		return nil
	}
}

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, sdk.ErrConnectionClosed) || strings.Contains(err.Error(), "EOF") {
		return nil
	}
	return err
}

// Handler serves srv over streamable HTTP. With tokens (principal name →
// secret, as agcore serve's), every request needs "Authorization: Bearer
// SECRET" and runs as that principal, and a session is bound to the
// principal that opened it; without tokens every request is
// host.LocalPrincipal's.
func Handler(srv *sdk.Server, tokens map[string]string) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	if len(tokens) == 0 {
		return h
	}
	sums := make(map[string][32]byte, len(tokens))
	for name, secret := range tokens {
		sums[name] = sha256.Sum256([]byte(secret))
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		sum := sha256.Sum256([]byte(token))
		found := ""
		for name, want := range sums {
			if subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
				found = name
			}
		}
		if found == "" {
			return nil, auth.ErrInvalidToken
		}
		// The tokens of agcore serve do not expire; the SDK wants a time.
		return &auth.TokenInfo{UserID: found, Expiration: time.Now().Add(24 * time.Hour)}, nil
	}
	return auth.RequireBearerToken(verify, nil)(h)
}
