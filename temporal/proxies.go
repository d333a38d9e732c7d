package agtemporal

// The agent's effects as activities: the values TurnWorkflow gives
// agent.New in place of the adapter, the tools, the store, the context
// providers and the worker's hooks. Each method starts an activity with
// the workflow context its caller's context carries (bind.go) and returns
// what the activity returned, as the in-process value would.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/structured"
	"github.com/agcore/agcore/tool"
)

// actModel is a model whose every call is a Model activity (model-N): the
// worker streams it, heartbeats and publishes the deltas (loop: the tool
// loop's calls; summaries publish nothing).
type actModel struct {
	d               *driver
	provider, model string
	info            llm.ModelInfo
	loop            bool
}

func (m *actModel) Info() llm.ModelInfo { return m.info }

func (m *actModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	d := m.d
	w := wf(ctx)
	d.calls++
	in := ModelInput{Provider: m.provider, Model: m.model, Request: req, Step: d.calls}
	if m.loop {
		d.steps++
		in.Stream = d.streamKey
	}
	actx := workflow.WithActivityOptions(w, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("model-%d", d.calls),
		StartToCloseTimeout: d.to.Model,
		HeartbeatTimeout:    d.to.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts: d.to.ModelAttempts,
		},
	})
	name := activityModel
	if !m.loop {
		name = activitySummarize // a blocking call, nothing published
	}
	var resp llm.Response
	if err := workflow.ExecuteActivity(actx, name, in).Get(w, &resp); err != nil {
		return nil, modelErr(err)
	}
	return &resp, nil
}

func (m *actModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.StreamOf(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// modelErr turns a failed Model activity back into the *llm.Error the
// adapter returned (its kind is in the application error's type), so that
// the agent decides on it as in-process; a cancellation or a timeout of
// the activity stays Temporal's.
func modelErr(err error) error {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return err
	}
	if ae.Type() != ErrTypeRateLimited && !strings.HasPrefix(ae.Type(), ErrTypeModel+".") {
		return err
	}
	var d modelDetails
	if ae.Details(&d) != nil {
		return &llm.Error{Kind: kindNamed(strings.TrimPrefix(ae.Type(), ErrTypeModel+".")), Message: ae.Message(), Err: err}
	}
	return &llm.Error{Kind: kindNamed(d.Kind), Provider: d.Provider, StatusCode: d.StatusCode, Code: d.Code, Message: d.Message}
}

func kindNamed(name string) llm.ErrorKind {
	for k := llm.KindUnknown; k <= llm.KindMalformed; k++ {
		if k.String() == name {
			return k
		}
	}
	return llm.KindUnknown
}

// actTool is one of the worker's tools, each call a Tool activity
// (tool-N-CALLID).
type actTool struct {
	d    *driver
	spec ToolSpec
}

func (t *actTool) Name() string                { return t.spec.Definition.Name }
func (t *actTool) Description() string         { return t.spec.Definition.Description }
func (t *actTool) Parameters() json.RawMessage { return t.spec.Definition.Parameters }
func (t *actTool) NeedsApproval() bool         { return t.spec.NeedsApproval }

func (t *actTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	d := t.d
	w := wf(ctx)
	callID, _ := ctx.Value(callIDKey{}).(string)
	d.effects++
	actx := workflow.WithActivityOptions(w, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("tool-%d-%s", d.effects, callID),
		StartToCloseTimeout: d.to.Tool,
		HeartbeatTimeout:    d.to.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, MaximumAttempts: d.to.ToolAttempts,
			NonRetryableErrorTypes: []string{ErrTypeFatalTool},
		},
	})
	var out ToolOutput
	err := workflow.ExecuteActivity(actx, activityTool, ToolInput{CallID: callID, Name: t.Name(), Input: args}).Get(w, &out)
	if err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == ErrTypeFatalTool {
			return "", fmt.Errorf("%w: %s", tool.ErrFatal, ae.Message())
		}
		return "", fmt.Errorf("tool call failed: %w", err)
	}
	if out.IsError {
		return "", errors.New(out.Text)
	}
	return out.Text, nil
}

// callIDKey carries a tool call's id to actTool (the activity id names it).
type callIDKey struct{}

// callIDs is the tool middleware that tells actTool its call's id.
func callIDs(next tool.Handler) tool.Handler {
	return func(ctx context.Context, call tool.Call) (string, error) {
		return next(context.WithValue(ctx, callIDKey{}, call.ID), call)
	}
}

