package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// turns keeps the turns waiting for the client's answer to a question
// (multi round-trip clients), by the request state their call's result
// carried.
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

// answerTimeout is how long a turn waits for the client to answer a
// question.
const answerTimeout = 10 * time.Minute

// turn is a turn running on behalf of an MCP call. It outlives the call
// when it needs the client (approval, a question for the user, a sampling
// request) and the client speaks the multi round-trip pattern (SEP-2322):
// the call's result carries the request, and the client's retry, carrying
// the answer, picks the turn up. An older client is sent the request
// (elicitation/create, sampling/createMessage) during the call itself.
type turn struct {
	agent   string
	caps    *sdk.ClientCapabilities // the client's; never nil
	asks    chan *question
	done    chan *sdk.CallToolResult
	cancel  context.CancelFunc
	abandon *time.Timer
	waiting *question // the question the client is answering

	mu   sync.Mutex
	call *sdk.CallToolRequest // the current call's (progress, logging)
	n    float64              // progress so far
}

// question is what a turn needs from the client: an elicitation
// (*sdk.ElicitParams) or a sampling request (*sdk.CreateMessageParams).
type question struct {
	key    string
	params sdk.InputRequest
	answer chan answer
}

type answer struct {
	res sdk.InputResponse
	err error
}

type turnKey struct{}

// turnFrom is the turn a run belongs to, when it is an MCP call's.
func turnFrom(ctx context.Context) *turn {
	t, _ := ctx.Value(turnKey{}).(*turn)
	return t
}

// ask puts a question to the client and waits for its answer.
func (t *turn) ask(ctx context.Context, key string, params sdk.InputRequest) (sdk.InputResponse, error) {
	q := &question{key: key, params: params, answer: make(chan answer, 1)}
	select {
	case t.asks <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// multiRoundTrip reports whether the client speaks the multi round-trip
// pattern (protocol 2026-07-28 and later), where a server may not send
// requests of its own and asks through its results instead.
func multiRoundTrip(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// send asks the client q directly: elicitation/create or
// sampling/createMessage, on the stream of the call ctx is.
func send(ctx context.Context, ss *sdk.ServerSession, q *question) answer {
	switch p := q.params.(type) {
	case *sdk.ElicitParams:
		res, err := ss.Elicit(ctx, p)
		return answer{res, err}
	case *sdk.CreateMessageParams:
		res, err := ss.CreateMessage(ctx, p)
		return answer{res, err}
	}
	return answer{err: fmt.Errorf("mcpserve: cannot ask %T", q.params)}
}

// runTurn runs one turn of a in the caller's session, or continues the one
// waiting for the answer this call carries; it answers with the turn's
// text, or with the turn's question for the client.
func (srv *server) runTurn(ctx context.Context, req *sdk.CallToolRequest, a host.Agent, in agentCall) *sdk.CallToolResult {
	var t *turn
	if state := req.Params.RequestState; state != "" {
		if t = srv.turns.take(state); t == nil {
			return errorResult("this call's question is no longer pending (it was answered or timed out); call the agent again")
		}
		t.setCall(req)
		t.waiting.answer <- answer{res: req.Params.InputResponses[t.waiting.key]}
	} else {
		if in.args == nil && strings.TrimSpace(in.prompt) == "" {
			return errorResult("the prompt is empty: give the agent a task or a question")
		}
		t = srv.start(ctx, req, a, in.prompt)
	}
	for {
		select {
		case q := <-t.asks:
			if !multiRoundTrip(req.Session) {
				q.answer <- send(ctx, req.Session, q)
				continue
			}
			t.waiting = q
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{q.key: q.params}, RequestState: srv.turns.put(t)}
		case res := <-t.done:
			return res
		case <-ctx.Done():
			t.cancel()
			return errorResult("the call was cancelled")
		}
	}
}

// start runs a new turn in the background: it may outlive this call.
func (srv *server) start(ctx context.Context, req *sdk.CallToolRequest, a host.Agent, prompt string) *turn {
	principal := principalOf(ctx, req)
	caps := &sdk.ClientCapabilities{}
	if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
		caps = p.Capabilities
	}
	t := &turn{agent: a.Name, caps: caps, asks: make(chan *question), done: make(chan *sdk.CallToolResult, 1)}
	// The first call's progress target is set before the turn starts: its
	// first update may come at once.
	t.setCall(req)
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancel = cancel
	tctx = host.WithPrincipal(tctx, principal)
	tctx = context.WithValue(tctx, turnKey{}, t)
	id := srv.ids.id(req.Session, a.Name, principal)
	opts := &agent.RunOptions{SessionID: id}
	if a.Store != nil {
		opts.Store = host.Sessions(tctx, a.Store)
	} else {
		opts.Session = srv.ids.memory(id)
	}
	go func() {
		defer cancel()
		t.done <- srv.turnResult(tctx, t, a, prompt, opts)
	}()
	return t
}

func (t *turn) setCall(req *sdk.CallToolRequest) {
	t.mu.Lock()
	t.call = req
	t.mu.Unlock()
}

// report tells the client how the turn goes: a progress notification when
// the current call asked for them (a progressToken), and a log message
// (notifications/message, logger "agcore") when the client set a level.
func (t *turn) report(ctx context.Context, level sdk.LoggingLevel, msg string) {
	t.mu.Lock()
	req := t.call
	t.n++
	n := t.n
	t.mu.Unlock()
	if token := req.Params.GetProgressToken(); token != nil {
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
	}
	_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: "agcore", Data: msg})
}

