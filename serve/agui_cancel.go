package serve

// Cancelling an AG-UI run that outlives its client. AG-UI has no cancel
// message (a client aborts its request, which leaves a stored run going
// on), so agcore adds POST /agui/{agent}/runs/{run}/cancel: any process
// over the store takes it. A run of a serving process reads the
// cancellation from the store (agcore.agui.cancel/PRINCIPAL/RUN, polled
// every aguiCancelPoll by the process running it); a run a RemoteRunner
// runs is cancelled through the runner (RemoteAGUICanceler). Either way
// the run ends RUN_ERROR with the code "cancelled", every tool call
// answered and the session well-formed.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

const (
	// aguiCancelNamespace holds the cancellations asked of AG-UI runs,
	// PRINCIPAL/RUN, until the process running the run reads them (or
	// aguiCancelLife passes).
	aguiCancelNamespace = "agcore.agui.cancel"
	aguiCancelLife      = time.Minute
	// aguiCancelPoll is how often the process running an AG-UI run looks
	// for its cancellation.
	aguiCancelPoll = 250 * time.Millisecond
	// aguiCancelWait bounds how long POST .../cancel waits for the run's
	// end before answering 202.
	aguiCancelWait = 10 * time.Second
)

// errAGUICancelled is the cause of an AG-UI run cancelled through POST
// /agui/{agent}/runs/{run}/cancel.
var errAGUICancelled = errors.New("serve: the AG-UI run was cancelled")

// RemoteAGUICanceler is implemented by a RemoteRunner whose AG-UI runs can
// be stopped where they run. A run is named by its lease record's key
// (AGUILog.Key: PRINCIPAL/RUN).
type RemoteAGUICanceler interface {
	// CancelAGUI asks the AG-UI run key to stop: it ends RUN_ERROR with
	// the code "cancelled", its tool calls answered. A run unknown to the
	// runner, or over, is not an error.
	CancelAGUI(ctx context.Context, key string) error
}

// aguiCancel serves POST /agui/{agent}/runs/{run}/cancel: the run of the
// request's principal is asked to stop, and the answer waits (at most
// aguiCancelWait) for its last event: 200 with the run's outcome
// ({"runId", "status": "cancelled", "finished" or "failed", "event": the
// last event}), or 202 {"runId", "status": "cancelling"} while it ends.
// A run that is not the principal's, or not running, is a 404.
func (h *Handler) aguiCancel(w http.ResponseWriter, r *http.Request) {
	recs, run, ok := h.aguiRunOf(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	principal, _ := host.PrincipalFrom(ctx)
	key := principal + "/" + run
	if session.CheckRecord(aguiNamespace, key) != nil {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "run_not_found", Message: "no such run"})
		return
	}
	if _, err := recs.GetRecord(ctx, aguiNamespace, key); err != nil {
		if !errors.Is(err, session.ErrNotFound) {
			writeError(w, storeError())
			return
		}
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "run_not_found", Message: "no running run with this id"})
		return
	}
	if _, err := recs.PutRecord(ctx, aguiCancelNamespace, session.Record{Key: key, Value: []byte("1"), Expires: time.Now().Add(aguiCancelLife)}); err != nil {
		writeError(w, storeError())
		return
	}
	if c, ok := h.opts.Runner.(RemoteAGUICanceler); ok {
		if err := c.CancelAGUI(ctx, key); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "cancelling a remote AG-UI run", slog.String("run", run), slog.String("error", err.Error()))
		}
	}
	last, ok := h.aguiEnd(ctx, recs, "agui."+run)
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]any{"runId": run, "status": "cancelling"})
		return
	}
	var ev struct {
		Type string `json:"type"`
		Code string `json:"code"`
	}
	_ = json.Unmarshal(last, &ev)
	status := "failed"
	switch {
	case ev.Type == "RUN_FINISHED":
		status = "finished"
	case ev.Code == "cancelled":
		status = "cancelled"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"runId": run, "status": status, "event": json.RawMessage(last)})
}

// aguiEnd waits (at most aguiCancelWait, or until ctx ends) for the final
// event of the run's log and returns it; false when the run has not ended.
func (h *Handler) aguiEnd(ctx context.Context, recs session.Records, name string) (json.RawMessage, bool) {
	log := h.eventLog(recs)
	ctx, cancel := context.WithTimeout(ctx, aguiCancelWait)
	defer cancel()
	var last json.RawMessage
	wait := func(context.Context, int64) error { return nil } // not stored yet: wait
	for ev, err := range log.Follow(ctx, name, -1, wait) {
		if err != nil {
			return nil, false
		}
		last = ev.Data
	}
	if ctx.Err() != nil || last == nil {
		return nil, false
	}
	return last, true
}

// watchAGUICancel reports, every aguiCancelPoll until ctx ends, whether
// the AG-UI run key was asked to stop; it calls stop once when it was
// (and deletes the request).
func watchAGUICancel(ctx context.Context, recs session.Records, key string, stop func()) {
	t := time.NewTicker(aguiCancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rctx, c := context.WithTimeout(ctx, aguiCancelPoll*4)
			_, err := recs.GetRecord(rctx, aguiCancelNamespace, key)
			c()
			if err != nil {
				continue
			}
			stop()
			dctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = recs.DeleteRecord(dctx, aguiCancelNamespace, key, 0)
			c()
			return
		}
	}
}
