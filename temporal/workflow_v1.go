package agtemporal

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
)

// turn is the state of one running turn workflow. Every field is rebuilt
// identically when the workflow replays.
type turn struct {
	in        TurnInput
	to        Timeouts
	specs     []ToolSpec
	info      llm.ModelInfo
	pending   []PendingApproval   // the calls waiting for a decision, in call order
	decisions map[string]Decision // by call id; read by key only
	summaries int                 // summarization activities started
	streamKey string
}

// TurnWorkflowV1 is the turn workflow of agcore before version 0.4,
// frozen: registered under [TurnWorkflowV1Name] so that turns started by an
// earlier agcore finish on a new worker. Nothing starts it any more, and it
// must not change (the committed histories testdata/history-v1-*.json
// replay it). It was its own loop over agcore's pieces; [TurnWorkflow], the
// agent's own loop, replaces it.
//
// It loads the session (an activity), calls the model (an activity per
// call) and the tools (an activity per call, a batch in parallel) until the
// model answers without calling tools, parks calls that need approval until
// a [Decision] arrives by the [DecideUpdate] update, and appends the turn to
// the session (an activity keyed by the turn id).
func TurnWorkflowV1(ctx workflow.Context, in TurnInput) (*TurnResult, error) {
	if err := validateInput(&in); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agcore.BadInput", nil)
	}
	t := &turn{in: in, to: in.Timeouts.withDefaults(), decisions: map[string]Decision{},
		streamKey: StreamKey(workflow.GetInfo(ctx).WorkflowExecution.ID)}
	if err := workflow.SetQueryHandler(ctx, PendingQuery, func() ([]PendingApproval, error) {
		out := make([]PendingApproval, 0, len(t.pending))
		for _, p := range t.pending {
			if _, done := t.decisions[p.CallID]; !done {
				out = append(out, p)
			}
		}
		return out, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, DecideUpdate,
		func(_ workflow.Context, d Decision) error {
			t.decisions[d.CallID] = d
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, d Decision) error {
			for _, p := range t.pending {
				if p.CallID == d.CallID {
					if _, done := t.decisions[d.CallID]; done {
						return fmt.Errorf("%w: %q was already decided", ErrUnknownCall, d.CallID)
					}
					return nil
				}
			}
			return fmt.Errorf("%w: %q", ErrUnknownCall, d.CallID)
		}}); err != nil {
		return nil, err
	}
	return t.run(ctx)
}

