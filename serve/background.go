package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// Defaults of the background turns' limits (Options).
const (
	// DefaultMaxBackground is Options.MaxBackground's default: the
	// background turns one principal may have running at once.
	DefaultMaxBackground = 16
	// DefaultEventLogMaxBytes is Options.EventLogMaxBytes's default.
	DefaultEventLogMaxBytes = runlog.DefaultMaxBytes
	// DefaultEventLogRetention is Options.EventLogRetention's default.
	DefaultEventLogRetention = runlog.DefaultRetention
)

// backgroundNamespace holds the slots of the running background turns,
// PRINCIPAL/N, each living as long as its turn's lease: a principal's
// background turns across processes (bglimit.go).
const backgroundNamespace = "agcore.background"

// bgPoll is how often a background turn's process reads its record (a
// cancellation asked in another process) and how often a follower that
// found no new event looks at the turn's record.
const bgPoll = 250 * time.Millisecond

// endedGrace is how long a turn's record may say it ended while its event
// log lacks the final event before a follower ends the log itself (its
// process died between the two writes).
const endedGrace = 2 * time.Second

// errCancelRequested is the cause of a background turn's cancellation
// through POST /v1/responses/{id}/cancel.
var errCancelRequested = errors.New("serve: the response was cancelled")

// Runner starts background turns: Responses turns created with
// "background": true, which run on with no client attached. The
// Handler's default runs each on a goroutine of its process
// ([InProcess]); a durable runner (a workflow engine's worker) can take
// its place. Whatever runs the turn writes its events to the event log
// (package runlog) and its outcome to its response record, which is what
// every process reads to answer GET /v1/responses/{id} (polled or
// streamed) and cancellations; Run does both for the process's own
// goroutine.
type Runner interface {
	// Start starts t and returns once it runs (or was handed over); ctx
	// is detached from the request and carries its principal, quota and
	// turn hooks. An error refuses the turn (the client gets a 503).
	Start(ctx context.Context, t BackgroundTurn) error
}

// BackgroundTurn is a turn for a Runner: what to run, and Run, the
// turn as this process runs it.
type BackgroundTurn struct {
	// Agent names the agent (host.Set); ResponseID is the turn's
	// response id, Principal the principal that started it.
	Agent, ResponseID, Principal string
	// Input and Options are the turn's run (agent.Agent.RunStream).
	Input   []llm.Message
	Options *agent.RunOptions
	// Run runs the turn here, to its end: its events go to the event log,
	// its outcome to its response record, and its session is unlocked.
	Run func(ctx context.Context)
}

// InProcess is the default Runner: each turn on a goroutine of this
// process. (Without a Runner set, a turn whose client streams it runs on
// the goroutine of that client's request instead, which waits for it
// anyway; the client leaving does not end it.) A turn ends failed when its process dies (see
// Options.MaxBackground's lease); Handler.Drain waits for the turns in
// progress like for any other.
type InProcess struct{}

// Start implements Runner.
func (InProcess) Start(ctx context.Context, t BackgroundTurn) error {
	go t.Run(ctx)
	return nil
}

// bgRun is a background turn of this process.
type bgRun struct {
	cancel context.CancelCauseFunc
}

// eventLog returns the event log over recs, one per records.
func (h *Handler) eventLog(recs session.Records) *runlog.Log {
	h.bgMu.Lock()
	defer h.bgMu.Unlock()
	if h.logs == nil {
		h.logs = make(map[session.Records]*runlog.Log)
	}
	l := h.logs[recs]
	if l == nil {
		l = &runlog.Log{Records: recs, MaxBytes: h.opts.EventLogMaxBytes, Retention: h.opts.EventLogRetention, Logger: h.log}
		h.logs[recs] = l
	}
	return l
}

func (h *Handler) maxBackground() int {
	if h.opts.MaxBackground > 0 {
		return h.opts.MaxBackground
	}
	return DefaultMaxBackground
}

func (h *Handler) retention() time.Duration {
	if h.opts.EventLogRetention > 0 {
		return h.opts.EventLogRetention
	}
	return DefaultEventLogRetention
}

