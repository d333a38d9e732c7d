package agtemporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// Options is what a worker runs turns with. Everything a turn's payload
// names (the model, the tools) is resolved here, worker-side: adapters,
// keys and tool code never travel through workflow history.
type Options struct {
	// Models are the models turns may name, by name; DefaultModel is the
	// one a turn that names none uses.
	Models       map[string]llm.Model
	DefaultModel string
	// NewModel, when set, makes the model of an agent.Spec that names a
	// provider or a model not in Models (the agcore-temporal worker builds
	// adapters with the provider registry, from its own keys); each
	// (provider, model) is made once and kept.
	NewModel func(provider, model string) (llm.Model, error)
	// Hooks are the worker's hooks and guardrails, by name: an agent.Spec
	// names those that apply to it (Spec.Hooks), and each runs as an
	// activity.
	Hooks *middleware.Hooks
	// Tools are the tools turns may offer, in the order they are offered.
	Tools []tool.Tool
	// ToolsNow, when set, returns the worker's tools as they are now, in
	// place of Tools, for tools that change while the worker runs (its MCP
	// servers', after tools/list_changed): each description of a turn,
	// each provider's injected tools and each tool call look them up
	// there. It must be safe for concurrent use.
	ToolsNow func() []tool.Tool
	// Store keeps sessions; nil runs turns without history or persistence
	// (a turn with a session id then fails).
	Store session.Store
	// Providers add context to every run that has a session, each call
	// of Invoking and Invoked an activity. Their Invocation has no Agent,
	// and of the tools they inject only those the worker has (Tools, or
	// ToolsNow) are offered. A provider whose Injection has ToolsNow is
	// asked for its tools again before each model call of the turn after
	// the first (an activity each time), as in-process.
	Providers []agent.ContextProvider
	// Telemetry, when set, traces each model call (a chat span in the
	// GenAI conventions) and each tool call (execute_tool) inside its
	// activity's span: with Temporal's OpenTelemetry interceptor on the
	// client and the worker, a turn is one trace from the client through
	// the workflow to every call. otelagent.New returns one.
	Telemetry agent.Telemetry
	// Live receives the text of each model call as it streams; nil sends
	// it nowhere.
	Live Live
	// MaxResultBytes cuts long tool results (0: tool.DefaultMaxResultBytes;
	// negative: no limit).
	MaxResultBytes int
	// Logger receives warnings (a failed provider, a failed live
	// publish); nil means slog.Default().
	Logger *slog.Logger
	// AfterPersist, when set, runs after each successful session append,
	// before the activity reports its completion (tests use it to crash
	// a worker at that point).
	AfterPersist func(ctx context.Context, sessionID, turnID string)
}

// Register registers the turn and session workflows and their activities
// on a worker.
func Register(w worker.Registry, opts Options) {
	a := &activities{opts: opts, made: map[string]llm.Model{}}
	if a.opts.Logger == nil {
		a.opts.Logger = slog.Default()
	}
	w.RegisterWorkflowWithOptions(TurnWorkflow, workflow.RegisterOptions{Name: TurnWorkflowName})
	w.RegisterWorkflowWithOptions(TurnWorkflowV1, workflow.RegisterOptions{Name: TurnWorkflowV1Name})
	w.RegisterWorkflowWithOptions(SessionWorkflow, workflow.RegisterOptions{Name: SessionWorkflowName})
	w.RegisterActivityWithOptions(a.Prepare, activity.RegisterOptions{Name: activityPrepare})
	w.RegisterActivityWithOptions(a.Model, activity.RegisterOptions{Name: activityModel})
	w.RegisterActivityWithOptions(a.Tool, activity.RegisterOptions{Name: activityTool})
	w.RegisterActivityWithOptions(a.Persist, activity.RegisterOptions{Name: activityPersist})
	w.RegisterActivityWithOptions(a.Summarize, activity.RegisterOptions{Name: activitySummarize})
	w.RegisterActivityWithOptions(a.Describe, activity.RegisterOptions{Name: activityDescribe})
	w.RegisterActivityWithOptions(a.Load, activity.RegisterOptions{Name: activityLoad})
	w.RegisterActivityWithOptions(a.Provide, activity.RegisterOptions{Name: activityProvide})
	w.RegisterActivityWithOptions(a.Hook, activity.RegisterOptions{Name: activityHook})
	w.RegisterActivityWithOptions(a.Quota, activity.RegisterOptions{Name: activityQuota})
	w.RegisterActivityWithOptions(a.ResponseEvents, activity.RegisterOptions{Name: activityResponseEvents})
	w.RegisterActivityWithOptions(a.ResponseEnd, activity.RegisterOptions{Name: activityResponseEnd})
	w.RegisterActivityWithOptions(a.AGUIEnd, activity.RegisterOptions{Name: activityAGUIEnd})
	w.RegisterActivityWithOptions(a.A2ATask, activity.RegisterOptions{Name: activityA2ATask})
	w.RegisterActivityWithOptions(a.WebEnd, activity.RegisterOptions{Name: activityWebEnd})
}

