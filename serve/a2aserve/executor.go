package a2aserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/tool"
)

// executor is the a2asrv.AgentExecutor of one agent. Each task is one agent
// turn (a run), which lives in a goroutine of its own: an Execute call
// attaches to it and turns what it produces into A2A events until the turn
// ends or parks on an approval; the message that decides the approval
// attaches a new Execute to the same run.
type executor struct {
	agent      host.Agent
	broker     *approval.Broker
	tasks      tasks // the agent's task store
	log        *slog.Logger
	cancelWait time.Duration
	// pushes and sender notify the webhooks of a task whose state the
	// executor stores itself (persist), past the SDK.
	pushes *pushConfigs
	sender agentPush
	// remote, when not nil, runs the turns of tasks kept in the store's
	// records in other processes (Options.Remote; remoteexec.go);
	// pushHosts are the webhook hosts allowed although private, handed
	// over with them.
	remote    Remote
	pushHosts []string

	mu   sync.Mutex
	runs map[a2a.TaskID]*run // the turns not yet over, by task
	// executing counts the Execute calls in progress, by task; begun
	// holds, by task, channels closed when the next one begins (see
	// retrying.settle).
	executing map[a2a.TaskID]int
	begun     map[a2a.TaskID][]chan struct{}
}

// run is one agent turn, the work of one task.
type run struct {
	task      a2a.TaskID
	session   string
	principal string
	cancel    context.CancelFunc
	stopLease func() // ends the run's lease in the task store
	box       mailbox
	done      chan struct{} // closed once the turn is entirely over
	canceled  atomic.Bool   // tasks/cancel asked for it
	stopped   atomic.Bool   // the server is shutting down (host.Stop)
	attached  atomic.Bool   // an Execute follows it

	// artifact is the streamed answer's artifact, "" before the first
	// delta; only the attached Execute uses it (one at a time).
	artifact a2a.ArtifactID
}

// signalKind says what a signal carries.
type signalKind uint8

const (
	sigText     signalKind = iota + 1 // text: a delta of the answer
	sigToolCall                       // call: a tool call the model made
	sigParked                         // a call started waiting for approval
	sigFinish                         // resp: the turn succeeded (and is persisted)
	sigError                          // err: the turn failed
)

// signal is one thing a run reports to the attached Execute.
type signal struct {
	kind signalKind
	text string
	call llm.ToolUse
	resp *agent.Response
	turn int // sigFinish: the number of the turn in its session, 0 when unknown
	err  error
}

// mailbox holds a run's signals until an Execute takes them. Pushing never
// blocks: a turn that goes on while no Execute is attached (an approval
// the broker's Timeout denied) leaves its signals here for the next one.
type mailbox struct {
	mu    sync.Mutex
	items []signal
	wake  chan struct{} // capacity 1: something was pushed
}

func (m *mailbox) push(s signal) {
	m.mu.Lock()
	m.items = append(m.items, s)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// pop takes the oldest signal; consecutive text deltas come out as one.
func (m *mailbox) pop() (signal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.items) == 0 {
		return signal{}, false
	}
	s := m.items[0]
	n := 1
	size := len(s.text)
	for ; s.kind == sigText && n < len(m.items) && m.items[n].kind == sigText; n++ {
		size += len(m.items[n].text)
	}
	if n > 1 { // one copy, not one per delta: a backlog can be long
		var b strings.Builder
		b.Grow(size)
		for _, it := range m.items[:n] {
			b.WriteString(it.text)
		}
		s.text = b.String()
	}
	clear(m.items[:n])
	m.items = m.items[n:]
	return s, true
}

// Execute implements a2asrv.AgentExecutor: the first message of a task
// starts a turn; a later one decides the approvals the turn waits for.
func (e *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.begin(rc.TaskID)
	defer e.finish(rc.TaskID)
	if rc.StoredTask == nil {
		if rt, ok := e.remoteTasks(); ok {
			return e.startRemote(ctx, rc, q, rt)
		}
		return e.start(ctx, rc, q)
	}
	return e.resume(ctx, rc, q)
}

