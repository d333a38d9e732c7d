package serve

// Remote turns whose run ended without writing their outcome: a durable
// runner's workflow terminated by an operator, timed out or failed before
// its last activity (FinishResponse, FinishAGUI) ran. Nothing of the
// turn's would ever end its response or run, so any process that sees it
// in progress, idle for a while, asks the runner (RemoteWatcher) whether
// it still runs, and ends it failed when it does not.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// RemoteWatcher is a RemoteRunner that can say whether a remote turn's
// run still goes on. With one, a process polled or streamed for a remote
// background response (or AG-UI run) still in progress, that has shown
// nothing new for RemoteCheckAfter, asks it (at most once per
// RemoteCheckAfter per response and process); a run that ended without
// writing the turn's outcome ends the response "failed" (code
// "run_ended", the runner's reason its message, the principal's
// background slot freed) or the AG-UI run with RUN_ERROR, on whichever
// process asked first.
type RemoteWatcher interface {
	RemoteRunner
	// RemoteEnded reports whether the run of the remote turn of response
	// responseID (or, when aguiKey is set, of the AG-UI run of that key,
	// PRINCIPAL/RUN) has ended, and how, as the error message to show. A
	// turn the runner does not know is not ended: the error then wraps
	// ErrRemoteNotFound (its record, once older than RemoteLostAfter,
	// ends the turn failed all the same).
	RemoteEnded(ctx context.Context, responseID, aguiKey string) (ended bool, reason string, err error)
}

// ErrRemoteNotFound is wrapped by the error of RemoteWatcher.RemoteEnded
// for a turn of which the runner has no run: never handed over (the
// accepting process died between writing the turn's record and the
// hand-over), or forgotten (the runner's history of it purged).
var ErrRemoteNotFound = errors.New("serve: the runner has no run for the turn")

// RemoteLostAfter is how old a remote turn in progress must be for a
// runner that has no run for it (ErrRemoteNotFound) to end it failed (code
// "run_ended"): longer than a hand-over may take (StartRemote is given 30
// s), so that a turn being handed over is never taken for lost.
const RemoteLostAfter = 2 * time.Minute

// remoteLostReason is the error message of a turn ended because the
// runner has no run for it.
const remoteLostReason = "the durable runner has no workflow for the turn"

// RemoteCheckAfter is how long a remote turn in progress shows nothing new
// before a process asks its RemoteWatcher whether it still runs, and the
// least time between two such questions about one turn from one process.
const RemoteCheckAfter = 5 * time.Second

