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

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
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
}

// server is what the tools of one server share.
type server struct {
	ids    *sessionIDs
	turns  turns
	logger *slog.Logger
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
	s := sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "Each tool is an agent: give it a prompt and it answers after working on it (its own tools included). Calls in one session continue one conversation.",
	})
	srv := &server{ids: &sessionIDs{ids: map[*sdk.ServerSession]string{}, mem: map[string]*session.Session{}}, logger: logger}
	for _, a := range set.All() {
		desc := a.Description
		if desc == "" {
			desc = "the agent " + a.Name
		}
		desc += ". Give it a prompt; it runs a turn (calling its own tools as it needs) and answers in text. Calls in one MCP session continue one conversation."
		sdk.AddTool(s, &sdk.Tool{Name: toolName(a.Name), Description: desc},
			func(ctx context.Context, req *sdk.CallToolRequest, in agentInput) (*sdk.CallToolResult, any, error) {
				return srv.runTurn(ctx, req, a, in.Prompt), nil, nil
			})
	}
	for _, t := range opts.Tools {
		s.AddTool(&sdk.Tool{Name: t.Name(), Description: t.Description(), InputSchema: t.Parameters()},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return callTool(req, t), nil
			})
	}
	return s
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

// turns keeps the turns waiting for the client's answer to an approval
// question, by the request state their call's result carried.
type turns struct {
	mu      sync.Mutex
	waiting map[string]*turn
}

func (ts *turns) put(t *turn) string {
	id := rand.Text()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.waiting == nil {
		ts.waiting = map[string]*turn{}
	}
	ts.waiting[id] = t
	// A client that never comes back: the turn ends after a while.
	t.abandon = time.AfterFunc(answerTimeout, func() {
		ts.mu.Lock()
		delete(ts.waiting, id)
		ts.mu.Unlock()
		t.cancel()
	})
	return id
}

func (ts *turns) take(id string) *turn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.waiting[id]
	delete(ts.waiting, id)
	if t != nil {
		t.abandon.Stop()
	}
	return t
}

// answerTimeout is how long a turn waits for the client to answer an
// approval question.
const answerTimeout = 10 * time.Minute

// turn is a turn running on behalf of an MCP call. It outlives the call
// when it needs approval: under the multi round-trip pattern (SEP-2322),
// the call's result asks the question, and the client's retry, carrying the
// answer, picks the turn up.
type turn struct {
	asks    chan *question
	done    chan *sdk.CallToolResult
	cancel  context.CancelFunc
	abandon *time.Timer
	waiting *question // the question the client is answering

	mu       sync.Mutex
	progress *progress // the current call's
}

// question is a call waiting for approval.
type question struct {
	call   tool.Call
	answer chan tool.Decision
}

type turnKey struct{}

// runTurn runs one turn of a in the caller's session, or continues the one
// waiting for the answer this call carries; it answers with the turn's
// text, or with an approval question for the client's user.
func (srv *server) runTurn(ctx context.Context, req *sdk.CallToolRequest, a host.Agent, prompt string) *sdk.CallToolResult {
	var t *turn
	if state := req.Params.RequestState; state != "" {
		if t = srv.turns.take(state); t == nil {
			return errorResult("this call's approval question is no longer pending (it was answered or timed out); call the agent again")
		}
		t.waiting.answer <- decisionOf(req.Params.InputResponses["approve"])
	} else {
		if strings.TrimSpace(prompt) == "" {
			return errorResult("the prompt is empty: give the agent a task or a question")
		}
		t = srv.start(ctx, req, a, prompt)
	}
	t.mu.Lock()
	t.progress = newProgress(req)
	t.mu.Unlock()
	select {
	case q := <-t.asks:
		t.waiting = q
		args := string(q.call.Input)
		if len(args) > 300 {
			args = args[:300] + "…"
		}
		return &sdk.CallToolResult{
			InputRequests: sdk.InputRequestMap{"approve": &sdk.ElicitParams{
				Message:         fmt.Sprintf("%s wants to call %s %s. Allow it?", a.Name, q.call.Name, args),
				RequestedSchema: approvalSchema,
			}},
			RequestState: srv.turns.put(t),
		}
	case res := <-t.done:
		return res
	case <-ctx.Done():
		t.cancel()
		return errorResult("the call was cancelled")
	}
}

var approvalSchema = json.RawMessage(`{"type":"object","properties":{"allow":{"type":"boolean","title":"Allow this call","default":false}},"required":["allow"]}`)