// startBackground starts a background turn whose id pos claimed; it owns
// unlock (the session's lock) from now on, and the slot. On error the
// caller frees both.
//
// attached, when not nil, is the client that asked for the turn's stream:
// the turn writes its events to it as well as to the log while it stays
// (no hand-over between goroutines per event), and closes done at its
// end.
func (h *Handler) startBackground(r *http.Request, a host.Agent, msgs []llm.Message, opts *agent.RunOptions, obj *responseObject, pos position, unlock func(), attached *attachedClient) (started []byte, apiErr *apiError) {
	principal, _ := host.PrincipalFrom(r.Context())
	sl := pos.slot
	recs := sl.recs
	ctx := r.Context()

	// The principal's turns at once, across the processes of the store
	// (bglimit.go).
	count, err := claimBackground(ctx, recs, principal, obj.ID, h.maxBackground())
	if errors.Is(err, errNoBackgroundSlot) {
		return nil, &apiError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "too_many_background_responses",
			Message: fmt.Sprintf("at most %d background responses may run at once; wait for one to end or cancel one", h.maxBackground())}
	}
	if err != nil {
		return nil, storeError()
	}

	run := obj.ID + "." + newID("")[:16]
	sl.run = run
	runner := h.opts.Runner
	if rr, ok := runner.(RemoteRunner); ok && remoteable(opts) {
		return h.startRemote(r, rr, a, msgs, opts, obj, sl, count, unlock, attached)
	}
	log := h.eventLog(recs)
	w, err := log.Writer(run)
	if err != nil {
		count.release(ctx)
		return nil, storeError()
	}
	obj.Background = true
	body, _ := json.Marshal(obj)
	sr := slotRecord{Status: "in_progress", Principal: principal, Response: body, Background: true,
		Lease: time.Now().Add(slotLease).UnixMilli(), Run: run}
	if err := sl.rewrite(ctx, sr, time.Now().Add(h.retention())); err != nil {
		w.Abandon()
		count.release(ctx)
		h.log.LogAttrs(ctx, slog.LevelError, "starting a background response", slog.String("id", obj.ID), slog.String("error", err.Error()))
		return nil, storeError()
	}

	// The turn's context: the request's values, not its end.
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var stop context.CancelFunc = func() {}
	if h.opts.TurnTimeout > 0 {
		tctx, stop = context.WithTimeout(tctx, h.opts.TurnTimeout)
	}
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		stop()
		cancel(nil)
		w.Abandon()
		count.release(ctx)
		return nil, draining()
	}
	end := h.register(&turnCancel{cancel: cancel}, func() { stop(); cancel(nil) })
	h.mu.Unlock()

	s := &respSink{obj: obj, open: -1, log: w, attached: attached}
	// The response as the record has it, not encoded again.
	_ = s.emitResponse("response.created", body)
	_ = s.emitResponse("response.in_progress", body)

	h.bgMu.Lock()
	if h.bgRuns == nil {
		h.bgRuns = make(map[string]*bgRun)
	}
	h.bgRuns[obj.ID] = &bgRun{cancel: cancel}
	h.bgMu.Unlock()

	turn := BackgroundTurn{Agent: a.Name, ResponseID: obj.ID, Principal: principal, Input: msgs, Options: opts}
	turn.Run = func(ctx context.Context) {
		defer end()
		if attached != nil {
			defer close(attached.done)
		}
		defer unlock()
		defer func() {
			h.bgMu.Lock()
			delete(h.bgRuns, obj.ID)
			h.bgMu.Unlock()
			dctx, c := context.WithTimeout(context.Background(), 10*time.Second)
			count.release(dctx)
			c()
		}()
		h.runBackground(ctx, cancel, a, msgs, opts, s, sl, count)
	}
	if runner == nil {
		if attached != nil {
			// The client that asked for the turn's stream waits for it on
			// this goroutine: the turn runs here, sparing two hand-overs
			// between goroutines; its context is not the request's, so the
			// client leaving does not end it (the handler returns at its end).
			turn.Run(tctx)
			return body, nil
		}
		runner = InProcess{}
	}
	if err := runner.Start(tctx, turn); err != nil {
		end()
		w.Abandon()
		h.bgMu.Lock()
		delete(h.bgRuns, obj.ID)
		h.bgMu.Unlock()
		count.release(ctx)
		return nil, &apiError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "runner_unavailable", Message: "the background turn could not be started"}
	}
	return body, nil
}