// actStore is the session store of a durable turn: a load and an append
// are activities on the worker's store (scoped to TurnInput.Principal).
type actStore struct{ d *driver }

var errNotInTurn = errors.New("agtemporal: not available inside a durable turn")

func (s *actStore) Create(context.Context, string) (*session.Session, error) {
	return nil, errNotInTurn
}

func (s *actStore) Load(ctx context.Context, id string) (*session.Session, error) {
	return s.LoadView(ctx, id)
}

func (s *actStore) LoadView(ctx context.Context, id string) (*session.Session, error) {
	d := s.d
	w := wf(ctx)
	var sess *session.Session
	err := workflow.ExecuteLocalActivity(d.local(w, 5), activityLoad,
		LoadInput{SessionID: id, Principal: d.in.Principal}).Get(w, &sess)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == errTypeNotFound {
		return nil, fmt.Errorf("%w: %s", session.ErrNotFound, id)
	}
	return sess, err
}

func (s *actStore) Append(ctx context.Context, id string, turn session.Turn) error {
	d := s.d
	w := wf(ctx)
	actx := workflow.WithActivityOptions(w, workflow.ActivityOptions{
		ActivityID: "persist-" + turn.ID, StartToCloseTimeout: d.to.Persist,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{ErrTypeBadInput}},
	})
	return workflow.ExecuteActivity(actx, activityPersist, PersistInput{SessionID: id, Principal: d.in.Principal, Turn: turn}).Get(w, nil)
}

func (s *actStore) List(context.Context, session.ListOptions) (session.Page, error) {
	return session.Page{}, errNotInTurn
}

func (s *actStore) Delete(context.Context, string) error { return errNotInTurn }

// actProvider is one of the worker's context providers: Invoking and
// Invoked are Provide activities.
type actProvider struct {
	d     *driver
	index int
	name  string
}

func (p *actProvider) Name() string { return p.name }

func (p *actProvider) call(ctx context.Context, inv *agent.Invocation, out *OutcomeData) (*ProvideResult, error) {
	w := wf(ctx)
	in := p.input(inv, out)
	var res ProvideResult
	err := workflow.ExecuteLocalActivity(p.d.local(w, 3), activityProvide, in).Get(w, &res)
	return &res, err
}

// input is the Provide activity's input for inv (and, for Invoked, out).
func (p *actProvider) input(inv *agent.Invocation, out *OutcomeData) ProvideInput {
	d := p.d
	in := ProvideInput{Provider: p.index, RunID: inv.RunID, Principal: d.in.Principal, Session: inv.Session,
		Messages: inv.Messages, Outcome: out}
	if inv.Agent != nil {
		in.Agent = inv.Agent.Name()
	}
	if o := inv.Options; o != nil {
		// What of the run's options is data.
		in.Options = agent.RunOptions{SessionID: o.SessionID, Instructions: o.Instructions, Temperature: o.Temperature,
			MaxTokens: o.MaxTokens, ToolChoice: o.ToolChoice, ResponseFormat: o.ResponseFormat, Declared: o.Declared,
			Metadata: o.Metadata, Budget: o.Budget, SessionBudget: o.SessionBudget}
	}
	return in
}

func (p *actProvider) Invoking(ctx context.Context, inv *agent.Invocation) (agent.Injection, error) {
	res, err := p.call(ctx, inv, nil)
	if err != nil {
		return agent.Injection{}, err
	}
	if inv.Session != nil {
		for _, k := range slices.Sorted(maps.Keys(res.State)) { // not map order: the workflow's output must not depend on it
			if v := res.State[k]; v == nil {
				delete(inv.Session.State, k)
			} else {
				if inv.Session.State == nil {
					inv.Session.State = map[string]json.RawMessage{}
				}
				inv.Session.State[k] = v
			}
		}
	}
	inj := agent.Injection{Instructions: res.Instructions, Messages: res.Messages, ReplaceMessages: res.ReplaceMessages,
		Tools: p.tools(*res)}
	// Tools that change while the turn runs are asked for again before
	// each model call after the first (toolsnow.go); turns recorded
	// before this never get here (no result of theirs says Changing).
	if w := wf(ctx); res.Changing && workflow.GetVersion(w, toolsNowVersion, workflow.DefaultVersion, 1) >= 1 {
		inj.ToolsNow = p.toolsNow(w, p.input(inv, nil), inj.Tools)
	}
	return inj, nil
}