// PrepareInput is the Prepare activity's input.
type PrepareInput struct {
	SessionID, TurnID, Model string
	Messages                 []llm.Message
	Tools                    []string
}

// PrepareResult is what the Prepare activity found: the session's
// history, the providers' additions, the tools offered and the model's
// limits.
type PrepareResult struct {
	// History holds the session's stored messages from Base on: those
	// after its compaction (the view a turn needs), or all of them.
	History []llm.Message
	// Compaction is the session's compaction view (nil when none); Base
	// the number of stored messages before History[0].
	Compaction   *session.Compaction
	Base         int
	Instructions string
	Messages     []llm.Message
	State        map[string]json.RawMessage
	Tools        []ToolSpec
	Info         llm.ModelInfo
}

// ModelInput is one model call.
type ModelInput struct {
	// Provider and Model name the model (see Options.NewModel); a Model
	// alone may name one of Options.Models.
	Provider string `json:",omitempty"`
	Model    string
	Request  *llm.Request
	// Stream is the live-output stream key; empty publishes nothing.
	Stream string
	Step   int
}

// ToolInput is one tool call.
type ToolInput struct {
	CallID, Name string
	Input        json.RawMessage
}

// ToolOutput is a tool call's result text; IsError marks an error result
// the model reads.
type ToolOutput struct {
	Text    string
	IsError bool
}

// PersistInput is the session append of a finished turn.
type PersistInput struct {
	SessionID string
	Principal string `json:",omitempty"`
	Turn      session.Turn
}

type activities struct {
	opts Options
	mu   sync.Mutex
	made map[string]llm.Model // NewModel's, by provider and model
	now  toolsNowCache        // the providers' ToolsNow, by run (toolsnow.go)
	// tasks writes A2A tasks and sends their push notifications (a2a.go).
	tasks a2aserve.TaskWriter
}

func (a *activities) model(name string) (llm.Model, error) { return a.resolve("", name) }

// resolve finds the model a turn names: one of Options.Models (by name,
// or the default when nothing is named), else one NewModel makes.
func (a *activities) resolve(provider, name string) (llm.Model, error) {
	if provider == "" {
		key := name
		if key == "" {
			key = a.opts.DefaultModel
		}
		if m, ok := a.opts.Models[key]; ok {
			return m, nil
		}
	}
	if a.opts.NewModel == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no model %q on this worker", strings.Trim(provider+"/"+name, "/")), ErrTypeUnknownModel, nil)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := provider + "\x00" + name
	if m, ok := a.made[key]; ok {
		return m, nil
	}
	m, err := a.opts.NewModel(provider, name)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUnknownModel, nil)
	}
	a.made[key] = m
	return m, nil
}