// runBackground runs a background turn to its end: the output's events
// to the log, the final response to the record.
func (h *Handler) runBackground(ctx context.Context, cancel context.CancelCauseFunc, a host.Agent, msgs []llm.Message, opts *agent.RunOptions, s *respSink, sl *slot, count *bgSlot) {
	obj := s.obj
	principal, _ := host.PrincipalFrom(ctx)
	stopKeep := sl.keepBackground(cancel, count)
	resp, err := runTurn(ctx, a, msgs, opts, strings.TrimPrefix(obj.ID, "resp_"), s)
	event, status, failed := s.outcome(ctx, resp, err, errors.Is(context.Cause(ctx), errCancelRequested))
	if failed != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "background turn failed", attrs(a.Name, obj.ID, failed)...)
	}
	stopKeep()
	// The record first (a poll after the stream's end sees the outcome),
	// then the log's final event.
	body, _ := json.Marshal(obj)
	wctx, c := context.WithTimeout(context.Background(), 10*time.Second)
	defer c()
	if err := sl.finish(wctx, status, principal, body, h.retention()); err != nil {
		h.log.LogAttrs(wctx, slog.LevelWarn, "storing a background response", slog.String("id", obj.ID), slog.String("error", err.Error()))
	}
	data := finalEvent(event, int64(s.seq), body)
	s.attached.send(event, data)
	if err := s.log.Close(wctx, runlog.Event{Seq: int64(s.seq), Type: event, Data: data}); err != nil {
		h.log.LogAttrs(wctx, slog.LevelWarn, "ending a background response's events", slog.String("id", obj.ID), slog.String("error", err.Error()))
	}
	s.seq++
}

// answerCalls gives every function call of the output that has no
// output yet one saying why (a turn cancelled or failed mid-call), so that
// the response lists every call answered.
func (s *respSink) answerCalls(why string) {
	answered := map[string]bool{}
	for _, it := range s.obj.Output {
		if it.Type == "function_call_output" {
			answered[it.CallID] = true
		}
	}
	for _, it := range s.obj.Output {
		if it.Type != "function_call" || answered[it.CallID] || it.ParentCallID != "" {
			continue
		}
		answered[it.CallID] = true
		_ = s.resultItem(&llm.Message{Role: llm.RoleTool, ToolCallID: it.CallID, Content: []llm.Block{llm.Text{Text: why}}}, it.Agent, "")
	}
}

// rewrite replaces the claim's record with sr (a background turn's),
// kept until expires.
func (s *slot) rewrite(ctx context.Context, sr slotRecord, expires time.Time) error {
	v := sr.encode()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.recs.UpdateRecord(ctx, responsesNamespace, session.Record{Key: s.id, Value: v, Version: s.version, Expires: expires})
	if err != nil {
		return err
	}
	s.version = rec.Version
	return nil
}

// update applies fn to the background record of the claim while it is
// still this turn's (its run), compare-and-swap, trying again on a
// conflict. It returns errSlotLost when the record is another's.
func (s *slot) update(ctx context.Context, run string, fn func(*slotRecord, *session.Record)) (slotRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		cur, err := s.recs.GetRecord(ctx, responsesNamespace, s.id)
		if errors.Is(err, session.ErrNotFound) {
			return slotRecord{}, errSlotLost
		}
		if err != nil {
			return slotRecord{}, err
		}
		var sr slotRecord
		if json.Unmarshal(cur.Value, &sr) != nil || sr.Run != run || sr.Status != "in_progress" {
			return sr, errSlotLost
		}
		fn(&sr, &cur)
		cur.Value = sr.encode()
		got, err := s.recs.UpdateRecord(ctx, responsesNamespace, cur)
		if errors.Is(err, session.ErrConflict) {
			continue
		}
		if err != nil {
			return sr, err
		}
		s.version = got.Version
		return sr, nil
	}
}

