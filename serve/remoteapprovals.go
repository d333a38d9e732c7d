package serve

// The approvals of background turns a RemoteRunner runs: the calls they
// wait on are not in this process's approval.Broker but in whatever runs
// them (a workflow's state). GET /v1/approvals lists them beside the
// Broker's, POST /v1/approvals/{id} decides them, on any process, for the
// principal that started the turn only, in the shapes of the Broker's: an
// id "RUN/CALL_ID", RUN being the turn's run (the response id without its
// "resp_" prefix), as an in-process turn's.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// RemoteApprovals is implemented by a RemoteRunner whose turns wait for
// approvals where they run: the Handler lists and decides those calls
// through it (GET and POST /v1/approvals), on any process. A runner
// without it has its turns' calls approved or denied by its own policy.
type RemoteApprovals interface {
	// PendingRemote returns the calls the turn of response id waits on,
	// in the order they began waiting. A turn unknown to the runner, or
	// over, waits on none (no error).
	PendingRemote(ctx context.Context, responseID string) ([]RemoteApproval, error)
	// DecideRemote answers the call callID of the turn of response id
	// with d (its Content too, an MCP form's answer). It returns an error
	// wrapping approval.ErrUnknown when the turn does not wait on that
	// call (never did, already decided, or the turn is over), one matching
	// mcp.ErrFormContent when d.Content does not fit the form it answers.
	DecideRemote(ctx context.Context, responseID, callID string, d tool.Decision) error
}

// RemoteApproval is a call a remote turn waits on.
type RemoteApproval struct {
	// CallID is the tool call's id, as the model wrote it; Tool the
	// tool's name; Input the call's arguments.
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input,omitempty"`
	// Since is when the call began waiting.
	Since time.Time `json:"since"`
}

// remoteRef marks a response record whose turn a RemoteRunner runs: the
// agent and session the approvals list shows.
type remoteRef struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	// Slot and SlotVersion are the principal's background slot the turn
	// holds (ResponseLog's), freed by whichever process ends a turn whose
	// run ended without its outcome (remoteended.go).
	Slot        string `json:"slot,omitempty"`
	SlotVersion int64  `json:"slot_version,omitempty"`
}

// remoteApprovals returns the Handler's RemoteApprovals, if its runner
// has them.
func (h *Handler) remoteApprovals() (RemoteApprovals, bool) {
	if _, ok := h.opts.Runner.(RemoteRunner); !ok {
		return nil, false
	}
	ra, ok := h.opts.Runner.(RemoteApprovals)
	return ra, ok
}

// storesRecords returns the distinct records of the agents' stores.
func (h *Handler) storesRecords() []session.Records {
	var out []session.Records
	seen := map[session.Records]bool{}
	for _, a := range h.opts.Agents.All() {
		r, has := session.RecordsOf(a.Store)
		if !has || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	return out
}

// remotePending lists the calls principal's remote background turns wait
// on. Those turns are found through the principal's background slots
// (bglimit.go), whose values are their response ids; each is checked
// against its response record (the principal's, in progress, remote).
func (h *Handler) remotePending(ctx context.Context, principal string) []approvalObject {
	ra, ok := h.remoteApprovals()
	if !ok {
		return h.remoteAGUIPending(ctx, principal)
	}
	type turn struct {
		id string
		sr slotRecord
	}
	var turns []turn
	prefix := principal + "/"
	for _, recs := range h.storesRecords() {
		slots, err := recs.ListRecords(ctx, backgroundNamespace, prefix)
		if err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "listing remote approvals", slog.String("error", err.Error()))
			continue
		}
		for _, s := range slots {
			if !slotOf(s.Key, prefix) {
				continue // another principal's, whose name starts with this one's
			}
			id := string(s.Value)
			if sr, ok := remoteRecord(ctx, recs, id, principal); ok {
				turns = append(turns, turn{id, sr})
			}
		}
	}
	// The runner is asked about each turn at once (a principal has at
	// most Options.MaxBackground), each for a bounded time: a turn whose
	// runner does not answer (no worker up) is left out, not waited for.
	found := make([][]RemoteApproval, len(turns))
	var wg sync.WaitGroup
	for i, t := range turns {
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, remotePendingTimeout)
			defer cancel()
			pending, err := ra.PendingRemote(qctx, t.id)
			if err != nil {
				h.log.LogAttrs(ctx, slog.LevelWarn, "listing remote approvals", slog.String("id", t.id), slog.String("error", err.Error()))
				return
			}
			found[i] = pending
		})
	}
	wg.Wait()
	var out []approvalObject
	for i, t := range turns {
		run := strings.TrimPrefix(t.id, "resp_")
		for _, p := range found[i] {
			out = append(out, approvalObject{ID: run + "/" + p.CallID, Object: "approval", Tool: p.Tool, CallID: p.CallID,
				Arguments: string(p.Input), Schema: remoteSchema(p), Agent: t.sr.Remote.Agent, Session: t.sr.Remote.Session, Run: run, Since: p.Since.Unix()})
		}
	}
	return append(out, h.remoteAGUIPending(ctx, principal)...) // remoteagui_approvals.go
}

