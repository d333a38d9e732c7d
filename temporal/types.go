package agtemporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/tool"
)

// Names under which the workflows, activities, query and update are
// registered; clients and workers must agree on them.
const (
	// TurnWorkflowName is the workflow that runs one turn: the agent's own
	// loop ([TurnWorkflow]).
	TurnWorkflowName = "agcore.Turn.v2"
	// TurnWorkflowV1Name is the frozen turn workflow of earlier versions
	// ([TurnWorkflowV1]), registered so that their running turns finish.
	TurnWorkflowV1Name = "agcore.Turn"
	// SessionWorkflowName is the long-lived workflow that serializes the
	// turns of one session.
	SessionWorkflowName = "agcore.Session"
	// PendingQuery returns the turn's pending approvals ([]PendingApproval).
	PendingQuery = "agcore.pending"
	// DecideUpdate delivers an approval decision ([Decision]).
	DecideUpdate = "agcore.decide"
	// TurnUpdate submits a turn to a session workflow ([TurnRequest]).
	TurnUpdate = "agcore.turn"
	// ElicitUpdate files an MCP server's request for input, made during a
	// tool activity of the turn, as a pending decision ([ElicitRequest]);
	// it completes with the [Decision] once one arrives ([Elicit]).
	ElicitUpdate = "agcore.elicit"

	activityPrepare   = "agcore.Prepare"
	activityModel     = "agcore.Model"
	activityTool      = "agcore.Tool"
	activityPersist   = "agcore.Persist"
	activitySummarize = "agcore.Summarize"
	activityDescribe  = "agcore.Describe"
	activityLoad      = "agcore.Load"
	activityProvide   = "agcore.Provide"
	activityInvoked   = "agcore.Invoked"
	activityHook      = "agcore.Hook"
)

// Error types of the application errors the activities return; a
// workflow's caller can test them with temporal.ApplicationError.Type.
const (
	ErrTypeModel        = "agcore.ModelError"
	ErrTypeRateLimited  = "agcore.RateLimited"
	ErrTypeFatalTool    = "agcore.FatalTool"
	ErrTypeUnknownModel = "agcore.UnknownModel"
	// ErrTypeGuardrail: a guardrail tripped or failed (details: the
	// *middleware.GuardrailError's fields); ErrTypeBlocked: a hook
	// blocked the turn; ErrTypeBudget: a spending limit refused the
	// turn's first model call; ErrTypeStructured: no answer validated
	// against the turn's schema. [TurnError] turns each back into the
	// error an in-process run returns.
	ErrTypeGuardrail  = "agcore.Guardrail"
	ErrTypeBlocked    = "agcore.Blocked"
	ErrTypeBudget     = "agcore.Budget"
	ErrTypeStructured = "agcore.Structured"
	ErrTypeBadInput   = "agcore.BadInput"
	// ErrTypeFormContent: the DecideUpdate's validator refused a
	// decision's content (mcp.CheckDecision); [Decide] returns it as an
	// error matching mcp.ErrFormContent.
	ErrTypeFormContent = "agcore.FormContent"
)

// ErrUnknownCall is returned by a decision for a call id the turn is not
// waiting on (the update's validator rejects it). It wraps
// tool.ErrNotPending.
var ErrUnknownCall = fmt.Errorf("agtemporal: %w", tool.ErrNotPending)

