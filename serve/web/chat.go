package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// item is one event of the chat stream and one entry of a stored
// transcript; Type says which fields are set (see the package doc).
type item struct {
	Type       string          `json:"type"`
	Session    string          `json:"session,omitempty"`
	Agent      string          `json:"agent,omitempty"`
	Model      string          `json:"model,omitempty"`
	Run        string          `json:"run,omitempty"`
	Text       string          `json:"text,omitempty"`
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Schema     json.RawMessage `json:"schema,omitempty"` // an approval asking for a form (mcp_elicitation)
	ToolCallID string          `json:"tool_call_id,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// Usage: the model call's usage so far (usage), the turn's (finish).
	Usage        *llm.Usage       `json:"usage,omitempty"`
	CostUSD      *float64         `json:"cost_usd,omitempty"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	// The session's totals after the turn (finish, when stored).
	SessionUsage *llm.Usage `json:"session_usage,omitempty"`
	SessionCost  *float64   `json:"session_cost_usd,omitempty"`
	SessionTurns int        `json:"session_turns,omitempty"`
	// Budget is what is left of the turn's spending limits (finish): the
	// run's, the session's, the principal's quota.
	Budget  *budget.Remaining `json:"budget,omitempty"`
	Message string            `json:"message,omitempty"` // error
	// From is the agent handing over (handoff; Agent takes over).
	From string `json:"from,omitempty"`
	// Sub is a sub-agent's event (sub_agent: the agent Agent, run by the
	// tool call ToolCallID), in the shapes of the stream's own.
	Sub *item `json:"sub,omitempty"`
	// Turn is the number of the turn a user item begins (a stored
	// transcript's, when its turns are known): the page forks the session
	// before it to edit the message or regenerate its answer.
	Turn int `json:"turn,omitempty"`
}

// transcript turns stored messages into the items the page renders, the
// same shapes as the live stream's events plus "user". spans are the
// agents that answered (session.Agents): where the answering agent
// changes within a turn, a handoff item says so.
func transcript(msgs []llm.Message, spans []session.AgentSpan) []item {
	var out []item
	who := ""
	// The turn each user message begins, when every turn begins with one
	// (session.Fork's condition for a fork before it).
	starts := map[int]int{}
	for k, i := range session.TurnStarts(msgs) {
		starts[i] = k + 1
	}
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			who = ""
		} else if a := session.AgentAt(spans, i); a != who {
			if who != "" {
				out = append(out, item{Type: "handoff", From: who, Agent: a})
			}
			who = a
		}
		switch m.Role {
		case llm.RoleSystem:
			continue
		case llm.RoleTool:
			out = append(out, toolResult(m))
			continue
		}
		kind := "text"
		turn := 0
		if m.Role == llm.RoleUser {
			kind, turn = "user", starts[i]
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case llm.Text:
				out = append(out, item{Type: kind, Text: b.Text, Turn: turn})
				turn = 0 // on the message's first text only
			case llm.Thinking:
				out = append(out, item{Type: "thinking", Text: b.Text})
			case llm.ToolUse:
				out = append(out, toolCall(b))
			case llm.ToolResult: // a nested result, as some histories hold them
				out = append(out, toolResult(llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID, Content: b.Content, IsError: b.IsError}))
			case llm.RedactedThinking:
			default:
				out = append(out, item{Type: kind, Text: "[" + b.BlockType() + "]"}) // an image, a file: named, not shown
			}
		}
	}
	return out
}

func toolCall(c llm.ToolUse) item {
	in := c.InputOrEmpty()
	if !json.Valid(in) {
		in, _ = json.Marshal(string(in))
	}
	return item{Type: "tool_call", ID: c.ID, Name: c.Name, Input: in}
}

func toolResult(m llm.Message) item {
	text := m.Text()
	if text == "" && len(m.Content) > 0 {
		kinds := make([]string, len(m.Content))
		for i, b := range m.Content {
			kinds[i] = "[" + b.BlockType() + "]"
		}
		text = strings.Join(kinds, " ")
	}
	return item{Type: "tool_result", ToolCallID: m.ToolCallID, Text: text, IsError: m.IsError}
}

// chatRequest is the body of POST /api/chat.
type chatRequest struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Message string `json:"message"`
}

