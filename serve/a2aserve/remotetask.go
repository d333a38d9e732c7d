package a2aserve

// Tasks whose turns run in other processes (Options.Remote: agcore serve
// --temporal's workers). The process that accepts a task stores it
// working, marked remote, and hands its turn over as a RemoteTask; what
// runs the turn turns the agent's updates into the task's progress with
// TaskEvents and writes it with StoreTask (its push notifications
// included), the last time with final set. Every process follows the task
// from the store; none declares it lost when the accepting one dies.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// Remote runs the turns of A2A tasks in other processes, which outlive
// the one that accepted them: the workers of a durable runner (agcore
// serve --temporal). With Options.Remote set and tasks kept in the
// store's records, every task's turn is handed over (StartTask) instead
// of running in this process; tasks/cancel, on any process, calls
// CancelTask; a message deciding the task's approvals, on any process,
// lists them with PendingTask and decides them with DecideTask.
type Remote interface {
	// StartTask starts t's turn elsewhere and returns once it was handed
	// over. An error fails the task.
	StartTask(ctx context.Context, t RemoteTask) error
	// CancelTask asks the turn of task of agent to stop; the task then
	// ends canceled. A turn unknown to the runner is not an error.
	CancelTask(ctx context.Context, agent, task string) error
	// PendingTask returns the calls the turn of task of agent waits on;
	// none when it waits on nothing (or is over).
	PendingTask(ctx context.Context, agent, task string) ([]PendingCall, error)
	// DecideTask decides the waiting call callID of the turn of task of
	// agent. It returns an error wrapping approval.ErrUnknown when the
	// turn does not wait on it.
	DecideTask(ctx context.Context, agent, task, callID string, d tool.Decision) error
}

// PendingCall is a call a remote task's turn waits on.
type PendingCall struct {
	CallID string
	Tool   string
	Input  json.RawMessage
}

// RemoteTask is a task's turn for a Remote runner: what to run, as data,
// and where its progress goes.
type RemoteTask struct {
	// Agent names the agent (host.Set).
	Agent string
	// Owner is the principal the session store is scoped to
	// (session.Scoped; host.Owner), SessionID the session the turn is
	// appended to (the task's context).
	Owner, SessionID string
	// Input is the turn's new messages.
	Input []llm.Message
	// TurnID is the run id of the stored turn: the task id.
	TurnID string
	// Log is where the task's progress goes.
	Log TaskLog
}

// TaskLog is a remote task's place in the store and what its writer
// needs to know.
type TaskLog struct {
	// Agent and TaskID name the task's record
	// (agcore.a2a.tasks/AGENT/TASK); Principal is the principal that
	// started it, its owner.
	Agent, TaskID, Principal string
	// Task is the task as the accepting process stored it (working).
	Task json.RawMessage
	// SessionID is the task's session, TurnsBefore the number of turns it
	// held before the turn ran (-1: unknown): the completed task records
	// the number of its turn (session_turn) when it is the next one.
	SessionID   string `json:",omitempty"`
	TurnsBefore int
	// PushAllowHosts are the webhook hosts the operator allows although
	// private (Options.PushAllowHosts).
	PushAllowHosts []string `json:",omitempty"`
}

// TaskEvents turns a remote task's agent updates into the task's
// progress, as a task of the serving process shows it: working, the
// streamed answer as the artifact "answer", each tool call a working
// status message, input-required (with the approval message) while calls
// wait for a decision, and its end (End). It does no I/O: the caller
// takes the task when it changed (Take) and writes it (StoreTask). Given
// the same updates, the same clock and the same ids it makes the same
// task, byte for byte.
type TaskEvents struct {
	task    *a2a.Task
	now     func() time.Time
	ids     func(prefix string) string
	answer  strings.Builder
	waiting []PendingCall
	changed bool
}

// NewTaskEvents starts the progress of l's task. now is the clock of the
// status timestamps; ids, when not nil, makes the messages' and the
// artifact's ids (prefix, then anything unique in the task); nil makes
// random ones.
func NewTaskEvents(l TaskLog, now func() time.Time, ids func(prefix string) string) (*TaskEvents, error) {
	var t a2a.Task
	if err := json.Unmarshal(l.Task, &t); err != nil {
		return nil, fmt.Errorf("a2aserve: the task %s: %w", l.TaskID, err)
	}
	if now == nil {
		now = time.Now
	}
	if ids == nil {
		ids = func(string) string { return a2a.NewMessageID() }
	}
	return &TaskEvents{task: &t, now: now, ids: ids}, nil
}

// message is an agent message of the task with an id of ids.
func (e *TaskEvents) message(parts ...a2a.Part) *a2a.Message {
	m := a2a.NewMessageForTask(a2a.MessageRoleAgent, e.task, parts...)
	m.ID = e.ids("msg-")
	return m
}