// keepBackground renews a background turn's lease (and its count
// record) and watches its record for a cancellation asked in any
// process, every bgPoll, until the stop it returns is called. A record
// that is no longer the turn's (another process declared it lost)
// cancels the turn with errSlotLost. It runs on a timer, not a goroutine
// of its own: a turn shorter than bgPoll costs one timer.
func (s *slot) keepBackground(cancel context.CancelCauseFunc, count *bgSlot) (stop func()) {
	run := s.run
	var (
		mu      sync.Mutex
		stopped bool
		timer   *time.Timer
		busy    sync.WaitGroup
	)
	renewed := time.Now()
	var tick func()
	tick = func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		busy.Add(1)
		mu.Unlock()
		defer busy.Done()
		ctx, c := context.WithTimeout(context.Background(), slotLease/3)
		defer c()
		cur, err := s.recs.GetRecord(ctx, responsesNamespace, s.id)
		var sr slotRecord
		if err == nil && (json.Unmarshal(cur.Value, &sr) != nil || sr.Run != run || sr.Status != "in_progress") {
			err = errSlotLost
		}
		switch {
		case errors.Is(err, errSlotLost) || errors.Is(err, session.ErrNotFound):
			cancel(errSlotLost)
			return
		case err != nil: // the store is unreachable: the lease lasts
		case sr.Cancel:
			cancel(errCancelRequested)
		}
		if err == nil && time.Since(renewed) >= slotLease/3 {
			if _, err := s.update(ctx, run, func(sr *slotRecord, _ *session.Record) {
				sr.Lease = time.Now().Add(slotLease).UnixMilli()
			}); err == nil {
				renewed = time.Now()
				count.renew(ctx)
			}
		}
		mu.Lock()
		if !stopped {
			timer.Reset(bgPoll)
		}
		mu.Unlock()
	}
	mu.Lock()
	timer = time.AfterFunc(bgPoll, tick)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		timer.Stop()
		mu.Unlock()
		busy.Wait()
	}
}

// finish writes a background turn's outcome to its record: status and
// the response object, kept for retention (a stored turn's for the
// responses' retention).
func (s *slot) finish(ctx context.Context, status, principal string, body []byte, retention time.Duration) error {
	keep := retention
	if status == "completed" {
		keep = responseRetention
	}
	// Most often the record is as this process last wrote it: one write.
	s.mu.Lock()
	sr := slotRecord{Status: status, Principal: principal, Response: body, Background: true, Run: s.run, Ended: time.Now().UnixMilli()}
	rec, err := s.recs.UpdateRecord(ctx, responsesNamespace, session.Record{Key: s.id, Value: sr.encode(), Version: s.version, Expires: time.Now().Add(keep)})
	if err == nil {
		s.version = rec.Version
	}
	s.mu.Unlock()
	if !errors.Is(err, session.ErrConflict) {
		return err
	}
	_, err = s.update(ctx, s.run, func(sr *slotRecord, rec *session.Record) {
		sr.Status, sr.Response, sr.Principal, sr.Ended, sr.Cancel = status, body, principal, time.Now().UnixMilli(), false
		rec.Expires = time.Now().Add(keep)
	})
	return err
}

// markLost declares the background turn of rec failed because its
// process was lost (its lease passed), compare-and-swap: it returns the
// record as it now is, and whether this call changed it.
func markLost(ctx context.Context, recs session.Records, rec session.Record) (slotRecord, bool, error) {
	var sr slotRecord
	if err := json.Unmarshal(rec.Value, &sr); err != nil {
		return sr, false, err
	}
	if !sr.lost(time.Now()) {
		return sr, false, nil
	}
	var obj responseObject
	if err := json.Unmarshal(sr.Response, &obj); err != nil {
		return sr, false, err
	}
	obj.Status = "failed"
	obj.Error = &responseError{Code: "replica_lost", Message: "the server process running the response was lost before it ended"}
	sr.Response, _ = json.Marshal(&obj)
	sr.Status, sr.Ended, sr.Cancel = "failed", time.Now().UnixMilli(), false
	rec.Value = sr.encode()
	if _, err := recs.UpdateRecord(ctx, responsesNamespace, rec); err != nil {
		if errors.Is(err, session.ErrConflict) {
			cur, gerr := recs.GetRecord(ctx, responsesNamespace, rec.Key)
			if gerr != nil {
				return sr, false, gerr
			}
			var now slotRecord
			if err := json.Unmarshal(cur.Value, &now); err != nil {
				return sr, false, err
			}
			return now, false, nil
		}
		return sr, false, err
	}
	return sr, true, nil
}

