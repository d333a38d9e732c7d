package serve

// AG-UI runs run by a RemoteRunner (agcore serve --temporal): the process
// that accepts the run writes its lease record and first events and hands
// it over as a RemoteTurn with AGUI set; what runs it translates the
// agent's updates with AGUIEvents (the same translation as a run of this
// process: aguiSink) and ends it with FinishAGUI. The accepting process,
// and any other through POST /agui/{agent}/runs/{run}, streams the run
// from the event log.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// AGUILog is a remote AG-UI run's place in the store: its lease record
// and its event log.
type AGUILog struct {
	// Key is the run's record in the namespace "agcore.agui.runs"
	// (PRINCIPAL/RUN), which says the run goes on; FinishAGUI deletes it
	// if it still has the version LeaseVersion (0: whatever its version),
	// so that a retried end leaves a later run of the same id alone.
	Key          string
	LeaseVersion int64 `json:",omitempty"`
	// Run is the run's event log (package runlog): "agui." and the run id.
	Run string
	// ThreadID and RunID are the run's, as RUN_FINISHED repeats them;
	// Agent is the agent whose step is open.
	ThreadID, RunID, Agent string
	// Seq is the number of the run's next event.
	Seq int64
	// MaxBytes bounds the events stored (past it only the final one is);
	// Retention is how long they are kept.
	MaxBytes  int64         `json:",omitempty"`
	Retention time.Duration `json:",omitempty"`
}

// AGUIEvents turns a remote AG-UI run's agent updates into AG-UI's
// events, numbered from AGUILog.Seq, exactly as a run of the serving
// process streams them. It does no I/O: the caller takes the events
// (Take) and writes them (runlog.Log.AppendBatch), then ends the run with
// End and FinishAGUI. Given the same updates and the same ids it makes the
// same events, byte for byte.
type AGUIEvents struct {
	sink    *aguiSink
	max     int64
	size    int64
	pending []runlog.Event
}

// NewAGUIEvents starts the events of l's run after its first ones
// (RUN_STARTED, STATE_SNAPSHOT, STEP_STARTED: the accepting process's).
// ids, when not nil, makes the messages' ids (prefix, then anything
// unique in the run); nil makes random ones.
func NewAGUIEvents(l AGUILog, ids func(prefix string) string) *AGUIEvents {
	e := &AGUIEvents{max: l.MaxBytes}
	if e.max <= 0 {
		e.max = DefaultEventLogMaxBytes
	}
	e.sink = &aguiSink{agent: l.Agent, threadID: l.ThreadID, runID: l.RunID, seq: l.Seq, ids: ids, collect: e.add}
	return e
}

func (e *AGUIEvents) add(ev runlog.Event) {
	size := int64(len(ev.Data) + len(ev.Type) + 32)
	if e.size+size > e.max && ev.Type != "RUN_FINISHED" && ev.Type != "RUN_ERROR" {
		return // past the bound: only the final event is stored
	}
	e.size += size
	e.pending = append(e.pending, ev)
}

// Update adds the events of one of the run's updates (the finish update
// adds none: End ends the run).
func (e *AGUIEvents) Update(u agent.Update) error {
	return feed(e.sink, u, nil)
}

// ApprovalRequired adds the interrupt of the run's call callID (tool
// tool, arguments input) that waits for a decision, as a run of the
// serving process shows it: the CUSTOM event agcore.approval_required,
// whose id ("RUN/CALL_ID", the AG-UI run id) POST /v1/approvals/{id}
// decides on any process.
func (e *AGUIEvents) ApprovalRequired(callID, tool string, input json.RawMessage) {
	if !json.Valid(input) {
		input, _ = json.Marshal(string(input)) // kept, as a JSON string
	}
	_ = e.sink.approvalRequired(e.sink.runID+"/"+callID, callID, tool, input)
}

// Take returns the events made since the last Take.
func (e *AGUIEvents) Take() []runlog.Event {
	out := e.pending
	e.pending = nil
	return out
}

// End ends the run as a run of the serving process ends: resp and err are
// the run's (agent.Stream.Each's; an err wrapping
// context.DeadlineExceeded fails it with the code "timeout"); cancelled
// reports that a cancellation ended it (RUN_ERROR, code "cancelled"). It
// returns the run's last events, the final one (RUN_FINISHED or
// RUN_ERROR) last, and the error to log, nil when the run did not fail.
func (e *AGUIEvents) End(resp *agent.Response, err error, cancelled bool) (events []runlog.Event, failed error) {
	ctx := context.Background()
	if errors.Is(err, context.DeadlineExceeded) {
		c, cancel := context.WithDeadline(ctx, time.Time{})
		defer cancel()
		ctx = c
	}
	failed = e.sink.end(ctx, resp, err, cancelled)
	return e.Take(), failed
}