// remoteSchema is the requested schema of a remote call that is an MCP
// server's request for input (tool mcp_elicitation), as
// listApprovals shows an in-process one's; nil for any other call.
func remoteSchema(p RemoteApproval) json.RawMessage {
	if p.Tool != mcp.ElicitationTool {
		return nil
	}
	s, _ := mcp.ElicitationSchema(p.Input)
	return s
}

// remotePendingTimeout bounds the runner's answer about one turn's calls
// in GET /v1/approvals.
var remotePendingTimeout = 5 * time.Second

// slotOf reports whether key is one of the background slots under prefix
// (PRINCIPAL/N).
func slotOf(key, prefix string) bool {
	n, ok := strings.CutPrefix(key, prefix)
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// remoteRecord returns the record of response id when it is principal's
// remote background turn, in progress.
func remoteRecord(ctx context.Context, recs session.Records, id, principal string) (slotRecord, bool) {
	if session.CheckRecord(responsesNamespace, id) != nil {
		return slotRecord{}, false
	}
	rec, err := recs.GetRecord(ctx, responsesNamespace, id)
	if err != nil {
		return slotRecord{}, false
	}
	var sr slotRecord
	if json.Unmarshal(rec.Value, &sr) != nil || sr.Principal != principal || sr.Remote == nil || !sr.Background || sr.Status != "in_progress" {
		return slotRecord{}, false
	}
	return sr, true
}

// decideRemote decides the call id ("RUN/CALL_ID") of principal's remote
// turn: approval.ErrUnknown (wrapped) when no such call waits for the
// principal's decision.
func (h *Handler) decideRemote(ctx context.Context, principal, id string, d tool.Decision) error {
	ra, ok := h.remoteApprovals()
	if !ok {
		return h.decideRemoteAGUI(ctx, principal, id, d)
	}
	i := strings.LastIndexByte(id, '/')
	if i <= 0 || i == len(id)-1 {
		return approval.ErrUnknown
	}
	resp, call := "resp_"+id[:i], id[i+1:]
	for _, recs := range h.storesRecords() {
		if _, ok := remoteRecord(ctx, recs, resp, principal); ok {
			return ra.DecideRemote(ctx, resp, call, d)
		}
	}
	return h.decideRemoteAGUI(ctx, principal, id, d) // an AG-UI run's call, if any
}

// brokerGet is Broker.Get, with no Broker waiting on nothing.
func (h *Handler) brokerGet(id string) (approval.Request, bool) {
	if h.opts.Broker == nil {
		return approval.Request{}, false
	}
	return h.opts.Broker.Get(id)
}

// decidedRemotely decides the call id, unknown to the Broker, as a call a
// remote turn of principal waits on, and answers the request, when the
// runner has RemoteApprovals; it reports whether it answered.
func (h *Handler) decidedRemotely(w http.ResponseWriter, r *http.Request, principal, id string, d tool.Decision) bool {
	_, resp := h.remoteApprovals()
	if _, agui := h.remoteAGUIApprovals(); !resp && !agui {
		return false
	}
	switch err := h.decideRemote(r.Context(), principal, id, d); {
	case errors.Is(err, approval.ErrUnknown) || errors.Is(err, tool.ErrNotPending):
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "approval_not_found",
			Message: "no call with this id is waiting for your decision"})
	case errors.Is(err, mcp.ErrFormContent): // the turn's own check of the content refused it
		e := invalid("content", "%v", err)
		e.Code = "invalid_content"
		writeError(w, e)
	case err != nil:
		h.log.LogAttrs(r.Context(), slog.LevelError, "deciding a remote approval", slog.String("id", id), slog.String("error", err.Error()))
		writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Message: "the decision could not be recorded"})
	default:
		writeJSON(w, http.StatusOK, struct {
			ID       string `json:"id"`
			Object   string `json:"object"`
			Approved bool   `json:"approved"`
		}{id, "approval.decision", d.Approved})
	}
	return true
}
