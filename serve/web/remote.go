package web

// Chat turns run by another process: a Remote (agcore serve --temporal's
// workers). The process that accepts POST /api/chat records the turn as
// running (a record marked remote: no process renews it), writes its first
// events and hands it over as a RemoteChat; whatever runs the turn turns
// the agent's updates into the page's events with ChatEvents (the same
// events a turn of this process streams) and ends it with FinishChat. Every
// process lists, follows and stops it through the store, as a turn of
// another process.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// Remote runs the page's chat turns in other processes, which outlive the
// one that accepted them: the workers of a durable runner
// (Options.Remote). A turn it runs is listed, followed and stopped on
// every server over the store, and is never declared lost when the
// accepting process dies.
type Remote interface {
	// StartChat starts t elsewhere and returns once it was handed over.
	// An error refuses the turn (the page gets a 503).
	StartChat(ctx context.Context, t RemoteChat) error
	// CancelChat asks the turn id (ChatLog.ID) to stop: it ends with the
	// error event of a stopped turn, nothing of it stored. A turn unknown
	// to the runner, or over, is not an error.
	CancelChat(ctx context.Context, id string) error
}

// RemoteApprovals is implemented by a Remote whose turns wait for
// approvals where they run: the handler lists (GET /api/approvals) and
// decides (POST /api/approvals/{id}) those calls through it, on any
// process, for the principal that started the turn only.
type RemoteApprovals interface {
	// PendingChat returns the calls the turn id (ChatLog.ID) waits on, in
	// the order they began waiting; none (no error) for a turn unknown to
	// the runner, or over.
	PendingChat(ctx context.Context, id string) ([]RemoteApproval, error)
	// DecideChat answers the call callID of the turn id with d. It returns
	// an error wrapping approval.ErrUnknown when the turn does not wait on
	// that call, one matching mcp.ErrFormContent when d.Content does not
	// fit the form it answers.
	DecideChat(ctx context.Context, id, callID string, d tool.Decision) error
}

// RemoteApproval is a call a remote turn waits on: its id, tool and
// arguments, and since when it waits.
type RemoteApproval struct {
	CallID string
	Tool   string
	Input  json.RawMessage
	Since  time.Time
}

// RemoteChat is a chat turn for a Remote: what to run, as data, and where
// its events go.
type RemoteChat struct {
	// Agent names the agent (host.Set).
	Agent string
	// Input is the turn's new messages (the user's).
	Input []llm.Message
	// Quota is the principal's spending limit the request carried
	// (budget.StoreQuota, serve.Options.Quota); nil: none.
	Quota *ChatQuota `json:",omitempty"`
	// Log is the turn's place in the store.
	Log ChatLog
}

// ChatQuota is a principal's spending limit for a remote chat turn.
type ChatQuota struct {
	Principal     string
	Total, PerDay budget.Limits
}

// ChatLog is a remote chat turn's place in the store: its run record and
// its event log.
type ChatLog struct {
	// Key is the turn's run record (agcore.web.runs/PRINCIPAL/SESSION),
	// which FinishChat deletes while it still names Run.
	Key string
	// Owner is the principal's session owner (host.Owner), Session the
	// session the turn is appended to.
	Owner, Session string
	// Run is the turn's run id: its approvals are "RUN/CALL_ID", its
	// event log "web.RUN" (EventLog).
	Run string
	// Seq is the number of the turn's next event (the accepting process
	// wrote the first ones: the user's message and the session event).
	Seq int64
	// MaxBytes bounds the events stored (past it only the final one is);
	// Retention is how long they are kept. 0: runlog's defaults.
	MaxBytes  int64         `json:",omitempty"`
	Retention time.Duration `json:",omitempty"`
}

// ID names the turn among the server's remote chat turns:
// PRINCIPAL/SESSION/RUN.
func (l ChatLog) ID() string { return l.Key + "/" + l.Run }

// EventLog is the turn's event log (package runlog): "web." and the run.
func (l ChatLog) EventLog() string { return "web." + l.Run }

// ChatEvents turns a remote chat turn's agent updates into the page's
// events (the chat stream's ITEMs, see the package documentation),
// numbered from ChatLog.Seq, exactly as a turn of the serving process
// streams them. It does no I/O: the caller takes the events (Take) and
// writes them (runlog.Log.AppendBatch), then ends the turn with End and
// FinishChat. Given the same updates it makes the same events, byte for
// byte.
type ChatEvents struct {
	l       ChatLog
	seq     int64
	max     int64
	size    int64
	pending []runlog.Event
	open    []string // the tool calls not yet answered, in order
	done    bool     // the finish update came
}

// NewChatEvents starts the events of l's turn after its first ones.
func NewChatEvents(l ChatLog) *ChatEvents {
	e := &ChatEvents{l: l, seq: l.Seq, max: l.MaxBytes}
	if e.max <= 0 {
		e.max = runlog.DefaultMaxBytes
	}
	return e
}

func (e *ChatEvents) add(it item, final bool) {
	data, err := json.Marshal(it)
	if err != nil {
		return
	}
	ev := runlog.Event{Seq: e.seq, Type: it.Type, Data: data}
	size := int64(len(ev.Data) + len(ev.Type) + 32)
	if e.size+size > e.max && !final {
		return // past the bound: only the final events are stored
	}
	e.seq++
	e.size += size
	e.pending = append(e.pending, ev)
}

