package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// Turns that outlive their page. When an agent's store has records, a
// chat turn is not its connection: its events go to an event log
// (package runlog) as well as to the page that asked, and a record says
// the turn runs:
//
//	agcore.web.runs/PRINCIPAL/SESSION  {"run", "agent", "started", "cancel"}, living
//	                                   runLease, renewed by the process running the turn
//
// so a page reloaded mid-turn, or another tab, lists the running turns
// (GET /api/runs), replays and follows one (GET /api/sessions/{id}/run),
// and stops it (POST /api/sessions/{id}/cancel), on any server over the
// store. A page that goes away no longer cancels its turn there.
const (
	runsNamespace = "agcore.web.runs"
	runLease      = 10 * time.Second
	runPoll       = 250 * time.Millisecond
)

// errStopped is the cause of a turn stopped through POST
// /api/sessions/{id}/cancel.
var errStopped = errors.New("web: the turn was stopped")

type runRecord struct {
	Run     string `json:"run"`
	Agent   string `json:"agent"`
	Started int64  `json:"started"` // Unix ms
	Cancel  bool   `json:"cancel,omitempty"`
	// Remote marks a turn a Remote runs: no process of the server renews
	// its record (it lasts the event log's retention, deleted by
	// FinishChat), and a stop asks the Remote.
	Remote bool `json:"remote,omitempty"`
}

// liveRun is a turn of this process that a page may reattach to.
type liveRun struct {
	recs   session.Records
	key    string
	log    *runlog.Writer
	cancel context.CancelCauseFunc

	mu  sync.Mutex
	seq int64
}

// runs keeps this process's logs and running turns.
type runs struct {
	mu   sync.Mutex
	logs map[session.Records]*runlog.Log
	live map[string]*liveRun // by record key
}

func (h *handler) eventLog(recs session.Records) *runlog.Log {
	h.runs.mu.Lock()
	defer h.runs.mu.Unlock()
	if h.runs.logs == nil {
		h.runs.logs = map[session.Records]*runlog.Log{}
	}
	l := h.runs.logs[recs]
	if l == nil {
		l = &runlog.Log{Records: recs, Logger: h.log}
		h.runs.logs[recs] = l
	}
	return l
}

func runKey(principal, sid string) string { return principal + "/" + sid }

// startRun records a turn of session sid as running and opens its event
// log; nil when the agent's store has no records (the turn is then its
// connection's, as before).
func (h *handler) startRun(ctx context.Context, a host.Agent, principal, sid, run string, cancel context.CancelCauseFunc) *liveRun {
	recs, ok := session.RecordsOf(a.Store)
	if !ok || a.Store == nil {
		return nil
	}
	w, err := h.eventLog(recs).Writer("web." + run)
	if err != nil {
		return nil
	}
	lr := &liveRun{recs: recs, key: runKey(principal, sid), log: w, cancel: cancel}
	v, _ := json.Marshal(runRecord{Run: run, Agent: a.Name, Started: time.Now().UnixMilli()})
	if session.CheckRecord(runsNamespace, lr.key) != nil {
		w.Abandon()
		return nil
	}
	if _, err := recs.PutRecord(ctx, runsNamespace, session.Record{Key: lr.key, Value: v, Expires: time.Now().Add(runLease)}); err != nil {
		w.Abandon()
		h.log.WarnContext(ctx, "web: recording a running turn", "session", sid, "err", err)
		return nil
	}
	h.runs.mu.Lock()
	if h.runs.live == nil {
		h.runs.live = map[string]*liveRun{}
	}
	h.runs.live[lr.key] = lr
	h.runs.mu.Unlock()
	return lr
}

// emit appends an event to the run's log (nil: nothing).
func (lr *liveRun) emit(it item) {
	if lr == nil {
		return
	}
	data, err := json.Marshal(it)
	if err != nil {
		return
	}
	lr.mu.Lock()
	seq := lr.seq
	lr.seq++
	lr.mu.Unlock()
	lr.log.Append(runlog.Event{Seq: seq, Type: it.Type, Data: data})
}

// keep renews the run's record and watches it for a stop asked in any
// process, until done is closed.
func (lr *liveRun) keep(done <-chan struct{}) {
	t := time.NewTicker(runPoll)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		ctx, c := context.WithTimeout(context.Background(), runLease/3)
		rec, err := lr.recs.GetRecord(ctx, runsNamespace, lr.key)
		if err == nil {
			var rr runRecord
			if json.Unmarshal(rec.Value, &rr) == nil && rr.Cancel {
				lr.cancel(errStopped)
			}
			if time.Since(renewed) >= runLease/3 {
				rec.Expires = time.Now().Add(runLease)
				if _, err := lr.recs.UpdateRecord(ctx, runsNamespace, rec); err == nil {
					renewed = time.Now()
				}
			}
		}
		c()
	}
}

