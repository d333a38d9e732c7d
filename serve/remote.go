package serve

// Background turns run by another process: a RemoteRunner (a durable
// runner's workers). The process that accepts the turn claims its id,
// writes its first events and hands it over; whatever runs it turns the
// agent's updates into the Responses events with ResponseEvents (the
// same translation as a turn of this process: respSink) and ends it with
// FinishResponse. Every process reads the outcome from the record and the
// events from the log, as for a turn of its own.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// RemoteRunner is a Runner (Options.Runner) whose background turns run in
// other processes, which outlive the one that accepted them: the workers
// of a durable runner. For such a turn the Handler claims the response id,
// writes the turn's first events and its record, and calls StartRemote
// instead of Start; what runs the turn writes its events (ResponseEvents)
// and its outcome (FinishResponse) to the store. The record's lease is
// then not the accepting process's: the turn is never declared lost when
// that process dies. POST /v1/responses/{id}/cancel, on any process,
// calls CancelRemote. A turn the remote runner cannot take (one with the
// client's declared tools, or a tool choice other than auto) is started
// with Start, in this process.
type RemoteRunner interface {
	Runner
	// StartRemote starts t elsewhere and returns once it was handed over.
	// An error refuses the turn (the client gets a 503).
	StartRemote(ctx context.Context, t RemoteTurn) error
	// CancelRemote asks the turn of response id to stop; it ends
	// "cancelled", its tool calls answered. A turn unknown to the runner
	// is not an error.
	CancelRemote(ctx context.Context, responseID string) error
}

// RemoteTurn is a background turn for a RemoteRunner: what to run, as
// data, and where its events and outcome go.
type RemoteTurn struct {
	// Agent names the agent (host.Set).
	Agent string
	// Owner is the principal the session store is scoped to
	// (session.Scoped), SessionID the session the turn is appended to.
	Owner, SessionID string
	// Input is the turn's new messages; Instructions, Temperature and
	// MaxTokens the request's (agent.RunOptions).
	Input        []llm.Message
	Instructions string   `json:",omitempty"`
	Temperature  *float64 `json:",omitempty"`
	MaxTokens    int      `json:",omitempty"`
	// TurnID is the run id of the stored turn (the response id without
	// its prefix, as a turn of this process).
	TurnID string
	// Timeout bounds the turn (Options.TurnTimeout); 0: none.
	Timeout time.Duration `json:",omitempty"`
	// Quota is the server's spending limit of the principal (Options.Quota),
	// kept in the store's records; nil: none.
	Quota *RemoteQuota `json:",omitempty"`
	// Log is where the turn's events and outcome go.
	Log ResponseLog
	// AGUI, when set, makes the turn an AG-UI run (POST /agui/{agent}):
	// its events are AG-UI's (AGUIEvents), written to AGUI's log and
	// ended by FinishAGUI; Log is then empty.
	AGUI *AGUILog `json:",omitempty"`
}

// RemoteQuota is a principal's spending limit (Options.Quota) for a
// remote turn: Principal is whose (the request's principal, which may
// differ from RemoteTurn.Owner: the local principal's sessions are not
// scoped).
type RemoteQuota struct {
	Principal     string
	Total, PerDay budget.Limits
}

// ResponseLog is a remote background turn's place in the store: its
// response record and its event log.
type ResponseLog struct {
	// ResponseID is the response's id, Principal the principal that
	// created it, Run its event log's run (package runlog).
	ResponseID, Principal, Run string
	// Response is the response object as the turn began.
	Response json.RawMessage
	// Seq is the number of the turn's next event.
	Seq int64
	// MaxBytes bounds the events stored (past it only the final one is);
	// Retention is how long the events, and a failed or cancelled
	// response, are kept.
	MaxBytes  int64
	Retention time.Duration
	// Slot and SlotVersion name the principal's background slot the turn
	// holds (Options.MaxBackground), freed by FinishResponse.
	Slot        string `json:",omitempty"`
	SlotVersion int64  `json:",omitempty"`
}