func (t *turn) run(ctx workflow.Context) (*TurnResult, error) {
	var prep PrepareResult
	pctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID: "prepare", StartToCloseTimeout: t.to.Persist,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	err := workflow.ExecuteActivity(pctx, activityPrepare, PrepareInput{
		SessionID: t.in.SessionID, TurnID: t.in.TurnID, Model: t.in.Model, Messages: t.in.Messages, Tools: t.in.Tools,
	}).Get(ctx, &prep)
	if err != nil {
		return nil, err
	}
	t.specs, t.info = prep.Tools, prep.Info

	instructions := joinNonEmpty(t.in.Instructions, prep.Instructions)
	// The session's view: its compaction (what the last compressed
	// request sent), then the history after it.
	view := &session.Session{Messages: prep.History, Compaction: prep.Compaction, Base: prep.Base}
	var base []llm.Message
	head := 0
	if instructions != "" {
		base = append(base, llm.SystemText(instructions))
		head = 1
	}
	base = append(base, view.RequestHistory()...)
	base = append(base, prep.Messages...)
	base = append(base, t.in.Messages...)
	defs := make([]llm.ToolDefinition, len(t.specs))
	for i, s := range t.specs {
		defs[i] = s.Definition
	}

	policy := t.policy(ctx)
	// What the policy's strategy remembers belongs to this turn, which
	// starts from the stored view (compact.State), never to the worker.
	fitCtx := compact.WithState(context.Background(), &compact.State{})
	var lastIn, lastSent *llm.Request
	lastSteps := 0 // the transcript's length before the last request
	// The tool loop's rules are the in-process loop's (middleware): the
	// same step limit, and at the limit, or after an answer cut off by the
	// output limit, the calls are answered without running and the turn
	// ends (and is stored) with that finish reason.
	maxSteps := t.in.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 20 // frozen: version 1's default, whatever middleware's becomes
	}
	res := &TurnResult{TurnID: t.in.TurnID}
	for step := 1; ; step++ {
		msgs := make([]llm.Message, 0, len(base)+len(res.Transcript))
		msgs = append(append(msgs, base...), res.Transcript...)
		req := &llm.Request{Messages: msgs, Tools: defs, MaxTokens: t.in.MaxTokens}
		// The budget policy is deterministic code: counting and the
		// compression strategies run here; only summaries are activities.
		// workflowcheck reports it for reflect.DeepEqual over maps (a
		// bool, whatever the iteration order) and for logging into a
		// discarding handler: false positives, reviewed.
		fitted, err := policy.Fit(fitCtx, req, t.info) //workflowcheck:ignore
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agcore.Budget", err)
		}
		lastIn, lastSent, lastSteps = req, fitted, len(res.Transcript)
		resp, err := t.callModel(ctx, step, fitted)
		if err != nil {
			return nil, err
		}
		res.Steps = step
		res.Usage.Add(resp.Usage)
		res.Transcript = append(res.Transcript, resp.Message)
		res.Text, res.FinishReason = resp.Message.Text(), resp.FinishReason
		uses := resp.Message.ToolUses()
		if len(uses) == 0 {
			break
		}
		if end, why, stop := middleware.StopBeforeTools(step, maxSteps, resp.FinishReason); stop {
			res.FinishReason = end
			res.Transcript = append(res.Transcript, middleware.NotRun(uses, why)...)
			break
		}
		results, err := t.runTools(ctx, step, uses)
		if err != nil {
			return nil, err
		}
		res.Transcript = append(res.Transcript, results...)
	}
	if t.in.SessionID == "" {
		return res, nil
	}
	turnMsgs := append(append([]llm.Message(nil), t.in.Messages...), res.Transcript...)
	sctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID: "persist-" + t.in.TurnID, StartToCloseTimeout: t.to.Persist,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 10},
	})
	err = workflow.ExecuteActivity(sctx, activityPersist, PersistInput{SessionID: t.in.SessionID, Turn: session.Turn{
		ID: t.in.TurnID, Messages: turnMsgs, Usage: res.Usage, State: prep.State, Time: workflow.Now(ctx).UTC(),
		// What the last request sent, when it was compressed: the next
		// turn continues from it, on any worker.
		Compaction: nextCompaction(view, lastIn, lastSent, head, prep.Messages,
			append(append([]llm.Message(nil), t.in.Messages...), res.Transcript[:lastSteps]...)),
	}}).Get(ctx, nil)
	if err != nil {
		return nil, err
	}
	res.Stored = true
	return res, nil
}

// nextCompaction returns the compaction a turn leaves (see
// session.Session.NextCompaction): nil when its last request went out as
// it was, or when what was sent cannot be expressed as a view of the
// history (a compression changed the instructions or the providers'
// messages). head is the number of leading instruction messages,
// provided the providers' messages, turn the turn's messages before the
// last request.
func nextCompaction(view *session.Session, in, sent *llm.Request, head int, provided, turn []llm.Message) *session.Compaction {
	if in == nil || sent == nil || in == sent {
		return nil
	}
	msgs := sent.Messages
	if head > 0 {
		if len(msgs) < head || !msgs[0].Equal(in.Messages[0]) {
			return nil
		}
		msgs = msgs[head:]
	}
	if n := len(provided); n > 0 {
		at := -1
		for i := len(msgs) - n; i >= 0 && at < 0; i-- {
			same := true
			for j := range n {
				if !msgs[i+j].Equal(provided[j]) {
					same = false
					break
				}
			}
			if same {
				at = i
			}
		}
		if at < 0 {
			return nil
		}
		msgs = append(msgs[:at:at], msgs[at+n:]...)
	}
	return view.NextCompaction(msgs, turn)
}

// policy is the turn's budget policy: the default pipeline (old tool
// results cleared, summaries when asked, oldest turns dropped), all of it
// deterministic but the summaries, which the summarizer runs as
// activities.
func (t *turn) policy(ctx workflow.Context) *compact.Policy {
	var summarizer llm.Model
	if t.in.Summarize {
		summarizer = &summarizerModel{ctx: ctx, t: t}
	}
	return &compact.Policy{
		Strategy: compact.NewIncremental(compact.DefaultPipeline(summarizer)),
		Budget:   t.in.Budget,
		Logger:   slog.New(slog.DiscardHandler),
	}
}