// Prepare loads the session's history, runs the context providers and
// describes the tools and the model.
func (a *activities) Prepare(ctx context.Context, in PrepareInput) (*PrepareResult, error) {
	m, err := a.model(in.Model)
	if err != nil {
		return nil, err
	}
	out := &PrepareResult{Info: m.Info()}
	tools := a.opts.Tools
	if in.Tools != nil {
		tools = tools[:0:0]
		for _, name := range in.Tools {
			t, ok := tool.Find(a.opts.Tools, name)
			if !ok {
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no tool %q on this worker", name), "agcore.UnknownTool", nil)
			}
			tools = append(tools, t)
		}
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, ToolSpec{Definition: tool.Definition(t), NeedsApproval: tool.NeedsApproval(t)})
	}
	if in.SessionID == "" {
		return out, nil
	}
	if a.opts.Store == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no session store", "agcore.NoStore", nil)
	}
	sess, err := a.opts.Store.LoadView(ctx, in.SessionID)
	switch {
	case errors.Is(err, session.ErrNotFound):
		sess = &session.Session{ID: in.SessionID}
	case err != nil:
		return nil, err
	}
	out.History, out.Compaction, out.Base = sess.Messages, sess.Compaction, sess.Base
	if len(a.opts.Providers) == 0 {
		return out, nil
	}
	before := make(map[string]json.RawMessage, len(sess.State))
	for k, v := range sess.State {
		before[k] = v
	}
	inv := &agent.Invocation{RunID: in.TurnID, Session: sess, Messages: in.Messages, Options: &agent.RunOptions{SessionID: in.SessionID}}
	var instr []string
	for i, p := range a.opts.Providers {
		inj, err := p.Invoking(ctx, inv)
		if err != nil {
			a.opts.Logger.Warn("agtemporal: context provider failed", "provider", i, "err", err)
			continue
		}
		if inj.Instructions != "" {
			instr = append(instr, inj.Instructions)
		}
		if inj.ReplaceMessages {
			out.Messages = nil
		}
		for _, msg := range inj.Messages {
			if msg.Role != llm.RoleSystem {
				out.Messages = append(out.Messages, msg)
			}
		}
	}
	out.Instructions = joinNonEmpty(instr...)
	for k, v := range sess.State {
		if old, ok := before[k]; !ok || !bytes.Equal(old, v) {
			if out.State == nil {
				out.State = map[string]json.RawMessage{}
			}
			out.State[k] = v
		}
	}
	for k := range before {
		if _, ok := sess.State[k]; !ok {
			if out.State == nil {
				out.State = map[string]json.RawMessage{}
			}
			out.State[k] = nil
		}
	}
	return out, nil
}

// Model makes one streaming model call: its deltas go to the live output
// (tagged with the attempt; a retry first publishes a reset), a heartbeat
// is sent on a timer, and the assembled response is returned. Errors are
// classified for Temporal's retry policy (see [ModelError]).
func (a *activities) Model(ctx context.Context, in ModelInput) (*llm.Response, error) {
	m, err := a.resolve(in.Provider, in.Model)
	if err != nil {
		return nil, err
	}
	if in.Request == nil {
		return nil, temporal.NewNonRetryableApplicationError("no request", "agcore.BadInput", nil)
	}
	info := activity.GetInfo(ctx)
	attempt := info.Attempt
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go heartbeat(ctx, info.HeartbeatTimeout)
	live := a.opts.Live
	if in.Stream == "" {
		live = nil
	}
	publish := func(ev LiveEvent) {
		if live == nil {
			return
		}
		ev.Step, ev.Attempt = in.Step, attempt
		if err := live.Publish(ctx, in.Stream, ev); err != nil {
			a.opts.Logger.Warn("agtemporal: live output", "err", err)
			live = nil // best effort: one failure stops this call's output
		}
	}
	if attempt > 1 {
		publish(LiveEvent{Kind: LiveReset})
	}
	if a.opts.Telemetry != nil {
		m = a.opts.Telemetry.ModelMiddleware()(m)
	}
	var resp *llm.Response
	for ev, err := range m.Stream(ctx, in.Request) {
		if err != nil {
			return nil, ModelError(err)
		}
		switch ev.Type {
		case llm.EventTextDelta:
			publish(LiveEvent{Kind: LiveText, Text: ev.Delta})
		case llm.EventThinkingDelta:
			publish(LiveEvent{Kind: LiveThinking, Text: ev.Delta})
		case llm.EventComplete:
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, ModelError(llm.IncompleteStream(info.ActivityType.Name, "the stream"))
	}
	uses := resp.Message.ToolUses()
	for _, u := range uses {
		publish(LiveEvent{Kind: LiveToolCall, Text: u.Name, CallID: u.ID})
	}
	if len(uses) == 0 {
		publish(LiveEvent{Kind: LiveDone})
	}
	return resp, nil
}

// heartbeat records a heartbeat every third of timeout until ctx ends.
func heartbeat(ctx context.Context, timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	tick := time.NewTicker(timeout / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			activity.RecordHeartbeat(ctx)
		}
	}
}