// end writes the run's last event and forgets it.
func (h *handler) endRun(lr *liveRun, final item) {
	if lr == nil {
		return
	}
	data, _ := json.Marshal(final)
	lr.mu.Lock()
	seq := lr.seq
	lr.seq++
	lr.mu.Unlock()
	ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
	defer c()
	if err := lr.log.Close(ctx, runlog.Event{Seq: seq, Type: final.Type, Data: data}); err != nil {
		h.log.WarnContext(ctx, "web: ending a turn's events", "err", err)
	}
	_ = lr.recs.DeleteRecord(ctx, runsNamespace, lr.key, 0)
	h.runs.mu.Lock()
	if h.runs.live[lr.key] == lr {
		delete(h.runs.live, lr.key)
	}
	h.runs.mu.Unlock()
}

// runInfo is one running turn as GET /api/runs lists it.
type runInfo struct {
	Session string    `json:"session"`
	Agent   string    `json:"agent"`
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
}

// listRuns serves GET /api/runs?agent=NAME: the principal's running
// turns on the agent's store, in any process.
func (h *handler) listRuns(w http.ResponseWriter, r *http.Request) {
	a, ok := h.agentOf(w, r.URL.Query().Get("agent"))
	if !ok {
		return
	}
	out := []runInfo{}
	if recs, ok := session.RecordsOf(a.Store); ok && a.Store != nil {
		p := principal(r)
		list, err := recs.ListRecords(r.Context(), runsNamespace, p+"/")
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		var turns []runRecord
		var keys []string
		for _, rec := range list {
			var rr runRecord
			if json.Unmarshal(rec.Value, &rr) != nil || rr.Agent != a.Name {
				continue
			}
			turns, keys = append(turns, rr), append(keys, rec.Key)
		}
		over := h.remoteOver(r.Context(), recs, keys, turns)
		for i, rr := range turns {
			if !over[i] {
				out = append(out, runInfo{Session: strings.TrimPrefix(keys[i], p+"/"), Agent: rr.Agent, Run: rr.Run, Started: time.UnixMilli(rr.Started).UTC()})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// remoteOver ends, of the running turns turns (their run records keys),
// the remote ones at least remoteCheckAfter old whose run ended without
// their end (remoteended.go), each asked at once for a bounded time; it
// reports which it ended.
func (h *handler) remoteOver(ctx context.Context, recs session.Records, keys []string, turns []runRecord) []bool {
	over := make([]bool, len(turns))
	if _, ok := h.opts.Remote.(RemoteWatcher); !ok {
		return over
	}
	var wg sync.WaitGroup
	for i, rr := range turns {
		if !rr.Remote || time.Since(time.UnixMilli(rr.Started)) < remoteCheckAfter {
			continue
		}
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, remotePendingTimeout)
			defer cancel()
			over[i] = h.endRemoteChat(qctx, recs, keys[i], rr)
		})
	}
	wg.Wait()
	return over
}

// running returns the record of session id's running turn, the
// principal's, on agent a's store.
func (h *handler) running(r *http.Request, a host.Agent, id string) (session.Records, session.Record, runRecord, bool) {
	recs, ok := session.RecordsOf(a.Store)
	if !ok || a.Store == nil || session.ValidateID(id) != nil {
		return nil, session.Record{}, runRecord{}, false
	}
	key := runKey(principal(r), id)
	if session.CheckRecord(runsNamespace, key) != nil {
		return nil, session.Record{}, runRecord{}, false
	}
	rec, err := recs.GetRecord(r.Context(), runsNamespace, key)
	var rr runRecord
	if err != nil || json.Unmarshal(rec.Value, &rr) != nil || rr.Agent != a.Name {
		return nil, session.Record{}, runRecord{}, false
	}
	return recs, rec, rr, true
}

// followRun serves GET /api/sessions/{id}/run?agent=NAME[&after=N]: the
// events of the session's running turn (from the first, or after event
// N), then as they come, to its last; 404 when none runs. A turn whose
// process was lost ends with an error event.
func (h *handler) followRun(w http.ResponseWriter, r *http.Request) {
	a, ok := h.agentOf(w, r.URL.Query().Get("agent"))
	if !ok {
		return
	}
	id := r.PathValue("id")
	after := int64(-1)
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			writeError(w, http.StatusBadRequest, `"after" must be an event number`)
			return
		}
		after = n
	}
	recs, _, rr, ok := h.running(r, a, id)
	if !ok {
		writeError(w, http.StatusNotFound, "no turn of this session is running")
		return
	}
	h.streamRun(w, r, recs, runKey(principal(r), id), rr.Run, after)
}

