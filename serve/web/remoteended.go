package web

// Remote chat turns whose run ended without writing their end: a durable
// runner's workflow terminated by an operator, timed out or failed before
// its last activity (FinishChat) ran, or never started (the accepting
// process died before the hand-over). Nothing of the turn's would ever
// end its event log or delete its run record, so any process that sees it
// running (a page following it, quiet for a while; GET /api/runs listing
// it) asks the Remote (RemoteWatcher) whether it still runs, and ends it
// failed when it does not, as the worker would have: its open tool calls
// answered, then the error event.

import (
	"context"
	"errors"
	"time"

	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// RemoteWatcher is implemented by a Remote that can say whether a turn's
// run still goes on. With one, a process following a remote chat turn
// (GET /api/sessions/{id}/run) that has shown nothing new for 5 seconds,
// or listing it (GET /api/runs) once it is 5 seconds old, asks it, at most
// once per 5 seconds per turn and process; a turn whose run ended
// without writing its end ends with an error event (the reason its
// message, every open tool call answered first) and its run record
// deleted, on whichever process asked first. A turn the runner has no run
// for ends so too once its record is older than 2 minutes (longer than a
// hand-over may take).
type RemoteWatcher interface {
	// ChatEnded reports whether the run of the remote chat turn id
	// (ChatLog.ID) has ended, and how, as the error message to show. A
	// turn the runner does not know is not ended: the error then wraps
	// ErrChatNotFound.
	ChatEnded(ctx context.Context, id string) (ended bool, reason string, err error)
}

// ErrChatNotFound is wrapped by the error of RemoteWatcher.ChatEnded for
// a turn of which the runner has no run: never handed over, or forgotten
// (the runner's history of it purged).
var ErrChatNotFound = errors.New("web: the runner has no run for the turn")

const (
	// remoteCheckAfter is how long a remote turn shows nothing new (or,
	// listed, how old it is) before a process asks whether it still runs,
	// and the least time between two such questions about one turn from
	// one process.
	remoteCheckAfter = 5 * time.Second
	// remoteLostAfter is how old a remote turn's record must be for a
	// runner that has no run for it to end it: longer than the hand-over
	// (StartChat is given 30 s).
	remoteLostAfter = 2 * time.Minute
	// remoteLostReason is the error message of a turn the runner has no
	// run for.
	remoteLostReason = "the durable runner has no workflow for the turn"
)

// chatEnded asks the handler's RemoteWatcher, if its Remote is one and the
// turn is due, whether the remote turn id, recorded at started, ended:
// its reason when it did.
func (h *handler) chatEnded(ctx context.Context, id string, started time.Time) (string, bool) {
	w, ok := h.opts.Remote.(RemoteWatcher)
	if !ok || h.opts.Remote == nil || !h.checks.Due(id, time.Now()) {
		return "", false
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ended, reason, err := w.ChatEnded(cctx, id)
	if errors.Is(err, ErrChatNotFound) && started.Before(time.Now().Add(-remoteLostAfter)) {
		return remoteLostReason, true
	}
	if err != nil || !ended {
		return "", false
	}
	if reason == "" {
		reason = "the run of the turn ended without its end"
	}
	return reason, true
}

// endRemoteChat ends the remote chat turn rr (run record key) failed if
// its run ended without writing its end: its open tool calls answered and
// the error event, as the worker ends a failed turn (ChatEvents.End), then
// the run record deleted while it names the turn (FinishChat). A log
// already ended (the worker's end, written meanwhile) is kept. It
// reports whether the turn is over.
func (h *handler) endRemoteChat(ctx context.Context, recs session.Records, key string, rr runRecord) bool {
	l := ChatLog{Key: key, Run: rr.Run}
	reason, ended := h.chatEnded(ctx, l.ID(), time.UnixMilli(rr.Started))
	if !ended {
		return false
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	log := h.eventLog(recs)
	events, final, err := log.Read(wctx, l.EventLog(), -1)
	if err != nil {
		return false
	}
	if !final {
		if err := finishChat(wctx, recs, l, endedEvents(l, events, reason)); err != nil {
			h.log.WarnContext(ctx, "web: ending a remote turn whose run ended", "turn", l.ID(), "err", err)
			return false
		}
		return true
	}
	return endRecord(wctx, recs, key, rr.Run) == nil
}

// endedEvents are the last events of the remote turn l, whose stored
// events are events, ended failed with reason: each tool call not yet
// answered answered with an error, then the error event.
func endedEvents(l ChatLog, events []runlog.Event, reason string) []runlog.Event {
	l.Seq = 0
	if n := len(events); n > 0 {
		l.Seq = events[n-1].Seq + 1
	}
	e := NewChatEvents(l)
	for _, ev := range events {
		switch ev.Type {
		case "tool_call":
			if it, ok := decodeItem(ev.Data); ok && it.ID != "" {
				e.open = append(e.open, it.ID)
			}
		case "tool_result":
			if it, ok := decodeItem(ev.Data); ok {
				e.answered(it.ToolCallID)
			}
		}
	}
	out, _ := e.End(nil, errors.New(reason), false)
	return out
}