// ResponseEvents turns a remote background turn's agent updates into the
// Responses API's events, numbered from ResponseLog.Seq, exactly as a turn
// of the serving process streams them. It does no I/O: the caller takes
// the events (Take) and writes them (runlog.Log.AppendBatch), then ends
// the turn with End and FinishResponse. Given the same updates and the
// same ids it makes the same events, byte for byte.
type ResponseEvents struct {
	sink    *respSink
	max     int64
	size    int64
	pending []runlog.Event
}

// NewResponseEvents starts the events of l's turn. ids, when not nil,
// makes the output items' ids (prefix, then anything unique in the
// response); nil makes random ones.
func NewResponseEvents(l ResponseLog, ids func(prefix string) string) (*ResponseEvents, error) {
	var obj responseObject
	if err := json.Unmarshal(l.Response, &obj); err != nil {
		return nil, fmt.Errorf("serve: the response of %s: %w", l.ResponseID, err)
	}
	e := &ResponseEvents{max: l.MaxBytes}
	if e.max <= 0 {
		e.max = DefaultEventLogMaxBytes
	}
	e.sink = &respSink{obj: &obj, open: -1, seq: int(l.Seq), ids: ids, collect: e.add}
	return e, nil
}

func (e *ResponseEvents) add(ev runlog.Event) {
	size := int64(len(ev.Data) + len(ev.Type) + 32)
	if e.size+size > e.max {
		return // past the bound: only the final event is stored
	}
	e.size += size
	e.pending = append(e.pending, ev)
}

// Update adds the events of one of the turn's updates (the finish update
// adds none: End ends the output).
func (e *ResponseEvents) Update(u agent.Update) error {
	return feed(e.sink, u, nil)
}

// Take returns the events made since the last Take.
func (e *ResponseEvents) Take() []runlog.Event {
	out := e.pending
	e.pending = nil
	return out
}

// ResponseOutcome is how a remote background turn ended: its record's
// status, the final response object, and the turn's last events, the
// final one (response.completed, .incomplete, .failed or .cancelled)
// last.
type ResponseOutcome struct {
	Status   string
	Response json.RawMessage
	Events   []runlog.Event
}

// End ends the turn's output as a turn of the serving process ends: resp
// and err are the run's (agent.Stream.Each's; an err wrapping
// context.DeadlineExceeded fails it with the code "timeout"); cancelled
// reports that a cancellation (CancelRemote) ended it, and then every tool
// call of the output is answered. Failed is the error to log, nil when the turn did
// not fail.
func (e *ResponseEvents) End(resp *agent.Response, err error, cancelled bool) (out ResponseOutcome, failed error) {
	ctx := context.Background()
	if errors.Is(err, context.DeadlineExceeded) {
		// The turn's time ran out: the error says so (turnError reads it
		// from the context).
		c, cancel := context.WithDeadline(ctx, time.Time{})
		defer cancel()
		ctx = c
	}
	event, status, failed := e.sink.outcome(ctx, resp, err, cancelled)
	body, _ := json.Marshal(e.sink.obj)
	final := runlog.Event{Seq: int64(e.sink.seq), Type: event, Data: finalEvent(event, int64(e.sink.seq), body)}
	e.sink.seq++
	return ResponseOutcome{Status: status, Response: body, Events: append(e.Take(), final)}, failed
}

// outcome ends s's output with the turn's end (resp and err as runTurn
// or agent.Stream.Each returned them; cancelled when a cancellation asked
// through the API ended it): the open item closed, the response object's
// status, error, usage set, and, for a turn that failed or was
// cancelled, every tool call answered. It returns the final event's type,
// the record's status, and the turn's error when it failed.
func (s *respSink) outcome(ctx context.Context, resp *agent.Response, err error, cancelled bool) (event, status string, failed error) {
	obj := s.obj
	var stopped error
	if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
		stopped, err = err, nil
	}
	if err == nil && resp == nil {
		err = errors.New("serve: the turn ended without a response")
	}
	if err == nil {
		err = resp.PersistErr()
	}
	_ = s.close()
	event, status = "response.completed", "completed"
	switch {
	case err != nil && cancelled:
		event, status = "response.cancelled", "cancelled"
		obj.Status = "cancelled"
		s.answerCalls("the response was cancelled before the call ended")
	case err != nil:
		e := turnError(ctx, err)
		var pe *agent.PersistError
		if errors.As(err, &pe) {
			e = &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "persist_failed", Message: "the turn could not be stored"}
		}
		failed = err
		event, status = "response.failed", "failed"
		obj.Status = "failed"
		obj.Error = &responseError{Code: e.Code, Message: e.Message}
		s.answerCalls("the response failed before the call ended")
	default:
		if completeResponse(ctx, obj, resp, stopped) == "incomplete" {
			event = "response.incomplete"
		}
	}
	return event, status, failed
}