func (p *actProvider) Invoked(ctx context.Context, inv *agent.Invocation, out *agent.Outcome) error {
	data := &OutcomeData{Request: out.Request}
	if out.Err != nil {
		data.Err = out.Err.Error()
	} else if out.Response != nil {
		data.Response = &llm.Response{Message: out.Response.Message, Transcript: out.Response.Messages,
			FinishReason: out.Response.FinishReason, Usage: out.Response.Usage, Model: out.Response.Model}
	}
	_, err := p.call(ctx, inv, data)
	return err
}

// allTools are the tools the worker described, for a provider's injected
// tools.
func (d *driver) allTools() []ToolSpec {
	var out []ToolSpec
	for _, a := range d.desc.Agents {
		out = append(out, a.Tools...)
	}
	return out
}

// hooks adds to h, for each of the worker's hooks an agent names, a hook
// at each event it has there whose run is a Hook activity.
func (d *driver) hooks(h *middleware.Hooks, specs []HookSpec) *middleware.Hooks {
	if len(specs) == 0 {
		return h
	}
	if h == nil {
		h = &middleware.Hooks{}
	}
	for _, hs := range specs {
		name := hs.Name
		run := func(ctx context.Context, in HookInput) (*HookOutput, error) {
			w := wf(ctx)
			in.Name = name
			var out HookOutput
			if err := workflow.ExecuteLocalActivity(d.local(w, 3), activityHook, in).Get(w, &out); err != nil {
				return nil, err
			}
			if out.Verdict != "" {
				var info any
				if len(out.Info) > 0 {
					_ = json.Unmarshal(out.Info, &info) //workflowcheck:ignore (decoding is deterministic)
				}
				return &out, middleware.Verdict{Kind: out.Verdict, Reason: out.Reason, Info: info}.Err()
			}
			return &out, nil
		}
		for _, ev := range hs.Events {
			switch ev {
			case "PreRequest":
				h.PreRequest = append(h.PreRequest, middleware.Hook[middleware.PreRequestFunc]{Name: name, Func: func(ctx context.Context, req *llm.Request) error {
					out, err := run(ctx, HookInput{Event: ev, Request: req})
					if err == nil && out.Request != nil {
						*req = *out.Request
					}
					return err
				}})
			case "PostRequest":
				h.PostRequest = append(h.PostRequest, middleware.Hook[middleware.PostRequestFunc]{Name: name, Func: func(ctx context.Context, req *llm.Request, resp *llm.Response) error {
					_, err := run(ctx, HookInput{Event: ev, Request: req, Response: resp})
					return err
				}})
			case "OnError":
				h.OnError = append(h.OnError, middleware.Hook[middleware.ErrorFunc]{Name: name, Func: func(ctx context.Context, req *llm.Request, e error) error {
					_, err := run(ctx, HookInput{Event: ev, Request: req, Err: e.Error()})
					return err
				}})
			case "PreToolUse":
				h.PreToolUse = append(h.PreToolUse, middleware.Hook[middleware.PreToolUseFunc]{Name: name, Func: func(ctx context.Context, call *tool.Call) error {
					c := tool.Call{ID: call.ID, Name: call.Name, Input: call.Input}
					out, err := run(ctx, HookInput{Event: ev, Call: &c})
					if err == nil && out.Input != nil {
						call.Input = out.Input
					}
					return err
				}})
			case "PostToolUse":
				h.PostToolUse = append(h.PostToolUse, middleware.Hook[middleware.PostToolUseFunc]{Name: name, Func: func(ctx context.Context, call tool.Call, result *middleware.ToolResult) error {
					r := &HookToolResult{Text: result.Text}
					if result.Err != nil {
						r.Err = result.Err.Error()
					}
					out, err := run(ctx, HookInput{Event: ev, Call: &tool.Call{ID: call.ID, Name: call.Name, Input: call.Input}, Result: r})
					if err == nil && out.Result != nil {
						result.Text, result.Err = out.Result.Text, nil
						if out.Result.Err != "" {
							result.Err = errors.New(out.Result.Err)
						}
					}
					return err
				}})
			case "InputGuardrail":
				h.InputGuardrails = append(h.InputGuardrails, middleware.Hook[middleware.InputGuardrailFunc]{Name: name, Func: func(ctx context.Context, req *llm.Request) error {
					_, err := run(ctx, HookInput{Event: ev, Request: req})
					return err
				}})
			case "OutputGuardrail":
				h.OutputGuardrails = append(h.OutputGuardrails, middleware.Hook[middleware.OutputGuardrailFunc]{Name: name, Func: func(ctx context.Context, req *llm.Request, resp *llm.Response) error {
					_, err := run(ctx, HookInput{Event: ev, Request: req, Response: resp})
					return err
				}})
			}
		}
	}
	return h
}