// decisionOf reads the client's answer to an approval question.
func decisionOf(v any) tool.Decision {
	if r, ok := v.(*sdk.ElicitResult); ok && r.Action == "accept" && r.Content["allow"] == true {
		return tool.Decision{Approved: true}
	}
	return tool.Decision{Reason: "the user did not allow it"}
}

// start runs a new turn in the background: it may outlive this call.
func (srv *server) start(ctx context.Context, req *sdk.CallToolRequest, a host.Agent, prompt string) *turn {
	principal := principalOf(ctx, req)
	canAsk := true
	if p := req.Session.InitializeParams(); p != nil && (p.Capabilities == nil || p.Capabilities.Elicitation == nil) {
		canAsk = false
	}
	t := &turn{asks: make(chan *question), done: make(chan *sdk.CallToolResult, 1)}
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancel = cancel
	tctx = host.WithPrincipal(tctx, principal)
	if canAsk {
		tctx = context.WithValue(tctx, turnKey{}, t)
	}
	id := srv.ids.id(req.Session, a.Name, principal)
	opts := &agent.RunOptions{SessionID: id}
	if a.Store != nil {
		opts.Store = host.Sessions(tctx, a.Store)
	} else {
		opts.Session = srv.ids.memory(id)
	}
	// The first call's progress target is set before the turn starts: its
	// first update may come at once.
	t.mu.Lock()
	t.progress = newProgress(req)
	t.mu.Unlock()
	go func() {
		defer cancel()
		t.done <- srv.turnResult(tctx, t, a, prompt, opts)
	}()
	return t
}

func (srv *server) turnResult(ctx context.Context, t *turn, a host.Agent, prompt string, opts *agent.RunOptions) *sdk.CallToolResult {
	send := func(msg string) {
		t.mu.Lock()
		p := t.progress
		t.mu.Unlock()
		p.send(ctx, msg)
	}
	stream := a.Agent.RunStream(ctx, []llm.Message{llm.UserText(prompt)}, opts)
	var resp *agent.Response
	names := map[string]string{} // tool call id → tool name
	for u, err := range stream.Updates() {
		if err != nil {
			srv.logger.WarnContext(ctx, "mcp serve: the turn failed", "agent", a.Name, "error", err)
			return errorResult(fmt.Sprintf("the agent %s failed: %v", a.Name, err))
		}
		switch u.Kind {
		case agent.UpdateToolCall:
			names[u.ToolCall.ID] = u.ToolCall.Name
			send(fmt.Sprintf("%s: calling %s", a.Name, u.ToolCall.Name))
		case agent.UpdateToolResult:
			if u.ToolResult != nil {
				send(fmt.Sprintf("%s: %s answered", a.Name, names[u.ToolResult.ToolCallID]))
			}
		case agent.UpdateFinish:
			resp = u.Response
		}
	}
	if resp == nil {
		return errorResult(fmt.Sprintf("the agent %s gave no answer", a.Name))
	}
	// The answer goes out once the turn is stored, so that the next call
	// (or another process over the store) continues from it.
	if _, err := stream.Wait(); err == nil {
		if perr := resp.PersistErr(); perr != nil {
			srv.logger.WarnContext(ctx, "mcp serve: the turn was not stored", "agent", a.Name, "error", perr)
		}
	}
	send(a.Name + ": done")
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: resp.Text()}}}
}

// progress sends a request's progress notifications, when it asked for
// them.
type progress struct {
	req   *sdk.CallToolRequest
	token any
	n     float64
}

func newProgress(req *sdk.CallToolRequest) *progress {
	return &progress{req: req, token: req.Params.GetProgressToken()}
}

func (p *progress) send(ctx context.Context, msg string) {
	if p == nil || p.token == nil {
		return
	}
	p.n++
	_ = p.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
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

// Approver is the tool.Approver of agents served over MCP: a call that
// needs approval is asked of the MCP client's user. The question is the
// result of the MCP call running the turn (an elicitation input request,
// the multi round-trip pattern; the SDK asks older clients with
// elicitation/create itself), and the turn goes on when the client's retry
// brings the answer. A client that cannot ask its user (no elicitation
// capability), or a run that is not an MCP call's, is refused with a reason
// the model reads.
type Approver struct{}

// Approve implements tool.Approver.
func (Approver) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		return tool.Decision{Reason: "it needs the user's approval, and the MCP client cannot ask its user (no elicitation)"}, nil
	}
	q := &question{call: call, answer: make(chan tool.Decision, 1)}
	select {
	case t.asks <- q:
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	}
	select {
	case d := <-q.answer:
		return d, nil
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	}
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