// status moves the task to state.
func (e *TaskEvents) status(state a2a.TaskState, msg *a2a.Message, meta map[string]any) {
	setStatusAt(e.task, state, msg, meta, e.now().UTC())
	e.changed = true
}

// answerArtifact returns the task's answer artifact, made when missing.
func (e *TaskEvents) answerArtifact() *a2a.Artifact {
	for _, a := range e.task.Artifacts {
		if a.Name == "answer" {
			return a
		}
	}
	a := &a2a.Artifact{ID: a2a.ArtifactID(e.ids("artifact-")), Name: "answer"}
	e.task.Artifacts = append(e.task.Artifacts, a)
	return a
}

// Update adds one of the turn's updates (the finish update adds nothing:
// End ends the task).
func (e *TaskEvents) Update(u agent.Update) {
	switch u.Kind {
	case agent.UpdateText:
		if u.Text == "" {
			return
		}
		e.resumed()
		e.answer.WriteString(u.Text)
		e.answerArtifact().Parts = a2a.ContentParts{a2a.TextPart{Text: e.answer.String()}}
		e.changed = true
	case agent.UpdateToolCall:
		e.resumed()
		c := u.ToolCall
		e.status(a2a.TaskStateWorking, e.message(a2a.TextPart{Text: "Calling " + c.Name + "."},
			a2a.DataPart{Data: map[string]any{"tool": c.Name, "call_id": c.ID, "arguments": string(c.Input)}}), nil)
	case agent.UpdateToolResult:
		if u.ToolResult != nil {
			e.decided(u.ToolResult.ToolCallID)
		}
	}
}

// Waiting records that the call callID (tool tool, arguments input) waits
// for a decision: the task is input-required, its status message naming
// every waiting call, each decided by a message whose approval_id is its
// call id.
func (e *TaskEvents) Waiting(callID, tool string, input json.RawMessage) {
	e.waiting = append(e.waiting, PendingCall{CallID: callID, Tool: tool, Input: input})
	e.status(a2a.TaskStateInputRequired, e.approvalMessage(), nil)
}

func (e *TaskEvents) approvalMessage() *a2a.Message {
	m := approvalMessage(e.task, pendingRequests(e.waiting), "")
	m.ID = e.ids("msg-")
	return m
}

// decided forgets the waiting call callID, its result in.
func (e *TaskEvents) decided(callID string) {
	for i, w := range e.waiting {
		if w.CallID == callID {
			e.waiting = append(e.waiting[:i:i], e.waiting[i+1:]...)
			break
		}
	}
	if e.task.Status.State != a2a.TaskStateInputRequired {
		return
	}
	if len(e.waiting) == 0 {
		e.status(a2a.TaskStateWorking, nil, nil)
	} else {
		e.status(a2a.TaskStateInputRequired, e.approvalMessage(), nil)
	}
}

// resumed moves a task waiting for a decision back to working: the turn
// goes on.
func (e *TaskEvents) resumed() {
	if e.task.Status.State == a2a.TaskStateInputRequired {
		e.waiting = nil
		e.status(a2a.TaskStateWorking, nil, nil)
	}
}

// Take returns the task as JSON when it changed since the last Take.
func (e *TaskEvents) Take() (json.RawMessage, bool) {
	if !e.changed {
		return nil, false
	}
	e.changed = false
	b, err := json.Marshal(e.task)
	if err != nil {
		return nil, false
	}
	return b, true
}

// End ends the task as a task of the serving process ends: resp and err
// are the run's (agent.Stream.Each's); cancelled reports that a
// cancellation (CancelTask) ended it. Completed, the answer artifact
// holds the final answer alone and it and the task's metadata carry the
// turn's usage, cost, model and run under MetadataKey; else failed (the
// error in the status message) or canceled. It returns the final task as
// JSON, and the error to log, nil when the turn did not fail.
func (e *TaskEvents) End(resp *agent.Response, err error, cancelled bool) (json.RawMessage, error) {
	if err == nil && resp == nil {
		err = errors.New("a2aserve: the turn ended without a response")
	}
	if err == nil {
		err = resp.PersistErr()
	}
	var failed error
	e.waiting = nil
	switch {
	case err != nil && cancelled:
		e.status(a2a.TaskStateCanceled, e.message(a2a.TextPart{Text: "Canceled."}), nil)
	case err != nil:
		failed = err
		e.status(a2a.TaskStateFailed, e.message(a2a.TextPart{Text: "The turn failed: " + err.Error()}), nil)
	default:
		meta := map[string]any{MetadataKey: turnMeta(resp, 0)}
		a := e.answerArtifact()
		a.Parts = a2a.ContentParts{a2a.TextPart{Text: resp.Text()}}
		a.Metadata = meta
		e.status(a2a.TaskStateCompleted, nil, meta)
	}
	e.changed = false
	b, jerr := json.Marshal(e.task)
	if jerr != nil {
		return nil, errors.Join(failed, jerr)
	}
	return b, failed
}