// Update adds the event of one of the turn's updates (the finish update
// adds none: End ends the turn).
func (e *ChatEvents) Update(u agent.Update) {
	if u.Kind == agent.UpdateFinish {
		e.done = true
		return
	}
	it, ok := itemOf(u)
	if !ok {
		return
	}
	switch u.Kind {
	case agent.UpdateToolCall:
		e.open = append(e.open, u.ToolCall.ID)
	case agent.UpdateToolResult:
		e.answered(u.ToolResult.ToolCallID)
	}
	e.add(it, false)
}

// answered forgets the open tool call id.
func (e *ChatEvents) answered(id string) {
	for i, open := range e.open {
		if open == id {
			e.open = append(e.open[:i:i], e.open[i+1:]...)
			return
		}
	}
}

// decodeItem decodes an event's data.
func decodeItem(data []byte) (item, bool) {
	var it item
	return it, json.Unmarshal(data, &it) == nil
}

// ApprovalRequired adds the approval event of the turn's call callID
// (tool name, arguments input) that waits for a decision, as a turn of the
// serving process shows it: its id, "RUN/CALL_ID", is decided by POST
// /api/approvals/{id} on any process (through RemoteApprovals).
func (e *ChatEvents) ApprovalRequired(callID, name string, input json.RawMessage) {
	if len(input) == 0 || !json.Valid(input) {
		input, _ = json.Marshal(string(input)) // kept, as a JSON string
	}
	it := item{Type: "approval", ID: e.l.Run + "/" + callID, ToolCallID: callID, Name: name, Input: input}
	if name == mcp.ElicitationTool {
		it.Schema, _ = mcp.ElicitationSchema(input)
	}
	e.add(it, false)
}

// Take returns the events made since the last Take.
func (e *ChatEvents) Take() []runlog.Event {
	out := e.pending
	e.pending = nil
	return out
}

// End ends the turn as a turn of the serving process ends: resp and err
// are the run's (agent.Stream.Each's); cancelled reports that a
// cancellation (Remote.CancelChat: the page's Stop) ended it. A turn that
// answered ends with the finish event (then the error of a spending limit
// that stopped it, when one did); one that failed or was stopped answers
// its open tool calls (a tool_result marked is_error each) and ends with
// the error event. It returns the turn's last events, the final one last,
// and the error to log, nil when the turn did not fail.
func (e *ChatEvents) End(resp *agent.Response, err error, cancelled bool) (events []runlog.Event, failed error) {
	if resp == nil && err == nil {
		err = errors.New("web: the turn ended without a response")
	}
	switch {
	case err != nil && cancelled:
		e.answerOpen("the turn was stopped before the call ended")
		e.add(item{Type: "error", Message: errorText(errStopped)}, true)
	case resp != nil && (err == nil || e.done):
		// Stored (or not: the finish says so); an error after the finish
		// (a spending limit that cut the turn short) follows it.
		e.add(finishItem(resp), true)
		if err != nil {
			e.add(item{Type: "error", Message: errorText(err)}, true)
			failed = err
		}
	default:
		e.answerOpen("the turn failed before the call ended")
		e.add(item{Type: "error", Message: errorText(err)}, true)
		failed = err
	}
	return e.Take(), failed
}

// answerOpen answers each tool call not yet answered with an error.
func (e *ChatEvents) answerOpen(text string) {
	for _, id := range e.open {
		e.add(item{Type: "tool_result", ToolCallID: id, Text: text, IsError: true}, true)
	}
	e.open = nil
}

// FinishChat writes a remote chat turn's last events, the final one last
// (runlog's final write), then deletes its run record while it still
// names the turn. A finish event of a stored turn gets the session's
// totals (session_usage, session_cost_usd, session_turns) as store, the
// server's session store, has them. Written again (a retry), it changes
// nothing.
func FinishChat(ctx context.Context, store session.Store, l ChatLog, events []runlog.Event) error {
	recs, ok := session.RecordsOf(store)
	if !ok || store == nil {
		return errors.New("web: a remote chat turn needs a store with records")
	}
	if n := len(events); n > 0 && events[n-1].Type == "finish" {
		var fin item
		if json.Unmarshal(events[n-1].Data, &fin) == nil && fin.Message == "" {
			sessionTotals(ctx, session.Scoped(store, l.Owner), &fin)
			if data, err := json.Marshal(fin); err == nil {
				events = append(events[:n-1:n-1], runlog.Event{Seq: events[n-1].Seq, Type: "finish", Data: data})
			}
		}
	}
	return finishChat(ctx, recs, l, events)
}

// finishChat writes a remote chat turn's last events, then deletes its
// run record while it still names the turn.
func finishChat(ctx context.Context, recs session.Records, l ChatLog, events []runlog.Event) error {
	log := &runlog.Log{Records: recs, Retention: l.Retention}
	if err := log.AppendBatch(ctx, l.EventLog(), events, true); err != nil {
		return err
	}
	return endRecord(ctx, recs, l.Key, l.Run)
}

// endRecord deletes the run record key while it names run (a cancel
// request may change it meanwhile: then again).
func endRecord(ctx context.Context, recs session.Records, key, run string) error {
	for attempt := 0; ; attempt++ {
		rec, err := recs.GetRecord(ctx, runsNamespace, key)
		if errors.Is(err, session.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var rr runRecord
		if json.Unmarshal(rec.Value, &rr) != nil || rr.Run != run {
			return nil // another turn's now
		}
		err = recs.DeleteRecord(ctx, runsNamespace, key, rec.Version)
		if err == nil || errors.Is(err, session.ErrNotFound) {
			return nil
		}
		if !errors.Is(err, session.ErrConflict) || attempt == 5 {
			return fmt.Errorf("web: ending the run record %s: %w", key, err)
		}
	}
}