// ModelError turns a model call's error into the error the activity
// returns, so that Temporal's retry policy owns retries: a rate limit
// with a Retry-After becomes the next retry's delay, other retryable
// kinds (server errors, timeouts, lost connections) are retried with the
// policy's backoff, and every other kind (a 400, a bad key) is
// non-retryable.
func ModelError(err error) error {
	kind := llm.KindOf(err)
	msg := err.Error()
	// The details let the workflow rebuild the *llm.Error (modelErr).
	d := modelDetails{Kind: kind.String(), Message: msg}
	var le *llm.Error
	if errors.As(err, &le) {
		d = modelDetails{Kind: kind.String(), Provider: le.Provider, StatusCode: le.StatusCode, Code: le.Code, Message: le.Message}
	}
	switch {
	case kind == llm.KindRateLimited:
		return temporal.NewApplicationErrorWithOptions(msg, ErrTypeRateLimited, temporal.ApplicationErrorOptions{
			NextRetryDelay: llm.RetryAfterOf(err), Details: []any{d},
		})
	case llm.IsRetryable(err):
		return temporal.NewApplicationError(msg, ErrTypeModel+"."+kind.String(), d)
	default:
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeModel+"."+kind.String(), nil, d)
	}
}

// Tool runs one tool call. A tool's error is an error result the model
// reads; an error wrapping tool.ErrFatal fails the turn.
func (a *activities) Tool(ctx context.Context, in ToolInput) (out *ToolOutput, err error) {
	t, ok := tool.Find(a.toolsNow(), in.Name)
	if !ok {
		return &ToolOutput{Text: fmt.Sprintf("tool %q not found", in.Name), IsError: true}, nil
	}
	if td, ok := t.(tool.Timed); ok && td.Timeout() > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, td.Timeout())
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go heartbeat(ctx, activity.GetInfo(ctx).HeartbeatTimeout)
	input := in.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = &ToolOutput{Text: fmt.Sprintf("tool %s panicked: %v", in.Name, p), IsError: true}, nil
		}
	}()
	invoke := func(ctx context.Context, call tool.Call) (string, error) { return call.Tool.Invoke(ctx, call.Input) }
	if a.opts.Telemetry != nil {
		invoke = a.opts.Telemetry.ToolMiddleware()(invoke)
	}
	text, terr := invoke(ctx, tool.Call{ID: in.CallID, Name: in.Name, Input: input, Tool: t})
	if terr != nil {
		if tool.IsFatal(terr) {
			return nil, temporal.NewNonRetryableApplicationError(terr.Error(), ErrTypeFatalTool, nil)
		}
		if ctx.Err() != nil && errors.Is(terr, context.Canceled) {
			return nil, terr // the worker is stopping: the call is retried
		}
		text = terr.Error()
	}
	max := a.opts.MaxResultBytes
	if max == 0 {
		max = tool.DefaultMaxResultBytes
	}
	if max > 0 {
		text = tool.Truncate(text, max)
	}
	return &ToolOutput{Text: text, IsError: terr != nil}, nil
}

// Persist appends the turn to its session; a retried append of a turn the
// session already holds is a no-op (session.Store is idempotent by turn
// id).
func (a *activities) Persist(ctx context.Context, in PersistInput) error {
	st, err := a.store(in.Principal)
	if err != nil {
		return err
	}
	if err := st.Append(ctx, in.SessionID, in.Turn); err != nil {
		if errors.Is(err, session.ErrOwner) || errors.Is(err, session.ErrInvalidID) {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
		}
		return err
	}
	if a.opts.AfterPersist != nil {
		a.opts.AfterPersist(ctx, in.SessionID, in.Turn.ID)
	}
	return nil
}

// Summarize makes one blocking model call for the budget policy's
// summarization strategy.
func (a *activities) Summarize(ctx context.Context, in ModelInput) (*llm.Response, error) {
	m, err := a.resolve(in.Provider, in.Model)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go heartbeat(ctx, activity.GetInfo(ctx).HeartbeatTimeout)
	resp, err := m.Generate(ctx, in.Request)
	if err != nil {
		return nil, ModelError(err)
	}
	return resp, nil
}
