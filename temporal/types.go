package agtemporal

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// Names under which the workflows, activities, query and update are
// registered; clients and workers must agree on them.
const (
	// TurnWorkflowName is the workflow that runs one turn.
	TurnWorkflowName = "agcore.Turn"
	// SessionWorkflowName is the long-lived workflow that serializes the
	// turns of one session.
	SessionWorkflowName = "agcore.Session"
	// PendingQuery returns the turn's pending approvals ([]PendingApproval).
	PendingQuery = "agcore.pending"
	// DecideUpdate delivers an approval decision ([Decision]).
	DecideUpdate = "agcore.decide"
	// TurnUpdate submits a turn to a session workflow ([TurnRequest]).
	TurnUpdate = "agcore.turn"

	activityPrepare   = "agcore.Prepare"
	activityModel     = "agcore.Model"
	activityTool      = "agcore.Tool"
	activityPersist   = "agcore.Persist"
	activitySummarize = "agcore.Summarize"
)

// Error types of the application errors the activities return; a
// workflow's caller can test them with temporal.ApplicationError.Type.
const (
	ErrTypeModel        = "agcore.ModelError"
	ErrTypeRateLimited  = "agcore.RateLimited"
	ErrTypeFatalTool    = "agcore.FatalTool"
	ErrTypeUnknownModel = "agcore.UnknownModel"
)

// ErrUnknownCall is returned by a decision for a call id the turn is not
// waiting on (the update's validator rejects it). It wraps
// tool.ErrNotPending.
var ErrUnknownCall = fmt.Errorf("agtemporal: %w", tool.ErrNotPending)

// TurnInput is one turn as a workflow runs it. Everything in it is data:
// the model and the tools are names the worker resolves ([Worker]).
type TurnInput struct {
	// SessionID names the session the history is loaded from and the turn
	// appended to; empty runs the turn without a session.
	SessionID string
	// TurnID identifies the turn: the run id of the stored session.Turn
	// (so persistence is idempotent) and part of the workflow id.
	TurnID string
	// Model is the name of a model registered on the worker; empty means
	// the worker's default.
	Model string
	// Instructions open the system message.
	Instructions string
	// Messages are the caller's messages for the turn.
	Messages []llm.Message
	// Tools names the worker's tools offered to the model, in this order;
	// nil offers every tool the worker has.
	Tools []string
	// MaxSteps is the most model calls of the turn (0: DefaultMaxSteps).
	// The calls of the last one are answered without running (error
	// results saying so) and the turn ends with llm.FinishMaxSteps, as
	// in the in-process tool loop.
	MaxSteps int
	// MaxTokens caps each model call's output (0: the adapter's default).
	MaxTokens int
	// ApprovalTimeout, when positive, denies a call still waiting for a
	// decision after this long (a durable workflow timer).
	ApprovalTimeout time.Duration
	// Budget is the most input tokens of one request (0: the model's input
	// budget, when its context window is known).
	Budget int
	// Summarize lets the budget policy summarize old turns (each summary
	// is an activity) before it drops them.
	Summarize bool
	// Timeouts of the activities; zero values take the defaults.
	Timeouts Timeouts
}

// Timeouts bound the turn's activities. A model or tool call that stops
// heartbeating for Heartbeat (its worker crashed) is retried elsewhere.
type Timeouts struct {
	Model     time.Duration // start to close of one model call (default 10m)
	Heartbeat time.Duration // heartbeat of a model or tool call (default 20s)
	Tool      time.Duration // start to close of one tool call (default 10m)
	Persist   time.Duration // start to close of the session append (default 1m)
	// ModelAttempts is the most attempts of one model call (default 5);
	// ToolAttempts of one tool call (default 3).
	ModelAttempts, ToolAttempts int32
}

func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Model, 10*time.Minute)
	def(&t.Heartbeat, 20*time.Second)
	def(&t.Tool, 10*time.Minute)
	def(&t.Persist, time.Minute)
	if t.ModelAttempts <= 0 {
		t.ModelAttempts = 5
	}
	if t.ToolAttempts <= 0 {
		t.ToolAttempts = 3
	}
	return t
}

// TurnResult is what a finished turn returns.
type TurnResult struct {
	TurnID string
	// Text is the final assistant message's text.
	Text string
	// FinishReason is why the turn ended: the last model call's reason,
	// or llm.FinishMaxSteps at the step limit, or llm.FinishLength when
	// an answer with tool calls was cut off (its calls were not run).
	FinishReason llm.FinishReason
	// Transcript holds every message the turn added: each assistant
	// message and the tool results answering it.
	Transcript []llm.Message
	Usage      llm.Usage
	// Steps is the number of model calls.
	Steps int
	// Stored reports that the turn was appended to the session.
	Stored bool
}

// PendingApproval is a tool call waiting for a decision.
type PendingApproval struct {
	CallID string
	Tool   string
	Input  string // the call's JSON arguments
	// Since is when the turn started waiting (workflow time).
	Since time.Time
}

// Decision approves or denies one pending call: a tool.Decision (the one
// decision model, see [Decision.Tool]) with the call it is for, in the
// shape the DecideUpdate carries.
type Decision struct {
	CallID  string
	Approve bool
	// Reason is shown to the model with a denial.
	Reason string
}

// Tool returns d as the tool.Decision it carries.
func (d Decision) Tool() tool.Decision {
	return tool.Decision{Approved: d.Approve, Reason: d.Reason}
}

// TurnRequest is one turn submitted to a session workflow.
type TurnRequest struct {
	TurnID   string
	Messages []llm.Message
}

// ToolSpec is a tool as the workflow sees it: its definition and whether
// its calls need approval.
type ToolSpec struct {
	Definition    llm.ToolDefinition
	NeedsApproval bool
}

// TurnWorkflowID is the workflow id of a turn: the same session and turn
// always give the same id, so a repeated start is recognized.
func TurnWorkflowID(sessionID, turnID string) string {
	if sessionID == "" {
		return "agcore-turn/" + turnID
	}
	return "agcore-turn/" + sessionID + "/" + turnID
}

// SessionWorkflowID is the workflow id of a session's long-lived workflow.
func SessionWorkflowID(sessionID string) string { return "agcore-session/" + sessionID }

// StreamKey is the key of a turn's live-output stream, by workflow id.
func StreamKey(workflowID string) string { return "agcore:stream:" + workflowID }

func validateInput(in *TurnInput) error {
	if in.TurnID == "" {
		return errors.New("agtemporal: TurnInput.TurnID is empty")
	}
	if strings.ContainsAny(in.TurnID, "/ \t\n") {
		return fmt.Errorf("agtemporal: turn id %q holds a slash or a space", in.TurnID)
	}
	if len(in.Messages) == 0 {
		return errors.New("agtemporal: a turn needs at least one message")
	}
	return nil
}