func (h *handler) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !readJSON(w, r, &req) {
		return
	}
	a, ok := h.agentOf(w, req.Agent)
	if !ok {
		return
	}
	if strings.TrimSpace(req.Message) == "" {
		writeError(w, http.StatusBadRequest, `"message" is empty`)
		return
	}
	// The principal's view of the agent's sessions: the turn loads and
	// appends through it. A session id names one of the principal's
	// sessions (404 for any other, whether it exists or not); a new chat
	// gets a new id.
	sessions := host.Sessions(r.Context(), a.Store)
	sid := req.Session
	switch {
	case sid == "":
		sid = session.NewID()
	case session.ValidateID(sid) != nil:
		writeError(w, http.StatusBadRequest, "invalid session id")
		return
	case sessions != nil:
		if _, err := sessions.LoadView(r.Context(), sid); err != nil {
			h.storeError(w, r, err)
			return
		}
	}
	run := session.NewID() // names this turn's approvals: "RUN/CALL"
	if recs, ok := session.RecordsOf(a.Store); ok && a.Store != nil && h.opts.Remote != nil {
		h.chatRemote(w, r, a, recs, sid, run, req.Message)
		return
	}

	// The turn's context keeps the request's values, not its end: with
	// records in the store the turn outlives the page (it stops when the
	// server drains or times it out, or through POST
	// /api/sessions/{id}/cancel); without them a page that goes away
	// cancels it, as nobody could reattach.
	tctx, cancelTurn := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancelTurn(nil)
	lr := h.startRun(r.Context(), a, principal(r), sid, run, cancelTurn)
	watched := make(chan struct{})
	defer close(watched)
	go func() {
		select {
		case <-r.Context().Done():
			if cause := context.Cause(r.Context()); lr == nil || !errors.Is(cause, context.Canceled) {
				cancelTurn(cause)
			}
		case <-watched:
		}
	}()
	if lr != nil {
		go lr.keep(watched)
	}

	ctx := approval.WithOwner(tctx, approval.Owner{Agent: a.Name, Session: sid, Run: run, Principal: principal(r)})
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	q := newQueue()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		h.write(r.Context(), w, q)
	}()
	defer func() {
		q.close()
		<-writerDone
	}()
	// Every event goes to the page and to the turn's log (for a page that
	// reattaches: it starts with the user's message, which the page that
	// sent it shows itself).
	push := func(it item) {
		q.push(it)
		lr.emit(it)
	}
	ctx = approval.WithNotify(ctx, func(p approval.Request) {
		ap := approvalOf(p)
		push(item{Type: "approval", ID: ap.ID, ToolCallID: ap.CallID, Name: ap.Tool, Input: ap.Input, Schema: ap.Schema})
	})

	model := modelName(a)
	lr.emit(item{Type: "user", Text: req.Message})
	push(item{Type: "session", Session: sid, Agent: a.Name, Model: model, Run: run})
	input := []llm.Message{llm.UserText(req.Message)}
	ctx, end := host.BeginTurn(ctx, host.Turn{Agent: a.Name, Session: sid, ID: run, Input: input})
	defer end()
	// The turn's last event ends its log: the finish, or the error after
	// it (a spending limit that stopped a stored turn), or the error.
	var final item
	var finished *item
	stream := a.Agent.RunStream(ctx, input, &agent.RunOptions{SessionID: sid, Store: sessions})
	for u, err := range stream.Updates() {
		if err != nil {
			if finished != nil {
				push(*finished)
				finished = nil
			}
			if tctx.Err() != nil {
				err = context.Cause(tctx) // stopped, drained, timed out: say which
			}
			final = item{Type: "error", Message: errorText(err)}
			break
		}
		if u.Kind == agent.UpdateFinish {
			if finished != nil {
				push(*finished)
			}
			fin := h.finish(tctx, sessions, u.Response)
			finished = &fin
		} else if it, ok := itemOf(u); ok {
			push(it)
		}
	}
	switch {
	case final.Type != "":
	case finished != nil:
		final = *finished
	default:
		final = item{Type: "error", Message: errorText(context.Cause(tctx))}
	}
	q.push(final)
	h.endRun(lr, final)
}

// itemOf is the page's event of one of a turn's updates; false for the
// finish (its event is built once the turn is stored) and for what the
// page does not show.
func itemOf(u agent.Update) (item, bool) {
	switch u.Kind {
	case agent.UpdateText, agent.UpdateThinking:
		return item{Type: u.Kind.String(), Text: u.Text}, true
	case agent.UpdateToolCall:
		return toolCall(u.ToolCall), true
	case agent.UpdateToolResult:
		return toolResult(*u.ToolResult), true
	case agent.UpdateUsage:
		usage := *u.Usage
		return item{Type: "usage", Usage: &usage}, true
	case agent.UpdateHandoff:
		return item{Type: "handoff", From: u.From, Agent: u.Agent}, true
	case agent.UpdateSubAgent:
		return subItem(u)
	}
	return item{}, false
}