// start begins the turn of a new task and follows it.
func (e *executor) start(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	// The run's lease first: the task must never be stored unfinished
	// without it (it would read as lost).
	var started atomic.Pointer[run]
	stopLease := e.tasks.startRun(rc.TaskID, func() {
		// tasks/cancel sent to another process: stop the turn here.
		if r := started.Load(); r != nil {
			r.canceled.Store(true)
			r.cancel()
		}
	})
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateSubmitted, nil)); err != nil {
		stopLease()
		return err
	}
	msgs, err := toLLM(rc.Message)
	if err != nil {
		stopLease()
		return writeFinal(ctx, q, rc, a2a.TaskStateRejected, agentText(rc, err.Error()), nil)
	}
	principal, _ := host.PrincipalFrom(ctx)
	sid := SessionID(host.SessionName(ctx, rc.ContextID))
	if err := e.forkFrom(ctx, rc, sid); err != nil {
		stopLease()
		if errors.Is(err, errForkTask) {
			return writeFinal(ctx, q, rc, a2a.TaskStateRejected, agentText(rc, err.Error()), nil)
		}
		return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, "The session store failed."), nil)
	}
	r := &run{
		task:      rc.TaskID,
		session:   sid,
		principal: principal,
		stopLease: stopLease,
		box:       mailbox{wake: make(chan struct{}, 1)},
		done:      make(chan struct{}),
	}
	// The turn outlives this call when it parks: its context keeps the
	// request's values (the principal, the logger) but not its end.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	runCtx = approval.WithOwner(runCtx, approval.Owner{Agent: e.agent.Name, Session: r.session, Run: string(r.task), Principal: principal})
	runCtx = approval.WithNotify(runCtx, func(approval.Request) {
		r.box.push(signal{kind: sigParked})
		if !r.attached.Load() {
			go e.persist(r, signal{kind: sigParked})
		}
	})

	e.mu.Lock()
	e.runs[r.task] = r
	e.mu.Unlock()
	started.Store(r)
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		e.end(r)
		stopLease()
		return err
	}
	// The turn loads and appends through the principal's view of the
	// store (host.Sessions), the server's one authorization point.
	go e.drive(runCtx, r, msgs, &agent.RunOptions{SessionID: r.session, Store: host.Sessions(ctx, e.agent.Store)})
	return e.follow(ctx, rc, q, r)
}

// drive runs the turn and reports it to the run's mailbox. A turn that
// ends while no Execute follows it (it was decided through another
// process or channel) writes its end into the stored task itself.
func (e *executor) drive(ctx context.Context, r *run, msgs []llm.Message, opts *agent.RunOptions) {
	defer close(r.done)
	defer r.stopLease()
	defer r.cancel()
	// The server's record keeping (host.BeginTurn), here where the turn
	// may wait for the turns before it on the session.
	ctx, end := host.BeginTurn(ctx, host.Turn{Agent: e.agent.Name, Session: r.session, ID: string(r.task), Input: msgs})
	defer end()
	before := turnCount(ctx, opts.Store, r.session) // where the turn will land (fork.go)
	stream := e.agent.Agent.RunStream(ctx, msgs, opts)
	for u, err := range stream.Updates() {
		if err != nil {
			break // Wait returns it
		}
		switch u.Kind {
		case agent.UpdateText:
			r.box.push(signal{kind: sigText, text: u.Text})
		case agent.UpdateToolCall:
			r.box.push(signal{kind: sigToolCall, call: u.ToolCall})
		}
	}
	resp, err := stream.Wait() // after persistence: the next turn sees this one
	last := signal{kind: sigFinish, resp: resp}
	if err != nil {
		last = signal{kind: sigError, err: err}
	} else {
		last.turn = placeTurn(ctx, opts.Store, r.session, before, msgs, resp)
	}
	r.box.push(last)
	if !r.attached.Load() {
		e.persist(r, last)
	}
}

