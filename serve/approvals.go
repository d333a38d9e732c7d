package serve

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/tool"
)

// modelObject is an agent as GET /v1/models lists it.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	all := h.opts.Agents.All()
	data := make([]modelObject, len(all))
	for i, a := range all {
		data[i] = modelObject{ID: a.Name, Object: "model", Created: h.started, OwnedBy: "agcore"}
	}
	writeJSON(w, http.StatusOK, struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{"list", data})
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	a, ok := h.opts.Agents.Get(r.PathValue("model"))
	if !ok {
		writeError(w, modelNotFound(r.PathValue("model")))
		return
	}
	writeJSON(w, http.StatusOK, modelObject{ID: a.Name, Object: "model", Created: h.started, OwnedBy: "agcore"})
}

// approvalObject is a waiting call as GET /v1/approvals lists it.
type approvalObject struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Tool      string `json:"tool"`
	CallID    string `json:"call_id"`
	Arguments string `json:"arguments"`
	// Schema, for an MCP server's request for input (tool
	// mcp_elicitation), is the requested schema: what the decision's
	// content must match.
	Schema  json.RawMessage `json:"schema,omitempty"`
	Agent   string          `json:"agent"`
	Session string          `json:"session,omitempty"`
	Run     string          `json:"run,omitempty"`
	Since   int64           `json:"created"`
}

// listApprovals serves GET /v1/approvals: the calls waiting for a decision
// in turns the caller's principal started.
func (h *Handler) listApprovals(w http.ResponseWriter, r *http.Request, principal string) {
	_, hasRemote := h.remoteApprovals()
	_, hasAGUI := h.remoteAGUIApprovals()
	if h.opts.Broker == nil && !hasRemote && !hasAGUI {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "unknown_url", Message: "this server has no approvals"})
		return
	}
	var pending []approval.Request
	if h.opts.Broker != nil {
		pending = h.opts.Broker.Pending(func(q approval.Request) bool { return q.Owner.Principal == principal })
	}
	data := make([]approvalObject, len(pending))
	for i, q := range pending {
		data[i] = approvalObject{ID: q.ID, Object: "approval", Tool: q.Tool, CallID: q.CallID, Arguments: string(q.Input),
			Agent: q.Owner.Agent, Session: q.Owner.Session, Run: q.Owner.Run, Since: q.Since.Unix()}
		if q.Tool == mcp.ElicitationTool {
			data[i].Schema, _ = mcp.ElicitationSchema(q.Input)
		}
	}
	data = append(data, h.remotePending(r.Context(), principal)...) // remoteapprovals.go
	writeJSON(w, http.StatusOK, struct {
		Object string           `json:"object"`
		Data   []approvalObject `json:"data"`
	}{"list", data})
}

// decideApproval serves POST /v1/approvals/{id}: {"approved": bool,
// "reason": "...", "content": {...}}. Only the principal that started the
// turn may decide; to anyone else the call does not exist. content, only
// with an approval of an MCP server's request for input (tool
// mcp_elicitation), is the form's answer: checked against the requested
// schema with the form's defaults filled in (400 invalid_content when it
// does not match, a required field without a default left out included).
func (h *Handler) decideApproval(w http.ResponseWriter, r *http.Request, principal string) {
	id := r.PathValue("id")
	notFound := &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "approval_not_found",
		Message: "no call with this id is waiting for your decision"}
	_, remote := h.remoteApprovals()
	_, remoteAGUI := h.remoteAGUIApprovals()
	if h.opts.Broker == nil && !remote && !remoteAGUI {
		writeError(w, notFound)
		return
	}
	var body struct {
		Approved *bool           `json:"approved"`
		Reason   string          `json:"reason"`
		Content  json.RawMessage `json:"content"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, decodeError(err))
		return
	}
	if body.Approved == nil {
		writeError(w, invalid("approved", "approved (true or false) is required"))
		return
	}
	d := tool.Decision{Approved: *body.Approved, Reason: body.Reason}
	if len(body.Content) > 0 && string(body.Content) != "null" {
		d.Content = string(body.Content)
	}
	q, ok := h.brokerGet(id)
	if !ok && h.decidedRemotely(w, r, principal, id, d) {
		return // a call a remote turn waits on (remoteapprovals.go)
	}
	if !ok || q.Owner.Principal != principal {
		writeError(w, notFound)
		return
	}
	if err := checkContent(q, d); err != nil {
		writeError(w, err)
		return
	}
	if err := h.opts.Broker.Decide(id, d); err != nil {
		if errors.Is(err, approval.ErrUnknown) {
			writeError(w, notFound)
			return
		}
		writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Message: "the decision could not be recorded"})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID       string `json:"id"`
		Object   string `json:"object"`
		Approved bool   `json:"approved"`
	}{id, "approval.decision", *body.Approved})
}

// checkContent checks a decision's content (mcp.CheckDecision): a 400
// invalid_content when it does not fit.
func checkContent(q approval.Request, d tool.Decision) *apiError {
	if err := mcp.CheckDecision(q.Tool, q.Input, d); err != nil {
		e := invalid("content", "%v", err)
		e.Code = "invalid_content"
		return e
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

func attrs(agentName, id string, err error) []slog.Attr {
	return []slog.Attr{slog.String("agent", agentName), slog.String("id", id), slog.String("error", err.Error())}
}