// Details of the application errors a failed turn ends with (see
// [TurnError]).
type (
	guardrailDetails struct {
		Guardrail string
		Stage     string
		Tripped   bool
		Reason    string
		Err       string
	}
	blockedDetails    struct{ Event, Hook, What, Reason string }
	structuredDetails struct {
		Kind              int // index in structuredKinds
		Path, Reason, Raw string
	}
	modelDetails struct {
		Kind       string
		Provider   string
		StatusCode int
		Code       string
		Message    string
	}
)

// structuredKinds are structured.Error's kinds, by their index in
// structuredDetails.
var structuredKinds = []error{structured.ErrParse, structured.ErrSchema, structured.ErrRefusal, structured.ErrTruncated, structured.ErrNoAnswer}

// failure is the error a turn whose run failed ends with: a non-retryable
// application error whose type and details let [TurnError] rebuild the
// error the in-process run returned.
func failure(err error) error {
	var (
		ge *middleware.GuardrailError
		be *middleware.BlockedError
		ex *budget.ExceededError
		le *llm.Error
		te *temporal.ApplicationError
		se *structured.Error
	)
	switch {
	case errors.As(err, &ge):
		d := guardrailDetails{Guardrail: ge.Guardrail, Stage: string(ge.Stage), Tripped: ge.Tripped, Reason: ge.Reason}
		if ge.Err != nil {
			d.Err = ge.Err.Error()
		}
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeGuardrail, nil, d)
	case errors.As(err, &be):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBlocked, nil, blockedDetails{be.Event, be.Hook, be.What, be.Reason})
	case errors.As(err, &ex):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBudget, nil, *ex)
	case errors.As(err, &se):
		d := structuredDetails{Path: se.Path, Reason: se.Reason, Raw: se.Raw}
		for i, k := range structuredKinds {
			if se.Kind == k {
				d.Kind = i
			}
		}
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeStructured, nil, d)
	case errors.As(err, &le):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeModel+"."+le.Kind.String(), nil,
			modelDetails{Kind: le.Kind.String(), Provider: le.Provider, StatusCode: le.StatusCode, Code: le.Code, Message: le.Message})
	case errors.As(err, &te):
		return err
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "agcore.RunFailed", nil)
}

// TurnError returns the error an in-process run would have returned for a
// durable turn that failed with err (what client.WorkflowRun.Get returns):
// a *middleware.GuardrailError, *middleware.BlockedError,
// *budget.ExceededError or *llm.Error with the fields the workflow kept,
// so that errors.Is and errors.As work as they do in-process; any other
// error unchanged.
func TurnError(err error) error {
	var ae *temporal.ApplicationError
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	switch t := ae.Type(); {
	case t == ErrTypeGuardrail:
		var d guardrailDetails
		if ae.Details(&d) == nil {
			ge := &middleware.GuardrailError{Guardrail: d.Guardrail, Stage: middleware.GuardrailStage(d.Stage), Tripped: d.Tripped, Reason: d.Reason}
			if d.Err != "" {
				ge.Err = errors.New(d.Err)
			}
			return ge
		}
	case t == ErrTypeBlocked:
		var d blockedDetails
		if ae.Details(&d) == nil {
			return &middleware.BlockedError{Event: d.Event, Hook: d.Hook, What: d.What, Reason: d.Reason}
		}
	case t == ErrTypeBudget:
		var d budget.ExceededError
		if ae.Details(&d) == nil {
			return &d
		}
	case t == ErrTypeStructured:
		var d structuredDetails
		if ae.Details(&d) == nil && d.Kind >= 0 && d.Kind < len(structuredKinds) {
			return &structured.Error{Kind: structuredKinds[d.Kind], Path: d.Path, Reason: d.Reason, Raw: d.Raw}
		}
	case strings.HasPrefix(t, ErrTypeModel+"."):
		var d modelDetails
		if ae.Details(&d) == nil {
			return &llm.Error{Kind: kindNamed(d.Kind), Provider: d.Provider, StatusCode: d.StatusCode, Code: d.Code, Message: d.Message}
		}
		return &llm.Error{Kind: kindNamed(strings.TrimPrefix(t, ErrTypeModel+".")), Message: ae.Message()}
	}
	return err
}