// resume applies the decisions a follow-up message carries to the turn's
// waiting calls and follows the turn again.
func (e *executor) resume(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.mu.Lock()
	r := e.runs[rc.TaskID]
	e.mu.Unlock()
	if r == nil {
		return e.resumeRemote(ctx, rc, q)
	}
	decided, problem := e.decide(ctx, r, rc.Message)
	if decided == 0 {
		if p := e.pending(r); len(p) > 0 {
			return writeFinal(ctx, q, rc, a2a.TaskStateInputRequired, approvalMessage(rc, p, problem), nil)
		}
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	return e.follow(ctx, rc, q, r)
}

// decide answers the run's waiting calls as msg says. It returns how many
// calls it decided and, when the message was not understood or named a
// call it cannot decide, why.
func (e *executor) decide(ctx context.Context, r *run, msg *a2a.Message) (int, string) {
	return e.decideTask(ctx, r.task, r.principal, msg)
}

// decideTask answers the waiting calls of task, whose turn principal
// started, as msg says.
func (e *executor) decideTask(ctx context.Context, task a2a.TaskID, principal string, msg *a2a.Message) (int, string) {
	if p, _ := host.PrincipalFrom(ctx); p != principal {
		return 0, "only the principal that started the task may decide its approvals"
	}
	decisions, problem := parseDecisions(msg)
	if len(decisions) == 0 {
		return 0, problem
	}
	pending := e.pendingOf(task)
	n := 0
	for _, d := range decisions {
		for _, req := range pending {
			if d.id != "" && d.id != req.ID {
				continue
			}
			err := e.broker.DecideContext(ctx, req.ID, tool.Decision{Approved: d.approved, Reason: d.reason})
			switch {
			case err == nil:
				n++
				e.log.Info("a2a: approval decided", "task", task, "approval", req.ID, "tool", req.Tool, "approved", d.approved)
			case !errors.Is(err, approval.ErrUnknown):
				return n, err.Error()
			}
		}
		if d.id != "" && !hasID(pending, d.id) {
			problem = fmt.Sprintf("%q is not a call of this task waiting for approval", d.id)
		}
	}
	return n, problem
}

func hasID(reqs []approval.Request, id string) bool {
	for _, r := range reqs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// pending returns the run's calls waiting for approval.
func (e *executor) pending(r *run) []approval.Request { return e.pendingOf(r.task) }

// pendingOf returns the calls of task waiting for approval, in this
// process or (with a shared broker) any other.
func (e *executor) pendingOf(task a2a.TaskID) []approval.Request {
	return e.broker.Pending(func(req approval.Request) bool {
		return req.Owner.Run == string(task) && req.Owner.Agent == e.agent.Name
	})
}

// follow turns the run's signals into events until the turn ends (a final
// completed, failed or canceled state) or waits for approval (a final
// input-required state; the turn goes on waiting).
func (e *executor) follow(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, r *run) error {
	r.attached.Store(true)
	defer r.attached.Store(false)
	stop := host.Stop(ctx)
	for {
		select {
		case <-stop:
			// The server is shutting down: the turn is cancelled, and its
			// end (sigError) fails the task.
			stop = nil
			r.stopped.Store(true)
			r.cancel()
		default:
		}
		s, ok := r.box.pop()
		if !ok {
			if p := e.pending(r); len(p) > 0 {
				return writeFinal(ctx, q, rc, a2a.TaskStateInputRequired, approvalMessage(rc, p, ""), nil)
			}
			select {
			case <-r.box.wake:
				continue
			case <-stop:
				continue // the loop's top stops the turn
			case <-ctx.Done():
				// The execution is over without us (tasks/cancel, or the
				// SDK gave up on it): nobody follows the turn any more.
				r.cancel()
				e.end(r)
				return nil
			}
		}
		var err error
		switch s.kind {
		case sigText:
			var ev *a2a.TaskArtifactUpdateEvent
			if r.artifact == "" {
				ev = a2a.NewArtifactEvent(rc, a2a.TextPart{Text: s.text})
				ev.Artifact.Name = "answer"
				r.artifact = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(rc, r.artifact, a2a.TextPart{Text: s.text})
			}
			err = q.Write(ctx, ev)
		case sigToolCall:
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, rc,
				a2a.TextPart{Text: "Calling " + s.call.Name + "."},
				a2a.DataPart{Data: map[string]any{"tool": s.call.Name, "call_id": s.call.ID, "arguments": string(s.call.Input)}})
			err = q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, msg))
		case sigParked:
			if p := e.pending(r); len(p) > 0 {
				return writeFinal(ctx, q, rc, a2a.TaskStateInputRequired, approvalMessage(rc, p, ""), nil)
			}
		case sigFinish:
			e.end(r)
			return e.complete(ctx, rc, q, r, s.resp, s.turn)
		case sigError:
			e.end(r)
			if r.canceled.Load() {
				return nil // Cancel writes the canceled state
			}
			if r.stopped.Load() {
				return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, "The server is shutting down; the turn was cancelled."), nil)
			}
			e.log.Warn("a2a: turn failed", "task", r.task, "session", r.session, "err", s.err)
			return writeFinal(ctx, q, rc, a2a.TaskStateFailed, agentText(rc, "The turn failed: "+s.err.Error()), nil)
		}
		if err != nil {
			return err
		}
	}
}