// backgroundRecord finds the record of response id for principal, in
// the records of the server's agents: the records, the record, and its
// value. ok is false when there is none the principal may see.
func (h *Handler) backgroundRecord(ctx context.Context, id, principal string) (recs session.Records, rec session.Record, sr slotRecord, ok bool, err error) {
	if session.CheckRecord(responsesNamespace, id) != nil {
		return nil, rec, sr, false, nil
	}
	seen := map[session.Records]bool{}
	for _, a := range h.opts.Agents.All() {
		r, has := session.RecordsOf(a.Store)
		if !has || seen[r] {
			continue
		}
		seen[r] = true
		got, gerr := r.GetRecord(ctx, responsesNamespace, id)
		if errors.Is(gerr, session.ErrNotFound) {
			continue
		}
		if gerr != nil {
			return nil, rec, sr, false, gerr
		}
		var v slotRecord
		if json.Unmarshal(got.Value, &v) != nil || v.Principal != principal {
			continue
		}
		return r, got, v, true, nil
	}
	return nil, rec, sr, false, nil
}

// streamStored serves GET /v1/responses/{id}?stream=true: the events of
// a background response after starting_after (from the first without
// it), as they come, to its final event; on any process, while it runs
// and after it ended (within the event log's retention).
func (h *Handler) streamStored(w http.ResponseWriter, r *http.Request) {
	principal, _ := host.PrincipalFrom(r.Context())
	id := r.PathValue("id")
	after := int64(-1)
	if v := r.URL.Query().Get("starting_after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, invalid("starting_after", "starting_after must be a sequence number (an integer, 0 or more)"))
			return
		}
		after = n
	}
	recs, _, sr, ok, err := h.backgroundRecord(r.Context(), id, principal)
	switch {
	case err != nil:
		writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the response could not be read"})
		return
	case !ok:
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "response_not_found", Message: "no such response"})
		return
	case !sr.Background || sr.Run == "":
		writeError(w, invalid("stream", "only a response created with background: true can be streamed again"))
		return
	}
	h.follow(w, r, recs, id, sr.Run, after)
}

// follow streams the event log of run (response id's) after event after.
func (h *Handler) follow(w http.ResponseWriter, r *http.Request, recs session.Records, id, run string, after int64) {
	log := h.eventLog(recs)
	out := newSSE(w, h.flushEvery)
	defer out.close()
	for ev, err := range log.Follow(r.Context(), run, after, h.followIdle(log, recs, id, run)) {
		if err != nil {
			if r.Context().Err() == nil {
				h.log.LogAttrs(r.Context(), slog.LevelWarn, "following a background response", slog.String("id", id), slog.String("error", err.Error()))
				if !out.isStarted() {
					writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "response_not_found", Message: "the response's events are no longer kept"})
				}
			}
			return
		}
		if out.write(ev.Type, ev.Data) != nil {
			return // the client went away; the turn goes on
		}
	}
}

// followIdle is what a follower of run (response id's) does when it
// found no new event: it looks at the turn's record (at most every
// bgPoll), declares a turn whose process was lost failed, and ends a log
// whose turn ended without its final event.
func (h *Handler) followIdle(log *runlog.Log, recs session.Records, id, run string) func(ctx context.Context, last int64) error {
	var (
		checked time.Time
		quiet   idleSince
	)
	return func(ctx context.Context, last int64) error {
		idle := quiet.idle(last, time.Now())
		if log.Running(run) || time.Since(checked) < bgPoll {
			return nil
		}
		checked = time.Now()
		rec, err := recs.GetRecord(ctx, responsesNamespace, id)
		if err != nil {
			if errors.Is(err, session.ErrNotFound) {
				return fmt.Errorf("serve: response %s: %w", id, session.ErrNotFound)
			}
			return nil // the store is unreachable: look again
		}
		var sr slotRecord
		if json.Unmarshal(rec.Value, &sr) != nil || sr.Run != run {
			return fmt.Errorf("serve: response %s was replaced", id)
		}
		now := false
		if sr.lost(time.Now()) {
			if sr, now, err = markLost(ctx, recs, rec); err != nil {
				return nil
			}
		}
		if sr.Remote != nil && sr.Status == "in_progress" && idle >= RemoteCheckAfter {
			// A remote turn quiet for a while: its run may have ended
			// without its outcome (remoteended.go).
			sr, now = h.endRemoteResponse(ctx, recs, id, sr)
		}
		if !sr.terminal() || (!now && time.Since(time.UnixMilli(sr.Ended)) < endedGrace) {
			return nil
		}
		// The turn ended (or its process was lost) and its log has no
		// final event: end the log with the record's outcome.
		event := map[string]string{"failed": "response.failed", "cancelled": "response.cancelled"}[sr.Status]
		if event == "" {
			event = "response.completed"
		}
		data := finalEvent(event, last+1, sr.Response)
		return log.AppendFinal(ctx, run, runlog.Event{Seq: last + 1, Type: event, Data: data})
	}
}