// subItem is the sub_agent event of a sub-agent's update: its text,
// thinking, tool calls and results, and its own sub-agents' (nested);
// false for what the page does not show (usage, the finish).
func subItem(u agent.Update) (item, bool) {
	var sub item
	s := u.Sub
	switch s.Kind {
	case agent.UpdateText, agent.UpdateThinking:
		sub = item{Type: s.Kind.String(), Text: s.Text}
	case agent.UpdateToolCall:
		sub = toolCall(s.ToolCall)
	case agent.UpdateToolResult:
		sub = toolResult(*s.ToolResult)
	case agent.UpdateHandoff:
		sub = item{Type: "handoff", From: s.From, Agent: s.Agent}
	case agent.UpdateSubAgent:
		nested, ok := subItem(*s)
		if !ok {
			return item{}, false
		}
		sub = nested
	default:
		return item{}, false
	}
	return item{Type: "sub_agent", Agent: s.Agent, ToolCallID: u.ToolCall.ID, Sub: &sub}, true
}

// finish builds the finish event once the turn is stored.
func (h *handler) finish(ctx context.Context, store session.Store, resp *agent.Response) item {
	ev := finishItem(resp)
	if err := resp.PersistErr(); err != nil {
		h.log.ErrorContext(ctx, "web: the turn was not stored", "session", resp.SessionID, "err", err)
		return ev
	}
	sessionTotals(ctx, store, &ev)
	return ev
}

// finishItem is the finish event of a turn's response, without the
// session's totals (sessionTotals); with a message when the turn could
// not be stored.
func finishItem(resp *agent.Response) item {
	usage := resp.Usage
	ev := item{Type: "finish", Session: resp.SessionID, Model: resp.Model, Usage: &usage, FinishReason: resp.FinishReason, Budget: resp.Budget}
	if resp.CostKnown {
		cost := resp.CostUSD
		ev.CostUSD = &cost
	}
	if resp.PersistErr() != nil {
		ev.Message = "the turn was not stored"
	}
	return ev
}

// sessionTotals sets the session's totals on a finish event of a stored
// turn, as store has them (left out when it cannot be read).
func sessionTotals(ctx context.Context, store session.Store, ev *item) {
	if store == nil || ev.Session == "" || ev.Message != "" {
		return
	}
	if s, err := store.LoadView(ctx, ev.Session); err == nil {
		su, sc := s.Usage, s.CostUSD
		ev.SessionUsage, ev.SessionCost, ev.SessionTurns = &su, &sc, s.Turns
	}
}

// errorText is what the page is told of a failed turn: the error's text,
// which agcore's adapters build from status and provider bodies only
// (never a key).
func errorText(err error) string {
	if errors.Is(err, errStopped) {
		// The same words as the page's own when its Stop aborts the
		// stream first: which of the two ends the stream is a race.
		return "stopped; the turn was not stored"
	}
	if errors.Is(err, context.Canceled) || err == nil {
		return "the turn was cancelled"
	}
	return err.Error()
}

// write sends the queue's events to the client until the queue is closed
// and drained, with a heartbeat comment when idle.
func (h *handler) write(ctx context.Context, w http.ResponseWriter, q *queue) {
	rc := http.NewResponseController(w)
	var tick <-chan time.Time
	if h.opts.Heartbeat > 0 {
		t := time.NewTicker(h.opts.Heartbeat)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte
	broken := false
	for {
		items, closed := q.take()
		if !broken && len(items) > 0 {
			buf = buf[:0]
			for _, it := range items {
				data, err := json.Marshal(it)
				if err != nil {
					continue
				}
				buf = append(buf, "event: "...)
				buf = append(buf, it.Type...)
				buf = append(buf, "\ndata: "...)
				buf = append(buf, data...)
				buf = append(buf, "\n\n"...)
			}
			if _, err := w.Write(buf); err != nil {
				broken = true // the client is gone; the run ends with r's context
			} else {
				_ = rc.Flush() // unsupported only on writers that buffer nothing
			}
		}
		if closed {
			return
		}
		select {
		case <-q.wake:
		case <-tick:
			if !broken {
				if _, err := w.Write([]byte(": ping\n\n")); err != nil {
					broken = true
				} else {
					_ = rc.Flush()
				}
			}
		case <-ctx.Done():
			// keep draining until the handler closes the queue
			<-q.wake
		}
	}
}

// queue is an unbounded event queue: push never blocks (the approval
// notification must not), one writer takes.
type queue struct {
	mu     sync.Mutex
	items  []item
	closed bool
	wake   chan struct{} // one pending signal
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) push(it item) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, it)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take returns the queued items and whether the queue is closed.
func (q *queue) take() ([]item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items, q.closed
}
