package web

// The serving side of remote chat turns (remote.go): POST /api/chat
// handing the turn over to Options.Remote, and the approvals of those
// turns, listed and decided through it.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// remotePendingTimeout bounds the question about one remote turn's
// approvals (GET /api/approvals asks about each of the principal's).
const remotePendingTimeout = 5 * time.Second

// chatRemote serves POST /api/chat on the Remote: the turn's run record
// (marked remote, lasting the event log's retention: no process of the
// server renews it), its first events (the user's message, the session
// event), the hand-over, then its events from the log to the page, as a
// page that reattaches reads them. The page going away leaves the turn
// running.
func (h *handler) chatRemote(w http.ResponseWriter, r *http.Request, a host.Agent, recs session.Records, sid, run, message string) {
	ctx := r.Context()
	key := runKey(principal(r), sid)
	if session.CheckRecord(runsNamespace, key) != nil {
		writeError(w, http.StatusBadRequest, "invalid session id")
		return
	}
	v, _ := json.Marshal(runRecord{Run: run, Agent: a.Name, Started: time.Now().UnixMilli(), Remote: true})
	if _, err := recs.PutRecord(ctx, runsNamespace, session.Record{Key: key, Value: v, Expires: time.Now().Add(runlog.DefaultRetention)}); err != nil {
		h.storeError(w, r, err)
		return
	}
	l := ChatLog{Key: key, Owner: host.Owner(ctx), Session: sid, Run: run}
	var first []runlog.Event
	for _, it := range []item{{Type: "user", Text: message}, {Type: "session", Session: sid, Agent: a.Name, Model: modelName(a), Run: run}} {
		data, _ := json.Marshal(it)
		first = append(first, runlog.Event{Seq: l.Seq, Type: it.Type, Data: data})
		l.Seq++
	}
	log := h.eventLog(recs)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := log.AppendBatch(wctx, l.EventLog(), first, false); err != nil {
		_ = endRecord(wctx, recs, key, run)
		h.storeError(w, r, err)
		return
	}
	t := RemoteChat{Agent: a.Name, Input: []llm.Message{llm.UserText(message)}, Quota: chatQuota(ctx), Log: l}
	if err := h.opts.Remote.StartChat(wctx, t); err != nil {
		h.log.ErrorContext(ctx, "web: starting a remote turn", "session", sid, "err", err)
		data, _ := json.Marshal(item{Type: "error", Message: "the turn could not be started"})
		_ = log.AppendFinal(wctx, l.EventLog(), runlog.Event{Seq: l.Seq, Type: "error", Data: data})
		_ = endRecord(wctx, recs, key, run)
		writeError(w, http.StatusServiceUnavailable, "the turn could not be started")
		return
	}
	// After the user's message, which the page that sent it shows itself.
	h.streamRun(w, r, recs, key, run, 0)
}

// chatQuota is the principal's spending limit ctx carries, as data, or
// nil.
func chatQuota(ctx context.Context) *ChatQuota {
	q, ok := budget.QuotaFrom(ctx).(*budget.StoreQuota)
	if !ok || q == nil {
		return nil
	}
	return &ChatQuota{Principal: q.Principal, Total: q.Total, PerDay: q.PerDay}
}

// remoteApprovals returns the handler's RemoteApprovals, if its Remote
// has them.
func (h *handler) remoteApprovals() (RemoteApprovals, bool) {
	ra, ok := h.opts.Remote.(RemoteApprovals)
	return ra, ok && h.opts.Remote != nil
}

// remoteRun is one of a principal's remote turns, by its run record.
type remoteRun struct {
	key, session string
	rec          runRecord
}

// remoteRuns lists principal's remote turns over the agents' stores.
func (h *handler) remoteRuns(ctx context.Context, principal string) []remoteRun {
	var out []remoteRun
	seen := map[session.Records]bool{}
	prefix := principal + "/"
	for _, a := range h.set.All() {
		recs, ok := session.RecordsOf(a.Store)
		if !ok || a.Store == nil || seen[recs] {
			continue
		}
		seen[recs] = true
		list, err := recs.ListRecords(ctx, runsNamespace, prefix)
		if err != nil {
			h.log.WarnContext(ctx, "web: listing remote turns", "err", err)
			continue
		}
		for _, rec := range list {
			var rr runRecord
			sid, ok := strings.CutPrefix(rec.Key, prefix)
			if !ok || strings.Contains(sid, "/") || json.Unmarshal(rec.Value, &rr) != nil || !rr.Remote {
				continue
			}
			out = append(out, remoteRun{key: rec.Key, session: sid, rec: rr})
		}
	}
	return out
}

// remotePending lists the calls principal's remote turns wait on, each
// turn asked at once, for a bounded time.
func (h *handler) remotePending(ctx context.Context, principal string) []approvalJSON {
	ra, ok := h.remoteApprovals()
	if !ok {
		return nil
	}
	runs := h.remoteRuns(ctx, principal)
	found := make([][]RemoteApproval, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, remotePendingTimeout)
			defer cancel()
			p, err := ra.PendingChat(qctx, run.key+"/"+run.rec.Run)
			if err != nil {
				h.log.WarnContext(ctx, "web: listing a remote turn's approvals", "session", run.session, "err", err)
				return
			}
			found[i] = p
		})
	}
	wg.Wait()
	var out []approvalJSON
	for i, run := range runs {
		for _, p := range found[i] {
			out = append(out, approvalOf(approval.Request{ID: run.rec.Run + "/" + p.CallID, CallID: p.CallID, Tool: p.Tool, Input: p.Input,
				Owner: approval.Owner{Agent: run.rec.Agent, Session: run.session, Run: run.rec.Run, Principal: principal}, Since: p.Since}))
		}
	}
	return out
}

// decideRemote decides the call id ("RUN/CALL_ID") of one of principal's
// remote turns: approval.ErrUnknown (wrapped) when none of them waits on
// it.
func (h *handler) decideRemote(ctx context.Context, principal, id string, d tool.Decision) error {
	ra, ok := h.remoteApprovals()
	run, call, found := strings.Cut(id, "/")
	if !ok || !found || run == "" || call == "" {
		return approval.ErrUnknown
	}
	for _, rr := range h.remoteRuns(ctx, principal) {
		if rr.rec.Run == run {
			return ra.DecideChat(ctx, rr.key+"/"+run, call, d)
		}
	}
	return approval.ErrUnknown
}

// decideError answers a failed decision of a remote turn's call.
func decideError(w http.ResponseWriter, id string, err error) {
	switch {
	case errors.Is(err, approval.ErrUnknown):
		writeError(w, http.StatusNotFound, "no pending call "+quote(id))
	case errors.Is(err, mcp.ErrFormContent):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "the decision could not be sent: "+err.Error())
	}
}