// completeResponse sets obj as the response of a turn that answered:
// completed, or incomplete when the answer hit its token limit or stopped
// was a spending limit that cut the turn short (its error then); usage
// and budget from resp. It returns obj's status.
func completeResponse(ctx context.Context, obj *responseObject, resp *agent.Response, stopped error) string {
	obj.Status = "completed"
	if resp.FinishReason == llm.FinishLength {
		obj.Status = "incomplete"
		obj.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"max_output_tokens"}
	}
	if stopped != nil {
		// Stored, but cut short: incomplete, with the limit as its error.
		obj.Status = "incomplete"
		obj.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"budget"}
		e := turnError(ctx, stopped)
		obj.Error = &responseError{Code: e.Code, Message: e.Message}
	}
	obj.Usage = responseUsageOf(resp.Usage)
	obj.Usage.Budget = resp.Budget
	return obj.Status
}

// FinishResponse writes a remote background turn's outcome: its record
// first (a poll after the stream's end sees the outcome), then its last
// events, the final one last, in one write. Written again (a retry), it
// changes nothing. It returns an error wrapping session.ErrConflict when
// the record is no longer the turn's.
func FinishResponse(ctx context.Context, recs session.Records, l ResponseLog, o ResponseOutcome) error {
	retention := l.Retention
	if retention <= 0 {
		retention = DefaultEventLogRetention
	}
	s := &slot{recs: recs, id: l.ResponseID, run: l.Run}
	keep := retention
	if o.Status == "completed" {
		keep = responseRetention
	}
	_, err := s.update(ctx, l.Run, func(sr *slotRecord, rec *session.Record) {
		sr.Status, sr.Response, sr.Principal, sr.Ended, sr.Cancel = o.Status, o.Response, l.Principal, time.Now().UnixMilli(), false
		rec.Expires = time.Now().Add(keep)
	})
	if errors.Is(err, errSlotLost) {
		// Already ended by an earlier attempt of this write, or replaced.
		cur, gerr := recs.GetRecord(ctx, responsesNamespace, l.ResponseID)
		var sr slotRecord
		if gerr != nil || json.Unmarshal(cur.Value, &sr) != nil || sr.Run != l.Run {
			return fmt.Errorf("serve: response %s is no longer the turn's: %w", l.ResponseID, session.ErrConflict)
		}
		err = nil
	}
	if err != nil {
		return err
	}
	if l.Slot != "" {
		(&bgSlot{recs: recs, key: l.Slot, version: l.SlotVersion}).release(ctx)
	}
	log := &runlog.Log{Records: recs, Retention: retention}
	return log.AppendBatch(ctx, l.Run, o.Events, true)
}

// remoteable reports whether a remote runner can run a turn with opts:
// one that needs nothing but data (no declared tools of the client, no
// tools or session given in memory).
func remoteable(opts *agent.RunOptions) bool {
	return len(opts.Declared) == 0 && len(opts.Tools) == 0 && opts.Session == nil && opts.ResponseFormat == nil &&
		opts.Budget == nil && opts.SessionBudget == nil && opts.ToolChoice == (llm.ToolChoice{})
}