// TurnInput is one turn as a workflow runs it. Everything in it is data:
// the agents are [agent.Spec] values, the model and the tools names the
// worker resolves ([Options]).
type TurnInput struct {
	// Agents describe the turn's agents: the first answers the turn,
	// unless Agent names another; their handoffs and agent tools name
	// agents of this list. Empty: one agent, "agcore", made of Model,
	// Instructions, Tools, MaxSteps, Budget and Summarize below.
	Agents []agent.Spec
	Agent  string
	// Principal, when set, owns the session (the worker's store is scoped
	// to it, as agcore serve scopes each request's); Quota, with it, is its
	// spending limits, kept in the worker store's records and shared with
	// every process on that store (budget.StoreQuota's).
	Principal string
	Quota     *Quota
	// QuotaPrincipal, when set, is whose Quota is, in place of Principal
	// (agcore serve's local principal has a quota but an unscoped store).
	QuotaPrincipal string `json:",omitempty"`
	// Temperature and MaxTokens go into every model request of the turn.
	Temperature *float64
	// Schema, when set, asks for the answer as one JSON object that
	// validates against this JSON Schema (structured.Run: the provider's
	// native mode or a forced answer tool, one repair turn);
	// TurnResult.Object holds it.
	Schema json.RawMessage
	// ApproveAll approves every call that needs approval without asking
	// (agcore run --yes).
	ApproveAll bool
	// Timeout, when positive, bounds the turn's workflow (its execution
	// timeout, set by StartTurn); a turn past it fails. A background
	// response's turn (Response) is bounded by a durable timer instead, so
	// that its response still ends ("failed", code "timeout").
	Timeout time.Duration
	// Record, when true, returns the turn's record (package replay's JSON
	// Lines) in TurnResult.Record, for agcore replay.
	Record bool
	// RecordHeader, when set, is the header the record starts with (the
	// agcore command writes the one a local run's record would have, so
	// that agcore replay rebuilds the same agent); nil describes the
	// answering agent's spec.
	RecordHeader *replay.Header
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
	// MaxSteps is the most model calls of the turn (0: middleware.DefaultMaxSteps).
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
	// RunInstructions are added to the answering agent's instructions for
	// this turn only (agent.RunOptions.Instructions: a Responses
	// request's instructions and system messages).
	RunInstructions string `json:",omitempty"`
	// Response, when set, makes the turn a background response of agcore
	// serve: its updates are written to the serving processes' event log
	// as the Responses API's events, at most once per EventsFlushInterval
	// of workflow time, and its outcome to the response's record (the
	// worker's Store must be theirs). A cancelled turn ends the response
	// "cancelled". It does not combine with Schema.
	Response *serve.ResponseLog `json:",omitempty"`
	// AGUI, when set (and Response not), makes the turn an AG-UI run of
	// agcore serve: its updates are written to the event log as AG-UI's
	// events, as Response's are, and its end (RUN_FINISHED or RUN_ERROR)
	// last, its lease record deleted (agui.go). It does not combine with
	// Schema.
	AGUI *serve.AGUILog `json:",omitempty"`
	// Web, when set (and neither Response nor AGUI), makes the turn a chat
	// turn of agcore serve's web page: its updates are written to the
	// event log as the page's events, as Response's are, and its end
	// (finish or error) last, its run record deleted (web.go). It does not
	// combine with Schema.
	Web *web.ChatLog `json:",omitempty"`
	// A2A, when set (and none of Response, AGUI, Web), makes the turn an
	// A2A task of agcore serve: its progress is written to the task's
	// record in the serving processes' store (a2aserve.TaskEvents, at
	// most once per EventsFlushInterval of workflow time, then its end:
	// completed, failed or canceled), with the push notifications of each
	// change of its state (a2a.go). It does not combine with Schema.
	A2A *a2aserve.TaskLog `json:",omitempty"`
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
	// Agent is the agent that answered (after handoffs, the last one the
	// turn was handed to).
	Agent string `json:",omitempty"`
	// CostUSD is the turn's price, sub-agents included; meaningful when
	// CostKnown.
	CostUSD   float64 `json:",omitempty"`
	CostKnown bool    `json:",omitempty"`
	// Budget is what is left of the turn's spending limits (nil without
	// limits); Exceeded names the limit that ended the turn, when one did
	// (FinishReason is then llm.FinishBudget and the turn is stored).
	Budget   *budget.Remaining     `json:",omitempty"`
	Exceeded *budget.ExceededError `json:",omitempty"`
	// Object is the typed answer of a turn with a Schema.
	Object json.RawMessage `json:",omitempty"`
	// Record is the turn's record, when TurnInput.Record asked for it.
	Record []byte `json:",omitempty"`
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
	// Content, with the approval of an MCP server's request for input
	// (tool [ElicitationTool]), is the form's answer (tool.Decision's
	// Content): a JSON object's text the DecideUpdate's validator checks against
	// the requested schema, over its defaults (mcp.CheckDecision).
	Content string `json:",omitempty"`
}

// Tool returns d as the tool.Decision it carries.
func (d Decision) Tool() tool.Decision {
	return tool.Decision{Approved: d.Approve, Reason: d.Reason, Content: d.Content}
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
	if in.Response != nil && hasSchema(in.Schema) {
		return errors.New("agtemporal: a background response (Response) has no Schema")
	}
	if in.AGUI != nil && (in.Response != nil || hasSchema(in.Schema)) {
		return errors.New("agtemporal: an AG-UI run (AGUI) has no Response and no Schema")
	}
	if in.A2A != nil && (in.Response != nil || in.AGUI != nil || in.Web != nil || hasSchema(in.Schema)) {
		return errors.New("agtemporal: an A2A task (A2A) has no Response, AGUI, Web or Schema")
	}
	if in.Web != nil && (in.Response != nil || in.AGUI != nil || hasSchema(in.Schema)) {
		return errors.New("agtemporal: a chat turn of the web page (Web) has no Response, AGUI or Schema")
	}
	return nil
}