// FinishAGUI writes a remote AG-UI run's last events, the final one last
// (runlog's final write), then deletes its lease record. Written again (a
// retry), it changes nothing.
func FinishAGUI(ctx context.Context, recs session.Records, l AGUILog, events []runlog.Event) error {
	retention := l.Retention
	if retention <= 0 {
		retention = DefaultEventLogRetention
	}
	log := &runlog.Log{Records: recs, Retention: retention}
	if err := log.AppendBatch(ctx, l.Run, events, true); err != nil {
		return err
	}
	if err := recs.DeleteRecord(ctx, aguiNamespace, l.Key, l.LeaseVersion); err != nil && !errors.Is(err, session.ErrNotFound) && !errors.Is(err, session.ErrConflict) {
		return err
	}
	return nil
}

// aguiRemote serves an AG-UI run on a remote runner: its lease record
// (lasting the retention: no process of this server renews it), its first
// events, the hand-over, then its events from the log to the client, as
// a reconnecting client reads them.
func (h *Handler) aguiRemote(w http.ResponseWriter, r *http.Request, rr RemoteRunner, recs session.Records, a host.Agent, in aguiInput, state json.RawMessage, msgs []llm.Message, opts *agent.RunOptions) {
	ctx := r.Context()
	principal, _ := host.PrincipalFrom(ctx)
	key := principal + "/" + in.RunID
	if session.CheckRecord(aguiNamespace, key) != nil {
		writeError(w, invalid("runId", "the run id cannot name a run"))
		return
	}
	retention := h.retention()
	name := "agui." + in.RunID
	lease, err := recs.CreateRecord(ctx, aguiNamespace, session.Record{Key: key, Value: []byte(a.Name), Expires: time.Now().Add(retention)})
	if err != nil {
		if errors.Is(err, session.ErrExists) {
			writeError(w, &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "run_exists",
				Message: "a run with this id is running; reconnect to it at /agui/{agent}/runs/{runId}"})
			return
		}
		writeError(w, storeError())
		return
	}
	drop := func() {
		dctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = recs.DeleteRecord(dctx, aguiNamespace, key, lease.Version)
		c()
	}
	var first []runlog.Event
	s := &aguiSink{agent: a.Name, threadID: in.ThreadID, runID: in.RunID, collect: func(ev runlog.Event) { first = append(first, ev) }}
	s.start(principal, state)
	log := h.eventLog(recs)
	if err := log.AppendBatch(ctx, name, first, false); err != nil {
		drop()
		writeError(w, storeError())
		return
	}
	turnID := in.RunID
	if strings.ContainsAny(turnID, " \t\n\r") {
		turnID = newID("run_") // the durable runner's turn ids hold no space
	}
	t := RemoteTurn{Agent: a.Name, Owner: host.Owner(ctx), SessionID: opts.SessionID, Input: msgs,
		Instructions: opts.Instructions, Temperature: opts.Temperature, MaxTokens: opts.MaxTokens,
		TurnID: turnID, Timeout: h.opts.TurnTimeout, Quota: h.remoteQuota(principal),
		AGUI: &AGUILog{Key: key, LeaseVersion: lease.Version, Run: name, ThreadID: in.ThreadID, RunID: in.RunID, Agent: a.Name, Seq: int64(len(first)),
			MaxBytes: h.opts.EventLogMaxBytes, Retention: retention}}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := rr.StartRemote(sctx, t); err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "starting a remote AG-UI run", slog.String("run", in.RunID), slog.String("error", err.Error()))
		data, _ := json.Marshal(map[string]any{"type": "RUN_ERROR", "message": "the run could not be started", "code": "runner_unavailable"})
		fctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = log.AppendFinal(fctx, name, runlog.Event{Seq: int64(len(first)), Type: "RUN_ERROR", Data: data})
		c()
		drop()
		writeError(w, &apiError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "runner_unavailable", Message: "the run could not be started"})
		return
	}
	out := newSSE(w, h.flushEvery)
	defer out.close()
	h.followAGUI(ctx, out, log, recs, name, key, -1)
}