// startRemote starts a background turn on a remote runner: the record
// (its lease the retention's: no process of this server renews it), the
// turn's first events, then the hand-over. unlock (the session's lock in
// this process) is released once the turn is handed over; attached, when
// not nil, is given the turn's events from the log.
func (h *Handler) startRemote(r *http.Request, rr RemoteRunner, a host.Agent, msgs []llm.Message, opts *agent.RunOptions, obj *responseObject, sl *slot, count *bgSlot, unlock func(), attached *attachedClient) ([]byte, *apiError) {
	ctx := r.Context()
	principal, _ := host.PrincipalFrom(ctx)
	recs := sl.recs
	fail := func() { count.release(ctx) }
	h.mu.Lock()
	stopping := h.draining
	h.mu.Unlock()
	if stopping {
		fail()
		return nil, draining()
	}
	retention := h.retention()
	// The principal's background slot lasts as long as the turn may: what
	// runs it frees it at its end (FinishResponse).
	if err := count.extend(ctx, time.Now().Add(retention)); err != nil {
		fail()
		return nil, storeError()
	}
	obj.Background = true
	body, _ := json.Marshal(obj)
	sr := slotRecord{Status: "in_progress", Principal: principal, Response: body, Background: true,
		Lease: time.Now().Add(retention).UnixMilli(), Run: sl.run, Remote: &remoteRef{Agent: a.Name, Session: opts.SessionID, Slot: count.key, SlotVersion: count.version}}
	if err := sl.rewrite(ctx, sr, time.Now().Add(retention)); err != nil {
		fail()
		h.log.LogAttrs(ctx, slog.LevelError, "starting a background response", slog.String("id", obj.ID), slog.String("error", err.Error()))
		return nil, storeError()
	}
	var first []runlog.Event
	s := &respSink{obj: obj, open: -1, collect: func(ev runlog.Event) { first = append(first, ev) }}
	_ = s.emitResponse("response.created", body)
	_ = s.emitResponse("response.in_progress", body)
	log := h.eventLog(recs)
	if err := log.AppendBatch(ctx, sl.run, first, false); err != nil {
		fail()
		return nil, storeError()
	}
	t := RemoteTurn{Agent: a.Name, Owner: host.Owner(ctx), SessionID: opts.SessionID, Input: msgs,
		Instructions: opts.Instructions, Temperature: opts.Temperature, MaxTokens: opts.MaxTokens,
		TurnID: strings.TrimPrefix(obj.ID, "resp_"), Timeout: h.opts.TurnTimeout, Quota: h.remoteQuota(principal),
		Log: ResponseLog{ResponseID: obj.ID, Principal: principal, Run: sl.run, Response: body, Seq: int64(s.seq),
			MaxBytes: h.opts.EventLogMaxBytes, Retention: retention, Slot: count.key, SlotVersion: count.version}}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := rr.StartRemote(sctx, t); err != nil {
		fail()
		h.log.LogAttrs(ctx, slog.LevelError, "starting a remote background response", slog.String("id", obj.ID), slog.String("error", err.Error()))
		return nil, &apiError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "runner_unavailable", Message: "the background turn could not be started"}
	}
	unlock()
	if attached != nil {
		// The client that asked for the stream reads it from the log, as
		// any follower: its events are written by the remote runner.
		idle := h.followIdle(log, recs, obj.ID, sl.run)
		go func() {
			defer close(attached.done)
			for ev, err := range log.Follow(ctx, sl.run, -1, idle) {
				if err != nil {
					return
				}
				attached.send(ev.Type, ev.Data)
			}
		}()
	}
	return body, nil
}

// extend makes the slot last until expires (a remote turn's: no process of
// the server renews it).
func (s *bgSlot) extend(ctx context.Context, expires time.Time) error {
	rec, err := s.recs.GetRecord(ctx, backgroundNamespace, s.key)
	if err != nil {
		return err
	}
	if rec.Version != s.version {
		return fmt.Errorf("serve: background slot %s: %w", s.key, session.ErrConflict)
	}
	rec.Expires = expires
	got, err := s.recs.UpdateRecord(ctx, backgroundNamespace, rec)
	if err != nil {
		return err
	}
	s.version = got.Version
	return nil
}

// remoteQuota is principal's spending limit for a remote turn, or nil.
func (h *Handler) remoteQuota(principal string) *RemoteQuota {
	q := h.opts.Quota
	if q == nil {
		return nil
	}
	return &RemoteQuota{Principal: principal, Total: q.Total, PerDay: q.PerDay}
}