// remoteEnded asks the Handler's RemoteWatcher, if it has one and the
// turn is due, whether the remote turn ended: its reason when it did. A
// turn the runner has no run for ended when the turn's record was written
// before lostBefore.
func (h *Handler) remoteEnded(ctx context.Context, responseID, aguiKey string, lostBefore time.Time) (string, bool) {
	w, ok := h.opts.Runner.(RemoteWatcher)
	if !ok || !h.checks.Due(responseID+"\x00"+aguiKey, time.Now()) {
		return "", false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ended, reason, err := w.RemoteEnded(cctx, responseID, aguiKey)
	if errors.Is(err, ErrRemoteNotFound) && !lostBefore.IsZero() && lostBefore.Before(time.Now().Add(-RemoteLostAfter)) {
		return remoteLostReason, true
	}
	if err != nil || !ended {
		return "", false
	}
	if reason == "" {
		reason = "the run of the turn ended without its outcome"
	}
	return reason, true
}

// endRemoteResponse ends the remote background response of record rec
// (its value sr, in progress) failed if its run ended without writing its
// outcome: the record first (compare-and-swap: an outcome written meanwhile
// stays), then the principal's background slot freed. It returns the
// record as it now is and whether this call ended it; the final event is
// the follower's to write (followIdle).
func (h *Handler) endRemoteResponse(ctx context.Context, recs session.Records, id string, sr slotRecord) (slotRecord, bool) {
	if sr.Remote == nil || sr.Status != "in_progress" {
		return sr, false
	}
	reason, ended := h.remoteEnded(ctx, id, "", createdAt(sr.Response))
	if !ended {
		return sr, false
	}
	var obj responseObject
	if err := json.Unmarshal(sr.Response, &obj); err != nil {
		return sr, false
	}
	obj.Status = "failed"
	obj.Error = &responseError{Code: "run_ended", Message: reason}
	body, _ := json.Marshal(&obj)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	s := &slot{recs: recs, id: id, run: sr.Run}
	retention := h.retention()
	now, err := s.update(wctx, sr.Run, func(sr *slotRecord, rec *session.Record) {
		sr.Status, sr.Response, sr.Ended, sr.Cancel = "failed", body, time.Now().UnixMilli(), false
		rec.Expires = time.Now().Add(retention)
	})
	if err != nil {
		if errors.Is(err, errSlotLost) && now.Run == sr.Run {
			return now, false // ended meanwhile: its outcome stays
		}
		return sr, false
	}
	if ref := sr.Remote; ref.Slot != "" {
		(&bgSlot{recs: recs, key: ref.Slot, version: ref.SlotVersion}).release(wctx)
	}
	return now, true
}

// endRemoteAGUI ends the remote AG-UI run name (lease record lease, key),
// whose log's last event is last, with RUN_ERROR (code "run_ended") if its
// run ended without writing its end: the final event, then the lease
// record deleted (FinishAGUI). It reports whether it ended it.
func (h *Handler) endRemoteAGUI(ctx context.Context, recs session.Records, lease session.Record, name, key string, last int64) bool {
	reason, ended := h.remoteEnded(ctx, "", key, h.aguiLeaseWritten(lease, time.Now()))
	if !ended {
		return false
	}
	data, _ := json.Marshal(map[string]any{"type": "RUN_ERROR", "message": reason, "code": "run_ended"})
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := FinishAGUI(wctx, recs, AGUILog{Key: key, Run: name, Retention: h.retention()},
		[]runlog.Event{{Seq: last + 1, Type: "RUN_ERROR", Data: data}})
	return err == nil
}

// idleSince tracks, for a follower, since when the log's last event has
// been the same.
type idleSince struct {
	last  int64
	since time.Time
}

// idle returns how long last has been the log's last event.
func (i *idleSince) idle(last int64, now time.Time) time.Duration {
	if i.since.IsZero() || last != i.last {
		i.last, i.since = last, now
	}
	return now.Sub(i.since)
}

// aguiLeaseWritten returns when the lease record of a remote AG-UI run was
// written, as its expiry tells (a remote run's lease lasts the retention
// from its creation, never renewed), or zero for a lease that is not a
// remote run's (a run of a process, renewed to last slotLease) or whose
// age cannot be told.
func (h *Handler) aguiLeaseWritten(lease session.Record, now time.Time) time.Time {
	left := lease.Expires.Sub(now)
	if lease.Expires.IsZero() || left <= 3*slotLease {
		return time.Time{}
	}
	return lease.Expires.Add(-h.retention())
}

// createdAt returns when the response object body was created (its
// created_at), or zero.
func createdAt(body json.RawMessage) time.Time {
	var obj struct {
		CreatedAt int64 `json:"created_at"`
	}
	if json.Unmarshal(body, &obj) != nil || obj.CreatedAt <= 0 {
		return time.Time{}
	}
	return time.Unix(obj.CreatedAt, 0)
}

// startedBefore reports whether the response object body was created
// before t.
func startedBefore(body json.RawMessage, t time.Time) bool {
	var obj struct {
		CreatedAt int64 `json:"created_at"`
	}
	return json.Unmarshal(body, &obj) == nil && obj.CreatedAt > 0 && obj.CreatedAt < t.Unix()
}