func (t *turn) callModel(ctx workflow.Context, step int, req *llm.Request) (*llm.Response, error) {
	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("model-%d", step),
		StartToCloseTimeout: t.to.Model,
		HeartbeatTimeout:    t.to.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts: t.to.ModelAttempts,
		},
	})
	var resp llm.Response
	err := workflow.ExecuteActivity(mctx, activityModel, ModelInput{
		Model: t.in.Model, Request: req, Stream: t.streamKey, Step: step,
	}).Get(ctx, &resp)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// runTools answers one batch of tool calls, in call order: calls that
// need approval wait for their decisions (all of the batch's at once),
// then every call allowed to run starts as its own activity, and the
// results are collected in the order of the calls.
func (t *turn) runTools(ctx workflow.Context, step int, uses []llm.ToolUse) ([]llm.Message, error) {
	results := make([]llm.Message, len(uses))
	needs := make([]bool, len(uses))
	now := workflow.Now(ctx).UTC()
	t.pending = t.pending[:0]
	for i, u := range uses {
		spec, ok := t.spec(u.Name)
		if ok && spec.NeedsApproval {
			needs[i] = true
			delete(t.decisions, u.ID) // a call id an earlier step used is decided anew
			t.pending = append(t.pending, PendingApproval{CallID: u.ID, Tool: u.Name, Input: string(u.Input), Since: now})
		}
	}
	if len(t.pending) > 0 {
		decided := func() bool {
			for _, p := range t.pending {
				if _, ok := t.decisions[p.CallID]; !ok {
					return false
				}
			}
			return true
		}
		if t.in.ApprovalTimeout > 0 {
			if _, err := workflow.AwaitWithTimeout(ctx, t.in.ApprovalTimeout, decided); err != nil {
				return nil, err
			}
		} else if err := workflow.Await(ctx, decided); err != nil {
			return nil, err
		}
		for _, p := range t.pending {
			if _, ok := t.decisions[p.CallID]; !ok {
				t.decisions[p.CallID] = Decision{CallID: p.CallID, Reason: fmt.Sprintf("no decision within %s", t.in.ApprovalTimeout)}
			}
		}
		t.pending = t.pending[:0]
	}
	futures := make([]workflow.Future, len(uses))
	for i, u := range uses {
		if _, ok := t.spec(u.Name); !ok {
			results[i] = llm.ToolResultText(u.ID, fmt.Sprintf("tool %q not found", u.Name), true)
			continue
		}
		if needs[i] {
			if err := t.decisions[u.ID].Tool().Denial(u.Name); err != nil {
				results[i] = llm.ToolResultText(u.ID, err.Error(), true)
				continue
			}
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			ActivityID:          fmt.Sprintf("tool-%d-%s", step, u.ID),
			StartToCloseTimeout: t.to.Tool,
			HeartbeatTimeout:    t.to.Heartbeat,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval: time.Second, MaximumAttempts: t.to.ToolAttempts,
				NonRetryableErrorTypes: []string{ErrTypeFatalTool},
			},
		})
		futures[i] = workflow.ExecuteActivity(actx, activityTool, ToolInput{CallID: u.ID, Name: u.Name, Input: u.Input})
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		var out ToolOutput
		if err := f.Get(ctx, &out); err != nil {
			var ae *temporal.ApplicationError
			if errors.As(err, &ae) && ae.Type() == ErrTypeFatalTool {
				return nil, err
			}
			results[i] = llm.ToolResultText(uses[i].ID, "tool call failed: "+err.Error(), true)
			continue
		}
		results[i] = llm.ToolResultText(uses[i].ID, out.Text, out.IsError)
	}
	return results, nil
}

func (t *turn) spec(name string) (ToolSpec, bool) {
	for _, s := range t.specs {
		if s.Definition.Name == name {
			return s, true
		}
	}
	return ToolSpec{}, false
}

func joinNonEmpty(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

// summarizerModel is the summarizer the budget policy calls inside the
// workflow: each call is a summarization activity.
type summarizerModel struct {
	ctx workflow.Context
	t   *turn
}

func (m *summarizerModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	m.t.summaries++
	actx := workflow.WithActivityOptions(m.ctx, workflow.ActivityOptions{
		ActivityID: fmt.Sprintf("summarize-%d", m.t.summaries), StartToCloseTimeout: m.t.to.Model,
		HeartbeatTimeout: m.t.to.Heartbeat,
		RetryPolicy:      &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: m.t.to.ModelAttempts},
	})
	var resp llm.Response
	if err := workflow.ExecuteActivity(actx, activitySummarize, ModelInput{Model: m.t.in.Model, Request: req}).Get(m.ctx, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (m *summarizerModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.StreamOf(resp)
}

func (m *summarizerModel) Info() llm.ModelInfo { return m.t.info }
