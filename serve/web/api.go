package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// agentJSON describes one agent in GET /api/agents.
type agentJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Model       string `json:"model,omitempty"`
	Sessions    bool   `json:"sessions"` // whether the agent keeps sessions
	Default     bool   `json:"default,omitempty"`
}

func (h *handler) agents(w http.ResponseWriter, r *http.Request) {
	all := h.set.All()
	out := make([]agentJSON, len(all))
	for i, a := range all {
		out[i] = agentJSON{Name: a.Name, Description: a.Description, Model: modelName(a), Sessions: a.Store != nil, Default: i == 0}
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func modelName(a host.Agent) string {
	if a.Model != "" {
		return a.Model
	}
	return a.Agent.Info().Name
}

// agentOf returns the agent the request's "agent" query parameter names
// (the default when it is empty), answering 404 itself when there is none.
func (h *handler) agentOf(w http.ResponseWriter, name string) (host.Agent, bool) {
	if name == "" {
		return h.set.Default(), true
	}
	a, ok := h.set.Get(name)
	if !ok {
		writeError(w, http.StatusNotFound, "no agent named "+quote(name))
	}
	return a, ok
}

// sessionJSON summarizes one session in GET /api/sessions and
// GET /api/sessions/{id}.
type sessionJSON struct {
	ID        string    `json:"id"`
	Agent     string    `json:"agent"`
	Title     string    `json:"title"`
	Model     string    `json:"model,omitempty"`
	Turns     int       `json:"turns"`
	Messages  int       `json:"messages"`
	Usage     llm.Usage `json:"usage"`
	Tokens    int       `json:"tokens"`
	CostUSD   float64   `json:"cost_usd"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Items is the transcript (GET /api/sessions/{id} only).
	Items []item `json:"items,omitempty"`
}

// summary is the summary of session s of agent a. Model is the session's
// own (the model that answered its last turn), empty when the store kept
// none.
func summary(a host.Agent, s *session.Session) sessionJSON {
	t := s.Title
	if t == "" && s.Base == 0 {
		t = session.Title(s.Messages)
	}
	return sessionJSON{
		ID: s.ID, Agent: a.Name, Title: t, Model: s.Model,
		Turns: s.Turns, Messages: s.Base + len(s.Messages), Usage: s.Usage, Tokens: s.Usage.Total(),
		CostUSD: s.CostUSD, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
}

// infoSummary is the summary of a listed session, from its metadata alone.
func infoSummary(a host.Agent, i session.Info) sessionJSON {
	return sessionJSON{
		ID: i.ID, Agent: a.Name, Title: i.Title, Model: i.Model,
		Turns: i.Turns, Messages: i.Messages, Usage: i.Usage, Tokens: i.Usage.Total(),
		CostUSD: i.CostUSD, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt,
	}
}

// sessions lists the principal's sessions, from the store's metadata (no
// session is loaded).
func (h *handler) sessions(w http.ResponseWriter, r *http.Request) {
	a, ok := h.agentOf(w, r.URL.Query().Get("agent"))
	if !ok {
		return
	}
	out := []sessionJSON{}
	if a.Store == nil {
		writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
		return
	}
	page, err := host.Sessions(r.Context(), a.Store).List(r.Context(), session.ListOptions{Limit: h.opts.ListLimit, Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	for _, info := range page.Sessions {
		out = append(out, infoSummary(a, info))
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out, "next": page.Next})
}

// loadFor resolves the agent, its sessions as the request's principal sees
// them (host.Sessions) and the session id of a /api/sessions/{id} request,
// answering errors itself.
func (h *handler) loadFor(w http.ResponseWriter, r *http.Request) (host.Agent, session.Store, string, bool) {
	a, ok := h.agentOf(w, r.URL.Query().Get("agent"))
	if !ok {
		return a, nil, "", false
	}
	id := r.PathValue("id")
	if err := session.ValidateID(id); err != nil {
		writeError(w, http.StatusBadRequest, "invalid session id")
		return a, nil, "", false
	}
	if a.Store == nil {
		writeError(w, http.StatusNotFound, "agent "+quote(a.Name)+" keeps no sessions")
		return a, nil, "", false
	}
	return a, host.Sessions(r.Context(), a.Store), id, true
}

func (h *handler) getSession(w http.ResponseWriter, r *http.Request) {
	a, sessions, id, ok := h.loadFor(w, r)
	if !ok {
		return
	}
	s, err := sessions.Load(r.Context(), id)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	out := summary(a, s)
	out.Items = transcript(s.Messages, session.Agents(s))
	if s.Base != 0 || len(session.TurnStarts(s.Messages)) != s.Turns {
		// Turns that do not each begin with a user message: none can be
		// forked before (session.Fork), so none is numbered.
		for i := range out.Items {
			out.Items[i].Turn = 0
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// forkSession serves POST /api/sessions/{id}/fork, body {"turns": N}: a
// new session of the principal's holding the first N turns of session id
// (session.Fork), which is unchanged; 201 {"session": NEW, "turns": N}.
// The page forks before a turn to edit its message or regenerate its
// answer, then sends the message on the fork. N is 1 to the session's
// turns (404 for a session that is not the principal's, 409 for a history
// that cannot be cut there).
func (h *handler) forkSession(w http.ResponseWriter, r *http.Request) {
	_, sessions, id, ok := h.loadFor(w, r)
	if !ok {
		return
	}
	var body struct {
		Turns int `json:"turns"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Turns < 1 {
		writeError(w, http.StatusBadRequest, `"turns" must be 1 or more (a fork before the first turn is a new chat)`)
		return
	}
	branch := session.NewID()
	_, err := session.Fork(r.Context(), sessions, id, branch, body.Turns)
	if errors.Is(err, session.ErrNoTurn) {
		writeError(w, http.StatusConflict, "the session cannot be forked after turn "+strconv.Itoa(body.Turns)+": "+err.Error())
		return
	}
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"session": branch, "turns": body.Turns})
}

