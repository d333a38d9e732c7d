package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// aguiNamespace holds one record per AG-UI run in progress,
// PRINCIPAL/RUN, living as long as the run's lease.
const aguiNamespace = "agcore.agui.runs"

// validRunID reports whether an AG-UI run id can name a run's log.
func validRunID(id string) bool {
	return id != "" && len(id) <= 200 && !strings.ContainsAny(id, "/\x00")
}

// aguiRun serves POST (or GET) /agui/{agent}/runs/{run}[?after=N]: the
// events of a run of the principal's, from its first (RUN_STARTED) or
// after event N, then as they come, to its end, on any process over the
// store, while it runs and after it ended (within the log's retention).
// A POST ignores its body, so an AG-UI client (HttpAgent) pointed at this
// URL reconnects to the run. A run whose process was lost ends with
// RUN_ERROR.
func (h *Handler) aguiRun(w http.ResponseWriter, r *http.Request) {
	recs, run, ok := h.aguiRunOf(w, r)
	if !ok {
		return
	}
	after := int64(-1)
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			writeError(w, invalid("after", "after must be an event number"))
			return
		}
		after = n
	}
	principal, _ := host.PrincipalFrom(r.Context())
	key := principal + "/" + run
	log := h.eventLog(recs)
	name := "agui." + run
	// The principal's run: its lease record, or (it ended) its log. The
	// log's key holds no principal, so an ended run is the principal's
	// only if its first event says so (RUN_STARTED carries no owner):
	// the lease record is checked while it runs; after it, a log whose
	// run another principal started is refused by its owner mark.
	if _, err := recs.GetRecord(r.Context(), aguiNamespace, key); err != nil {
		evs, _, rerr := log.Read(r.Context(), name, -1)
		if rerr != nil || len(evs) == 0 || !ownedBy(evs[0], principal) {
			writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "run_not_found", Message: "no such run"})
			return
		}
	}
	out := newSSE(w, h.flushEvery)
	defer out.close()
	h.followAGUI(r.Context(), out, log, recs, name, key, after)
}

// followAGUI writes to out the events of run name (lease record key)
// after event after, to its end. A run whose lease record is gone for
// endedGrace while its log has no final event was lost: its log ends
// with RUN_ERROR (replica_lost). A remote run whose lease is there but
// whose run ended without its end (the Handler's RemoteWatcher says so,
// asked once the log was quiet for RemoteCheckAfter) ends with RUN_ERROR
// (run_ended).
func (h *Handler) followAGUI(ctx context.Context, out *sse, log *runlog.Log, recs session.Records, name, key string, after int64) {
	var (
		gone  time.Time
		quiet idleSince
	)
	idle := func(ctx context.Context, last int64) error {
		quietFor := quiet.idle(last, time.Now())
		if log.Running(name) {
			return nil
		}
		if lease, err := recs.GetRecord(ctx, aguiNamespace, key); err == nil || !errors.Is(err, session.ErrNotFound) {
			gone = time.Time{}
			if err == nil && quietFor >= RemoteCheckAfter {
				// A remote run quiet for a while: its run may have
				// ended without its end (remoteended.go).
				h.endRemoteAGUI(ctx, recs, lease, name, key, last)
			}
			return nil
		}
		if gone.IsZero() {
			gone = time.Now()
			return nil
		}
		if time.Since(gone) < endedGrace {
			return nil
		}
		data, _ := json.Marshal(map[string]any{"type": "RUN_ERROR", "message": "the server running the run was lost", "code": "replica_lost"})
		return log.AppendFinal(ctx, name, runlog.Event{Seq: last + 1, Type: "RUN_ERROR", Data: data})
	}
	for ev, err := range log.Follow(ctx, name, after, idle) {
		if err != nil {
			return
		}
		if out.write("", ev.Data) != nil {
			return
		}
	}
}

// aguiRunOf reads the agent and run of a request to /agui/{agent}/runs/{run}:
// the agent's records and the run id, or (false) the error answered: the
// agent is unknown, its store keeps no runs, or the id cannot name one.
func (h *Handler) aguiRunOf(w http.ResponseWriter, r *http.Request) (session.Records, string, bool) {
	a, apiErr := h.agent(r.PathValue("agent"))
	if apiErr != nil {
		writeError(w, apiErr)
		return nil, "", false
	}
	run := r.PathValue("run")
	recs, ok := session.RecordsOf(a.Store)
	if !ok || a.Store == nil || !validRunID(run) {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "run_not_found", Message: "no such run"})
		return nil, "", false
	}
	return recs, run, true
}