// cancelResponse serves POST /v1/responses/{id}/cancel: a background
// response in progress, in any process, ends "cancelled" (its tool calls
// answered, nothing of its turn stored); the response is returned once
// it ended. A response that already ended is returned as it is.
func (h *Handler) cancelResponse(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	principal, _ := host.PrincipalFrom(ctx)
	id := r.PathValue("id")
	recs, rec, sr, ok, err := h.backgroundRecord(ctx, id, principal)
	switch {
	case err != nil:
		writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the response could not be read"})
		return
	case !ok:
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "response_not_found", Message: "no such response"})
		return
	case !sr.Background:
		writeError(w, invalid("", "only a response created with background: true can be cancelled"))
		return
	}
	if sr.lost(time.Now()) {
		sr, _, _ = markLost(ctx, recs, rec)
	}
	if sr.Status == "in_progress" {
		h.bgMu.Lock()
		local := h.bgRuns[id]
		h.bgMu.Unlock()
		if local != nil {
			local.cancel(errCancelRequested)
		} else {
			// Another process runs it: it reads the request from the record.
			s := &slot{recs: recs, id: id}
			if _, err := s.update(ctx, sr.Run, func(v *slotRecord, _ *session.Record) { v.Cancel = true }); err != nil && !errors.Is(err, errSlotLost) {
				writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the response could not be cancelled"})
				return
			}
			// Or a remote runner's worker does: the runner stops it.
			if rr, ok := h.opts.Runner.(RemoteRunner); ok {
				if err := rr.CancelRemote(ctx, id); err != nil {
					h.log.LogAttrs(ctx, slog.LevelWarn, "cancelling a remote background response", slog.String("id", id), slog.String("error", err.Error()))
				}
			}
		}
		// Wait for its end, as its process records it.
		for sr.Status == "in_progress" {
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if _, rec, sr, ok, err = h.backgroundRecord(ctx, id, principal); err != nil || !ok {
				writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "store_error", Message: "the response could not be read"})
				return
			}
			if sr.lost(time.Now()) {
				sr, _, _ = markLost(ctx, recs, rec)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(sr.Response)
}

// finalEvent is the data of a turn's last event: its type, number and
// the response object (already encoded, not encoded again).
func finalEvent(event string, seq int64, response []byte) []byte {
	return appendResponseEvent(make([]byte, 0, len(response)+len(event)+64), event, seq, response)
}

// appendResponseEvent appends the data of an event whose field is the
// response (already encoded): its type, number and the response.
func appendResponseEvent(b []byte, event string, seq int64, response []byte) []byte {
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, event) // event types are ASCII words
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"response":`...)
	b = append(b, response...)
	return append(b, '}')
}

// encode writes sr as JSON with its response as it is (encoding/json
// would compact the whole object again on every write of the record).
func (sr slotRecord) encode() []byte {
	resp := sr.Response
	sr.Response = nil
	b, _ := json.Marshal(sr)
	if len(resp) == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+len(resp)+16)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"response":`...)
	out = append(out, resp...)
	return append(out, '}')
}

// attachedClient is the client of a background turn's own request while
// it stays: the turn writes its events to it directly.
type attachedClient struct {
	done chan struct{} // closed when the turn ended
	out  *sse          // refuses writes once detach closed it
	// gone: a write failed (the client went away, or detached); only the
	// turn's goroutine, the one sender, reads and writes it.
	gone bool
}

// send writes an event to the client unless it went away (or c is nil).
func (c *attachedClient) send(typ string, data []byte) {
	if c == nil || c.gone {
		return
	}
	if c.out.write(typ, data) != nil {
		c.gone = true
	}
}

// detach stops the writes: the request's handler returns after it.
func (c *attachedClient) detach() { c.out.close() }
