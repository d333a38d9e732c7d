package serve

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

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

	s := &aguiSink{out: newSSE(w, h.flushEvery), agent: a.Name}
	defer s.out.close()
	ctx = approval.WithNotify(ctx, func(p approval.Request) {
		// An approval is an interrupt the client answers through
		// POST /v1/approvals/{id}; the run waits meanwhile.
		s.emit(map[string]any{"type": "CUSTOM", "name": "agcore.approval_required", "value": map[string]any{
			"id": p.ID, "toolCallId": p.CallID, "tool": p.Tool, "arguments": p.Input}})
	})
	state := in.State
	if len(state) == 0 || string(state) == "null" {
		state = json.RawMessage("{}")
	}
	s.emit(map[string]any{"type": "RUN_STARTED", "threadId": in.ThreadID, "runId": in.RunID})
	s.emit(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": state})
	s.emit(map[string]any{"type": "STEP_STARTED", "stepName": a.Name})
	resp, err := runTurn(ctx, a, msgs, opts, in.RunID, s)
	if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
		err = nil
	}
	if err == nil {
		err = resp.PersistErr()
	}
	s.closeText()
	if err != nil {
		e := turnError(ctx, err)
		if r.Context().Err() == nil {
			h.log.LogAttrs(ctx, slog.LevelError, "AG-UI run failed", attrs(a.Name, in.RunID, err)...)
		}
		s.emit(map[string]any{"type": "RUN_ERROR", "message": e.Message, "code": e.Code})
		return
	}
	s.emit(map[string]any{"type": "STEP_FINISHED", "stepName": s.agent})
	s.emit(map[string]any{"type": "RUN_FINISHED", "threadId": in.ThreadID, "runId": in.RunID})
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

// aguiSink writes a turn as AG-UI events.
type aguiSink struct {
	out   *sse
	agent string // the agent answering: its step is open

	mu      sync.Mutex // emit is called by the turn and by approval notices
	message string     // the open text message's id, "" for none
}

func (s *aguiSink) emit(ev map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.send("", ev)
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
		s.message = newID("msg_")
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
	return s.emit(map[string]any{"type": "TOOL_CALL_RESULT", "messageId": newID("msg_"), "toolCallId": m.ToolCallID, "content": m.Text(), "role": "tool"})
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