// streamRun answers with the events of the turn run, whose run record is
// key, after event after, then as they come, to its last.
func (h *handler) streamRun(w http.ResponseWriter, r *http.Request, recs session.Records, key, runID string, after int64) {
	log, run := h.eventLog(recs), "web."+runID
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var gone, quietSince time.Time
	quietLast := int64(-2)
	wrote := time.Now()
	idle := func(ctx context.Context, last int64) error {
		if last != quietLast || quietSince.IsZero() {
			quietLast, quietSince = last, time.Now()
		}
		// An idle stream (a turn waiting for an approval) sends a comment
		// every Options.Heartbeat, so proxies keep it open.
		if h.opts.Heartbeat > 0 && time.Since(wrote) >= h.opts.Heartbeat {
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return err
			}
			_ = rc.Flush()
			wrote = time.Now()
		}
		if log.Running(run) {
			return nil
		}
		rec, err := recs.GetRecord(ctx, runsNamespace, key)
		var cur runRecord
		if err == nil && json.Unmarshal(rec.Value, &cur) == nil && cur.Run == runID {
			gone = time.Time{}
			if cur.Remote && time.Since(quietSince) >= remoteCheckAfter {
				// A remote turn quiet for a while: its run may have
				// ended without its end (remoteended.go), which this
				// writes then.
				h.endRemoteChat(ctx, recs, key, cur)
			}
			return nil
		}
		if !errors.Is(err, session.ErrNotFound) && err != nil {
			return nil // the store is unreachable: look again
		}
		// Its record is gone and its log has no last event: the turn's
		// process was lost (or its last write is on its way: wait a little).
		if gone.IsZero() {
			gone = time.Now()
			return nil
		}
		if time.Since(gone) < 2*time.Second {
			return nil
		}
		data, _ := json.Marshal(item{Type: "error", Message: "the server running the turn stopped; the turn was not stored"})
		return log.AppendFinal(ctx, run, runlog.Event{Seq: last + 1, Type: "error", Data: data})
	}
	var buf []byte
	for ev, err := range log.Follow(r.Context(), run, after, idle) {
		if err != nil {
			return
		}
		buf = buf[:0]
		buf = fmt.Appendf(buf, "id: %d\nevent: %s\ndata: ", ev.Seq, ev.Type)
		buf = append(buf, ev.Data...)
		buf = append(buf, "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		_ = rc.Flush()
		wrote = time.Now()
	}
}

// cancelRun serves POST /api/sessions/{id}/cancel?agent=NAME: the
// session's running turn stops, wherever it runs (its process reads the
// request within 250 ms); 404 when none runs.
func (h *handler) cancelRun(w http.ResponseWriter, r *http.Request) {
	a, ok := h.agentOf(w, r.URL.Query().Get("agent"))
	if !ok {
		return
	}
	id := r.PathValue("id")
	recs, rec, rr, ok := h.running(r, a, id)
	if !ok {
		writeError(w, http.StatusNotFound, "no turn of this session is running")
		return
	}
	h.runs.mu.Lock()
	lr := h.runs.live[rec.Key]
	h.runs.mu.Unlock()
	if rr.Remote && h.opts.Remote != nil {
		// A Remote runs it: asked there, it ends the turn's log itself.
		if err := h.opts.Remote.CancelChat(r.Context(), rec.Key+"/"+rr.Run); err != nil {
			h.log.ErrorContext(r.Context(), "web: stopping a remote turn", "session", id, "err", err)
			writeError(w, http.StatusServiceUnavailable, "the turn could not be stopped")
			return
		}
	} else if lr != nil {
		lr.cancel(errStopped)
	} else {
		// Another process runs it: it reads the request from the record,
		// which its lease renewals may change meanwhile (try again).
		for attempt := 0; ; attempt++ {
			rr.Cancel = true
			rec.Value, _ = json.Marshal(rr)
			_, err := recs.UpdateRecord(r.Context(), runsNamespace, rec)
			if err == nil || errors.Is(err, session.ErrNotFound) {
				break // asked, or over meanwhile
			}
			if !errors.Is(err, session.ErrConflict) || attempt == 5 {
				h.storeError(w, r, err)
				return
			}
			var ok bool
			if _, rec, rr, ok = h.running(r, a, id); !ok {
				break
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"cancelled": id})
}