// complete writes the answer as the task's artifact (replacing the streamed
// deltas with the final answer alone) and the completed state, with the
// turn's usage and cost, and its number in the session (turn), in both
// metadata.
func (e *executor) complete(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, r *run, resp *agent.Response, turn int) error {
	meta := map[string]any{MetadataKey: turnMeta(resp, turn)}
	id := r.artifact
	if id == "" {
		id = a2a.NewArtifactID()
	}
	ev := &a2a.TaskArtifactUpdateEvent{
		TaskID:    rc.TaskID,
		ContextID: rc.ContextID,
		LastChunk: true,
		Artifact: &a2a.Artifact{
			ID:       id,
			Name:     "answer",
			Parts:    a2a.ContentParts{a2a.TextPart{Text: resp.Text()}},
			Metadata: meta,
		},
	}
	if err := q.Write(ctx, ev); err != nil {
		return err
	}
	return writeFinal(ctx, q, rc, a2a.TaskStateCompleted, nil, meta)
}

// Cancel implements a2asrv.AgentExecutor: it cancels the turn's context,
// waits (up to cancelWait) for the turn to end, and ends the task canceled.
// A cancelled turn persists nothing.
func (e *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.mu.Lock()
	r := e.runs[rc.TaskID]
	e.mu.Unlock()
	if r != nil {
		r.canceled.Store(true)
		r.cancel()
		t := time.NewTimer(e.cancelWait)
		select {
		case <-r.done:
		case <-t.C:
			e.log.Warn("a2a: a cancelled turn has not ended yet", "task", r.task, "waited", e.cancelWait)
		}
		t.Stop()
		e.end(r)
	} else if rt, ok := e.remoteTasks(); ok && rt.isRemote(ctx, rc.TaskID) {
		return e.cancelRemote(ctx, rc, q, rt)
	} else if err := e.tasks.requestCancel(ctx, rc.TaskID); err != nil {
		// The turn runs in another process (or ran): it stops there.
		e.log.Warn("a2a: asking another process to cancel a turn", "task", rc.TaskID, "error", err.Error())
	}
	return writeFinal(ctx, q, rc, a2a.TaskStateCanceled, agentText(rc, "Canceled."), nil)
}

// followed reports whether an Execute follows the turn of task id.
func (e *executor) followed(id a2a.TaskID) bool {
	e.mu.Lock()
	r := e.runs[id]
	e.mu.Unlock()
	return r != nil && r.attached.Load()
}

// begin records an Execute of task id in progress and tells the watchers
// of id (watch).
func (e *executor) begin(id a2a.TaskID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.executing == nil {
		e.executing = map[a2a.TaskID]int{}
	}
	e.executing[id]++
	for _, c := range e.begun[id] {
		close(c)
	}
	delete(e.begun, id)
}

// finish records the return of an Execute of task id.
func (e *executor) finish(id a2a.TaskID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.executing[id]--; e.executing[id] <= 0 {
		delete(e.executing, id)
	}
}

// inExecute reports whether an Execute of task id is in progress.
func (e *executor) inExecute(id a2a.TaskID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.executing[id] > 0
}

// watch returns a channel closed when the next Execute of task id
// begins, and the function that stops watching.
func (e *executor) watch(id a2a.TaskID) (<-chan struct{}, func()) {
	c := make(chan struct{})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.begun == nil {
		e.begun = map[a2a.TaskID][]chan struct{}{}
	}
	e.begun[id] = append(e.begun[id], c)
	return c, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if cs := slices.DeleteFunc(e.begun[id], func(x chan struct{}) bool { return x == c }); len(cs) > 0 {
			e.begun[id] = cs
		} else {
			delete(e.begun, id)
		}
	}
}

// end forgets r: its task accepts no more messages.
func (e *executor) end(r *run) {
	e.mu.Lock()
	if e.runs[r.task] == r {
		delete(e.runs, r.task)
	}
	e.mu.Unlock()
}

// writeFinal writes the status update that ends this execution.
func writeFinal(ctx context.Context, q eventqueue.Queue, rc *a2asrv.RequestContext, state a2a.TaskState, msg *a2a.Message, meta map[string]any) error {
	ev := a2a.NewStatusUpdateEvent(rc, state, msg)
	ev.Final = true
	ev.Metadata = meta
	return q.Write(ctx, ev)
}

// agentText returns an agent message of the task holding text.
func agentText(rc a2a.TaskInfoProvider, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text})
}

var _ a2asrv.AgentExecutor = (*executor)(nil)