func (srv *server) turnResult(ctx context.Context, t *turn, a host.Agent, prompt string, opts *agent.RunOptions) *sdk.CallToolResult {
	t.report(ctx, "info", a.Name+": started")
	stream := a.Agent.RunStream(ctx, []llm.Message{llm.UserText(prompt)}, opts)
	var resp *agent.Response
	names := map[string]string{} // tool call id → tool name
	for u, err := range stream.Updates() {
		if err != nil {
			srv.logger.WarnContext(ctx, "mcp serve: the turn failed", "agent", a.Name, "error", err)
			t.report(ctx, "error", fmt.Sprintf("%s: failed: %v", a.Name, err))
			return errorResult(fmt.Sprintf("the agent %s failed: %v", a.Name, err))
		}
		switch u.Kind {
		case agent.UpdateToolCall:
			names[u.ToolCall.ID] = u.ToolCall.Name
			t.report(ctx, "info", fmt.Sprintf("%s: calling %s", a.Name, u.ToolCall.Name))
		case agent.UpdateToolResult:
			if u.ToolResult != nil {
				level, what := sdk.LoggingLevel("info"), "answered"
				if u.ToolResult.IsError {
					level, what = "warning", "failed"
				}
				t.report(ctx, level, fmt.Sprintf("%s: %s %s", a.Name, names[u.ToolResult.ToolCallID], what))
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
	t.report(ctx, "info", a.Name+": done")
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: resp.Text()}}}
}

var approvalSchema = json.RawMessage(`{"type":"object","properties":{"allow":{"type":"boolean","title":"Allow this call","default":false}},"required":["allow"]}`)

// decisionOf reads the client's answer to an approval question.
func decisionOf(v any) tool.Decision {
	if r, ok := v.(*sdk.ElicitResult); ok && r.Action == "accept" && r.Content["allow"] == true {
		return tool.Decision{Approved: true}
	}
	return tool.Decision{Reason: "the user did not allow it"}
}

// Approver is the tool.Approver of agents served over MCP: a call that
// needs approval is asked of the MCP client's user through elicitation
// (an elicitation input request in the result of the MCP call running the
// turn for a multi round-trip client, elicitation/create for an older
// one), and the turn goes on with the answer. A client that cannot ask its
// user (no elicitation capability), or a run that is not an MCP call's, is
// refused with a reason the model reads.
type Approver struct{}

// Approve implements tool.Approver.
func (Approver) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	t := turnFrom(ctx)
	if t == nil || t.caps.Elicitation == nil {
		return tool.Decision{Reason: "it needs the user's approval, and the MCP client cannot ask its user (no elicitation)"}, nil
	}
	args := string(call.Input)
	if len(args) > 300 {
		args = args[:300] + "…"
	}
	res, err := t.ask(ctx, "approve", &sdk.ElicitParams{
		Message:         fmt.Sprintf("%s wants to call %s %s. Allow it?", t.agent, call.Name, args),
		RequestedSchema: approvalSchema,
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Decision{}, ctx.Err()
		}
		return tool.Decision{Reason: "the user could not be asked: " + err.Error()}, nil
	}
	return decisionOf(res), nil
}

// Elicit asks the MCP client's user, as it is, what an MCP server the
// agent uses asks for during one of the turn's tool calls (its
// elicitation/create), and returns the user's answer. agcore mcp serve
// gives it to the MCP servers its agents use. Out of an MCP call, or for a
// client that cannot ask its user, the request is declined.
func (Approver) Elicit(ctx context.Context, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	t := turnFrom(ctx)
	if t == nil || t.caps.Elicitation == nil {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	p := *req
	res, err := t.ask(ctx, "elicit", &p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	r, ok := res.(*sdk.ElicitResult)
	if !ok {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	return r, nil
}