// ownedBy reports whether a run's first event was written for principal.
func ownedBy(ev runlog.Event, principal string) bool {
	var v struct {
		Owner string `json:"agcoreOwner"`
	}
	return json.Unmarshal(ev.Data, &v) == nil && v.Owner == principal
}

// aguiInput is AG-UI's RunAgentInput, the part the endpoint reads.
type aguiInput struct {
	ThreadID string          `json:"threadId"`
	RunID    string          `json:"runId"`
	State    json.RawMessage `json:"state"`
	Messages []aguiMessage   `json:"messages"`
	Tools    []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

type aguiMessage struct {
	ID         string `json:"id"`
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"toolCallId"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"toolCalls"`
}

func (m aguiMessage) text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if part, ok := p.(map[string]any); ok {
				if s, ok := part["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// agui serves POST /agui/{agent}: one run of the agent in AG-UI's event
// protocol (see doc.go).
func (h *Handler) agui(w http.ResponseWriter, r *http.Request) {
	var in aguiInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, decodeError(err))
		return
	}
	a, apiErr := h.agent(r.PathValue("agent"))
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if in.ThreadID == "" {
		in.ThreadID = newID("thread_")
	}
	if in.RunID == "" {
		in.RunID = newID("run_")
	}
	ctx, end, ok := h.beginTurn(w, r)
	if !ok {
		writeError(w, draining())
		return
	}
	defer end()
	opts := &agent.RunOptions{}
	for _, t := range in.Tools {
		opts.Declared = append(opts.Declared, llm.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	// The thread is a session of the principal's (when the agent keeps
	// sessions): a stored thread takes the messages after its last
	// assistant message (the client sends the whole history each run).
	stored := false
	if a.Store != nil {
		sid := host.SessionName(ctx, in.ThreadID)
		if session.ValidateID(sid) != nil {
			writeError(w, invalid("threadId", "a thread id is 1 to 128 of A-Z a-z 0-9 . _ -"))
			return
		}
		sessions := host.Sessions(ctx, a.Store)
		if s, err := sessions.LoadView(ctx, sid); err == nil && s.Turns > 0 {
			stored = true
		} else if err != nil && !errors.Is(err, session.ErrNotFound) {
			writeError(w, storeError())
			return
		}
		opts.SessionID, opts.Store = sid, sessions
	}
	msgs, instr := aguiMessages(in.Messages, stored)
	if len(msgs) == 0 {
		writeError(w, invalid("messages", "no message to answer"))
		return
	}
	opts.Instructions = instr

	state := in.State
	if len(state) == 0 || string(state) == "null" {
		state = json.RawMessage("{}")
	}
	if rr, ok := h.opts.Runner.(RemoteRunner); ok && remoteable(opts) && validRunID(in.RunID) {
		if recs, ok := session.RecordsOf(a.Store); ok && a.Store != nil {
			// agcore serve --temporal: the run goes on elsewhere
			// (remote_agui.go).
			h.aguiRemote(w, r, rr, recs, a, in, state, msgs, opts)
			return
		}
	}

	s := &aguiSink{out: newSSE(w, h.flushEvery), agent: a.Name, threadID: in.ThreadID, runID: in.RunID}
	defer s.out.close()
	// With records in the store the run outlives its client: its events
	// go to a log too, and a lease says it runs (reconnect: aguiRun).
	if recs, ok := session.RecordsOf(a.Store); ok && a.Store != nil && validRunID(in.RunID) {
		principal, _ := host.PrincipalFrom(ctx)
		key := principal + "/" + in.RunID
		if lw, err := h.eventLog(recs).Writer("agui." + in.RunID); err == nil && session.CheckRecord(aguiNamespace, key) == nil {
			if _, err := recs.PutRecord(ctx, aguiNamespace, session.Record{Key: key, Value: []byte(a.Name), Expires: time.Now().Add(slotLease)}); err == nil {
				s.log = lw
				tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
				defer cancel(nil)
				done := make(chan struct{})
				defer close(done)
				reqCtx := ctx
				go func() {
					ended := reqCtx.Done()
					t := time.NewTicker(slotLease / 3)
					defer t.Stop()
					defer func() {
						dctx, c := context.WithTimeout(context.Background(), 10*time.Second)
						_ = recs.DeleteRecord(dctx, aguiNamespace, key, 0)
						c()
					}()
					for {
						select {
						case <-done:
							return
						case <-ended:
							// A client that goes away leaves the run; the server's
							// drain and the turn timeout end it.
							if cause := context.Cause(reqCtx); !errors.Is(cause, context.Canceled) {
								cancel(cause)
							}
							ended = nil
						case <-t.C:
							rctx, c := context.WithTimeout(context.Background(), slotLease/3)
							_, _ = recs.PutRecord(rctx, aguiNamespace, session.Record{Key: key, Value: []byte(a.Name), Expires: time.Now().Add(slotLease)})
							c()
						}
					}
				}()
				// POST /agui/{agent}/runs/{run}/cancel, on any process.
				go watchAGUICancel(tctx, recs, key, func() { cancel(errAGUICancelled) })
				ctx = tctx
			} else {
				lw.Abandon()
			}
		}
	}
	ctx = approval.WithNotify(ctx, func(p approval.Request) {
		// An approval is an interrupt the client answers through
		// POST /v1/approvals/{id}; the run waits meanwhile.
		_ = s.approvalRequired(p.ID, p.CallID, p.Tool, p.Input)
	})
	principal, _ := host.PrincipalFrom(ctx)
	s.start(principal, state)
	resp, err := runTurn(ctx, a, msgs, opts, in.RunID, s)
	if failed := s.end(ctx, resp, err, errors.Is(context.Cause(ctx), errAGUICancelled)); failed != nil && r.Context().Err() == nil {
		h.log.LogAttrs(ctx, slog.LevelError, "AG-UI run failed", attrs(a.Name, in.RunID, failed)...)
	}
}

// start emits a run's first events: RUN_STARTED (with the principal's
// owner mark), STATE_SNAPSHOT, STEP_STARTED of the agent.
func (s *aguiSink) start(principal string, state json.RawMessage) {
	s.emit(map[string]any{"type": "RUN_STARTED", "threadId": s.threadID, "runId": s.runID, "agcoreOwner": principal})
	s.emit(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": state})
	s.emit(map[string]any{"type": "STEP_STARTED", "stepName": s.agent})
}

// end emits a run's last events for its outcome (resp and err as runTurn
// returned them; ctx the turn's, which tells a timeout): STEP_FINISHED and
// RUN_FINISHED, or RUN_ERROR (code "cancelled" when cancelled). It returns
// the turn's error when it failed.
func (s *aguiSink) end(ctx context.Context, resp *agent.Response, err error, cancelled bool) (failed error) {
	if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
		err = nil
	}
	if err == nil && resp == nil {
		err = errors.New("serve: the run ended without a response")
	}
	if err == nil {
		err = resp.PersistErr()
	}
	_ = s.closeText()
	if err != nil {
		e := turnError(ctx, err)
		if cancelled {
			e = &apiError{Code: "cancelled", Message: "the run was cancelled"}
		}
		s.emit(map[string]any{"type": "RUN_ERROR", "message": e.Message, "code": e.Code})
		return err
	}
	s.emit(map[string]any{"type": "STEP_FINISHED", "stepName": s.agent})
	s.emit(map[string]any{"type": "RUN_FINISHED", "threadId": s.threadID, "runId": s.runID})
	return nil
}

// aguiMessages converts the run's messages: all of them for a new thread,
// those after the last assistant message for a stored one; system and
// developer messages become instructions.
func aguiMessages(in []aguiMessage, stored bool) ([]llm.Message, string) {
	if stored {
		for i := len(in) - 1; i >= 0; i-- {
			if in[i].Role == "assistant" {
				in = in[i+1:]
				break
			}
		}
	}
	var out []llm.Message
	var instr []string
	for _, m := range in {
		switch m.Role {
		case "system", "developer":
			instr = append(instr, m.text())
		case "user":
			out = append(out, llm.UserText(m.text()))
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			if t := m.text(); t != "" {
				msg.Content = append(msg.Content, llm.Text{Text: t})
			}
			for _, c := range m.ToolCalls {
				msg.Content = append(msg.Content, toolUse(c.ID, c.Function.Name, c.Function.Arguments))
			}
			out = append(out, msg)
		case "tool":
			out = append(out, llm.ToolResultText(m.ToolCallID, m.text(), false))
		}
	}
	return out, strings.Join(instr, "\n\n")
}

// aguiSink writes a turn as AG-UI events: to its client and, when the
// run has a log (it outlives its client), to the log.
type aguiSink struct {
	out   *sse
	log   *runlog.Writer
	agent string // the agent answering: its step is open

	threadID, runID string
	// collect, when not nil, takes every event instead of out and log
	// (AGUIEvents: a run translated elsewhere); ids, when not nil, makes
	// the message ids (newID otherwise).
	collect func(runlog.Event)
	ids     func(prefix string) string

	mu      sync.Mutex // emit is called by the turn and by approval notices
	seq     int64
	gone    bool   // the client went away (a logged run goes on)
	message string // the open text message's id, "" for none
}

// approvalRequired emits the interrupt of a call that waits for a
// decision: the CUSTOM event agcore.approval_required, id being what
// POST /v1/approvals/{id} decides.
func (s *aguiSink) approvalRequired(id, callID, tool string, input json.RawMessage) error {
	return s.emit(map[string]any{"type": "CUSTOM", "name": "agcore.approval_required", "value": map[string]any{
		"id": id, "toolCallId": callID, "tool": tool, "arguments": input}})
}

func (s *aguiSink) emit(ev map[string]any) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	typ, _ := ev["type"].(string)
	if s.collect != nil {
		s.collect(runlog.Event{Seq: s.seq, Type: typ, Data: data})
		s.seq++
		return nil
	}
	if s.log != nil {
		e := runlog.Event{Seq: s.seq, Type: typ, Data: data}
		s.seq++
		if typ == "RUN_FINISHED" || typ == "RUN_ERROR" {
			ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
			_ = s.log.Close(ctx, e)
			c()
		} else {
			s.log.Append(e)
		}
	}
	if s.gone {
		return nil
	}
	if err := s.out.write("", data); err != nil {
		if s.log == nil {
			return err // nobody can reconnect: the run ends with its client
		}
		s.gone = true
	}
	return nil
}

func (s *aguiSink) newID(prefix string) string {
	if s.ids != nil {
		return s.ids(prefix)
	}
	return newID(prefix)
}

func (s *aguiSink) closeText() error {
	if s.message == "" {
		return nil
	}
	id := s.message
	s.message = ""
	return s.emit(map[string]any{"type": "TEXT_MESSAGE_END", "messageId": id})
}

func (s *aguiSink) text(delta string) error {
	if delta == "" {
		return nil
	}
	if s.message == "" {
		s.message = s.newID("msg_")
		if err := s.emit(map[string]any{"type": "TEXT_MESSAGE_START", "messageId": s.message, "role": "assistant"}); err != nil {
			return err
		}
	}
	return s.emit(map[string]any{"type": "TEXT_MESSAGE_CONTENT", "messageId": s.message, "delta": delta})
}

func (s *aguiSink) thinking(string) error { return nil } // not shown

func (s *aguiSink) toolCall(call llm.ToolUse, _ bool) error {
	if err := s.closeText(); err != nil {
		return err
	}
	if err := s.emit(map[string]any{"type": "TOOL_CALL_START", "toolCallId": call.ID, "toolCallName": call.Name}); err != nil {
		return err
	}
	if args := string(call.InputOrEmpty()); args != "" {
		if err := s.emit(map[string]any{"type": "TOOL_CALL_ARGS", "toolCallId": call.ID, "delta": args}); err != nil {
			return err
		}
	}
	return s.emit(map[string]any{"type": "TOOL_CALL_END", "toolCallId": call.ID})
}

func (s *aguiSink) toolResult(m *llm.Message) error {
	if err := s.closeText(); err != nil {
		return err
	}
	return s.emit(map[string]any{"type": "TOOL_CALL_RESULT", "messageId": s.newID("msg_"), "toolCallId": m.ToolCallID, "content": m.Text(), "role": "tool"})
}

// handoff ends the step of the agent handing over and starts the next's.
func (s *aguiSink) handoff(from, to string) error {
	if err := s.closeText(); err != nil {
		return err
	}
	if err := s.emit(map[string]any{"type": "STEP_FINISHED", "stepName": s.agent}); err != nil {
		return err
	}
	s.agent = to
	return s.emit(map[string]any{"type": "STEP_STARTED", "stepName": to})
}

func (s *aguiSink) subAgent(agent.Update) error { return nil }