func (h *handler) deleteSession(w http.ResponseWriter, r *http.Request) {
	_, sessions, id, ok := h.loadFor(w, r)
	if !ok {
		return
	}
	if err := sessions.Delete(r.Context(), id); err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": id})
}

func (h *handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, session.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such session")
	case errors.Is(err, session.ErrInvalidID):
		writeError(w, http.StatusBadRequest, "invalid session id")
	case errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
	default:
		h.log.ErrorContext(r.Context(), "web: session store", "err", err)
		writeError(w, http.StatusInternalServerError, "the session store failed")
	}
}

// approvalJSON is one call waiting for a decision (GET /api/approvals and
// the chat stream's approval event).
type approvalJSON struct {
	ID     string          `json:"id"`
	CallID string          `json:"tool_call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	// Schema, for an MCP server's request for input (tool
	// mcp_elicitation), is the requested schema: the form to fill in.
	Schema  json.RawMessage `json:"schema,omitempty"`
	Agent   string          `json:"agent,omitempty"`
	Session string          `json:"session,omitempty"`
	Since   time.Time       `json:"since"`
}

func approvalOf(req approval.Request) approvalJSON {
	in := req.Input
	if len(in) == 0 || !json.Valid(in) {
		in, _ = json.Marshal(string(in))
	}
	a := approvalJSON{ID: req.ID, CallID: req.CallID, Tool: req.Tool, Input: in,
		Agent: req.Owner.Agent, Session: req.Owner.Session, Since: req.Since}
	if req.Tool == mcp.ElicitationTool {
		a.Schema, _ = mcp.ElicitationSchema(req.Input)
	}
	return a
}

func principal(r *http.Request) string {
	p, _ := host.PrincipalFrom(r.Context())
	return p
}

func (h *handler) approvals(w http.ResponseWriter, r *http.Request) {
	out := []approvalJSON{}
	if h.broker != nil {
		who := principal(r)
		for _, req := range h.broker.Pending(func(req approval.Request) bool { return req.Owner.Principal == who }) {
			out = append(out, approvalOf(req))
		}
	}
	out = append(out, h.remotePending(r.Context(), principal(r))...)
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

func (h *handler) decide(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Approved *bool           `json:"approved"`
		Reason   string          `json:"reason"`
		Content  json.RawMessage `json:"content"` // a form's answer (mcp.CheckDecision)
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Approved == nil {
		writeError(w, http.StatusBadRequest, `"approved" is required`)
		return
	}
	id := r.PathValue("id")
	d := tool.Decision{Approved: *body.Approved, Reason: body.Reason}
	if len(body.Content) > 0 && string(body.Content) != "null" {
		d.Content = string(body.Content)
	}
	var req approval.Request
	ok := false
	if h.broker != nil {
		req, ok = h.broker.Get(id)
	}
	if !ok {
		// A call of a turn a Remote runs, if it is one of the principal's.
		if err := h.decideRemote(r.Context(), principal(r), id, d); err != nil {
			decideError(w, id, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "approved": *body.Approved})
		return
	}
	if req.Owner.Principal != principal(r) {
		// Another principal's call is answered as one that does not exist.
		writeError(w, http.StatusNotFound, "no pending call "+quote(id))
		return
	}
	if err := mcp.CheckDecision(req.Tool, req.Input, d); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	err := h.broker.Decide(id, d)
	if errors.Is(err, approval.ErrUnknown) {
		writeError(w, http.StatusNotFound, "no pending call "+quote(id))
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "approved": *body.Approved})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
