package agtemporal

// The activities of TurnWorkflow beyond the model and tool calls: what the
// agent's seams do that touches the world (the store, the context
// providers, the worker's hooks), each run by a worker.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"go.temporal.io/sdk/temporal"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// DescribeInput asks a worker what it knows of the turn's agents.
type DescribeInput struct {
	Agents []agent.Spec
}

// DescribeResult is, per agent (in DescribeInput's order), its model's
// limits and prices and its tools; and the worker's context providers and
// the hooks the agents name.
type DescribeResult struct {
	Agents    []AgentDescription
	Providers []string // the context providers' names, in order
}

// AgentDescription is what a worker resolved of one agent.Spec.
type AgentDescription struct {
	Info  llm.ModelInfo
	Tools []ToolSpec
	// Hooks are the events at which each named hook runs.
	Hooks []HookSpec
}

// HookSpec names one of the worker's hooks and the events it is
// registered at ("PreRequest", "PostRequest", "OnError", "PreToolUse",
// "PostToolUse", "InputGuardrail", "OutputGuardrail").
type HookSpec struct {
	Name   string
	Events []string
}

// LoadInput loads a session (its compaction view) for a run.
type LoadInput struct {
	SessionID string
	Principal string
}

// ProvideInput runs one context provider's Invoking (or, with Outcome,
// its Invoked).
type ProvideInput struct {
	Provider  int // index in Options.Providers
	Agent     string
	RunID     string
	Principal string
	Session   *session.Session
	Messages  []llm.Message
	Options   agent.RunOptions
	// Outcome is the run's end, for Invoked.
	Outcome *OutcomeData
	// Now asks for the provider's tools as they are now (the ToolsNow of
	// the Injection its Invoking returned for this run), before a model
	// call of the turn after its first.
	Now bool `json:",omitempty"`
}

// OutcomeData is an agent.Outcome as data.
type OutcomeData struct {
	Request  *llm.Request
	Response *llm.Response
	Err      string
}

// ProvideResult is what a provider's Invoking returned, and the changes
// it made to the session's state (a nil value deletes the key).
type ProvideResult struct {
	Instructions    string
	Messages        []llm.Message
	ReplaceMessages bool
	Tools           []string // the tools it offered that the worker has
	State           map[string]json.RawMessage
	// Specs describe Tools, in their order (nil in histories recorded
	// before they were added: the workflow then finds Tools among the
	// turn's agents' tools).
	Specs []ToolSpec `json:",omitempty"`
	// Changing reports that the provider's tools may change while the
	// turn runs (its Injection had ToolsNow): the workflow asks for them
	// again (ProvideInput.Now) before each model call after the first.
	Changing bool `json:",omitempty"`
}

// HookInput runs one of the worker's hooks at one event.
type HookInput struct {
	Name, Event string
	Request     *llm.Request
	Response    *llm.Response
	Call        *tool.Call
	Result      *HookToolResult
	Err         string
}

// HookToolResult is a middleware.ToolResult as data.
type HookToolResult struct {
	Text string
	Err  string
}

// HookOutput is a hook's verdict ("" when it let things go on, "block",
// "deny", "tripwire") and what it changed.
type HookOutput struct {
	Verdict string
	Reason  string
	Info    json.RawMessage
	Request *llm.Request
	Input   json.RawMessage
	Result  *HookToolResult
}

// Describe resolves the turn's agents on this worker: each one's model
// (its limits and prices, with the spec's context window) and tools.
func (a *activities) Describe(ctx context.Context, in DescribeInput) (*DescribeResult, error) {
	out := &DescribeResult{}
	for _, p := range a.opts.Providers {
		out.Providers = append(out.Providers, providerLabel(p))
	}
	for _, s := range in.Agents {
		m, err := a.resolve(s.Provider, s.Model)
		if err != nil {
			return nil, err
		}
		info := m.Info()
		if s.Model != "" {
			if c, ok := catalog.Default().LookupFor(s.Provider, s.Model); ok && info.ContextWindow == 0 {
				info = c
			}
			info.Name = s.Model
		}
		if s.ContextWindow > 0 {
			info.ContextWindow = s.ContextWindow
		}
		d := AgentDescription{Info: info}
		tools, err := a.tools(s.Tools)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			d.Tools = append(d.Tools, ToolSpec{Definition: tool.Definition(t), NeedsApproval: tool.NeedsApproval(t)})
		}
		for _, name := range s.Hooks {
			events := hookEvents(a.opts.Hooks, name)
			if len(events) == 0 {
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("agent %s: no hook %q on this worker", s.Name, name), ErrTypeBadInput, nil)
			}
			d.Hooks = append(d.Hooks, HookSpec{Name: name, Events: events})
		}
		out.Agents = append(out.Agents, d)
	}
	return out, nil
}

// tools returns the worker's tools by name (nil: all of them).
func (a *activities) tools(names []string) ([]tool.Tool, error) {
	have := a.toolsNow()
	if names == nil {
		return have, nil
	}
	out := make([]tool.Tool, 0, len(names))
	for _, name := range names {
		t, ok := tool.Find(have, name)
		if !ok {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no tool %q on this worker", name), "agcore.UnknownTool", nil)
		}
		out = append(out, t)
	}
	return out, nil
}

// store is the worker's store, scoped to principal when one is given.
func (a *activities) store(principal string) (session.Store, error) {
	if a.opts.Store == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no session store", "agcore.NoStore", nil)
	}
	if principal != "" {
		return session.Scoped(a.opts.Store, principal), nil
	}
	return a.opts.Store, nil
}

// Load loads a session's view (session.Store.LoadView); a missing session
// is an empty one.
func (a *activities) Load(ctx context.Context, in LoadInput) (*session.Session, error) {
	st, err := a.store(in.Principal)
	if err != nil {
		return nil, err
	}
	sess, err := st.LoadView(ctx, in.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeNotFound, nil)
	}
	if errors.Is(err, session.ErrOwner) || errors.Is(err, session.ErrInvalidID) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	return sess, err
}

const errTypeNotFound = "agcore.NotFound"

// Provide runs one context provider's Invoking, or its Invoked when the
// input carries the outcome.
func (a *activities) Provide(ctx context.Context, in ProvideInput) (*ProvideResult, error) {
	if in.Provider < 0 || in.Provider >= len(a.opts.Providers) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no context provider %d on this worker", in.Provider), ErrTypeBadInput, nil)
	}
	p := a.opts.Providers[in.Provider]
	sess := in.Session
	if sess == nil {
		sess = &session.Session{}
	}
	before := maps.Clone(sess.State)
	opts := in.Options
	inv := &agent.Invocation{RunID: in.RunID, Session: sess, Messages: in.Messages, Options: &opts}
	if in.Outcome != nil {
		out := &agent.Outcome{Request: in.Outcome.Request, Response: nil}
		if in.Outcome.Err != "" {
			out.Err = errors.New(in.Outcome.Err)
		} else if in.Outcome.Response != nil {
			out.Response = &agent.Response{RunID: in.RunID, Agent: in.Agent, SessionID: sess.ID, Message: in.Outcome.Response.Message,
				Messages: in.Outcome.Response.Transcript, FinishReason: in.Outcome.Response.FinishReason, Usage: in.Outcome.Response.Usage}
		}
		a.now.drop(nowKey(ctx, in))
		return &ProvideResult{}, p.Invoked(ctx, inv, out)
	}
	if in.Now {
		return a.provideNow(ctx, p, in, inv)
	}
	inj, err := p.Invoking(ctx, inv)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agcore.ProviderFailed", nil)
	}
	res := &ProvideResult{Instructions: inj.Instructions, Messages: inj.Messages, ReplaceMessages: inj.ReplaceMessages}
	res.Tools, res.Specs = a.runnable(inj.Tools)
	if inj.ToolsNow != nil {
		res.Changing = true
		a.now.keep(nowKey(ctx, in), inj.ToolsNow)
	}
	for k, v := range sess.State {
		if old, ok := before[k]; !ok || !bytes.Equal(old, v) {
			if res.State == nil {
				res.State = map[string]json.RawMessage{}
			}
			res.State[k] = v
		}
	}
	for k := range before {
		if _, ok := sess.State[k]; !ok {
			if res.State == nil {
				res.State = map[string]json.RawMessage{}
			}
			res.State[k] = nil
		}
	}
	return res, nil
}

// providerLabel names a context provider (its Name method, else its type).
func providerLabel(p agent.ContextProvider) string {
	if n, ok := p.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", p)
}

// hookEvents returns the events at which h has a hook called name.
func hookEvents(h *middleware.Hooks, name string) []string {
	if h == nil {
		return nil
	}
	var ev []string
	has := func(event string, found bool) {
		if found {
			ev = append(ev, event)
		}
	}
	has("PreRequest", findHook(h.PreRequest, name) != nil)
	has("PostRequest", findHook(h.PostRequest, name) != nil)
	has("OnError", findHook(h.OnError, name) != nil)
	has("PreToolUse", findHook(h.PreToolUse, name) != nil)
	has("PostToolUse", findHook(h.PostToolUse, name) != nil)
	has("InputGuardrail", findHook(h.InputGuardrails, name) != nil)
	has("OutputGuardrail", findHook(h.OutputGuardrails, name) != nil)
	return ev
}

func findHook[F any](hooks []middleware.Hook[F], name string) *F {
	for i := range hooks {
		if hooks[i].Name == name {
			return &hooks[i].Func
		}
	}
	return nil
}

// Hook runs one of the worker's hooks at one event and returns its
// verdict and changes. A hook's other errors fail the activity (the
// workflow's hook then fails open, a guardrail closed, as in-process).
func (a *activities) Hook(ctx context.Context, in HookInput) (*HookOutput, error) {
	h := a.opts.Hooks
	missing := temporal.NewNonRetryableApplicationError(fmt.Sprintf("no %s hook %q on this worker", in.Event, in.Name), ErrTypeBadInput, nil)
	out := &HookOutput{}
	var err error
	switch in.Event {
	case "PreRequest":
		f := findHook(h.PreRequest, in.Name)
		if f == nil {
			return nil, missing
		}
		req := *in.Request
		if err = (*f)(ctx, &req); err == nil {
			out.Request = &req
		}
	case "PostRequest":
		f := findHook(h.PostRequest, in.Name)
		if f == nil {
			return nil, missing
		}
		err = (*f)(ctx, in.Request, in.Response)
	case "OnError":
		f := findHook(h.OnError, in.Name)
		if f == nil {
			return nil, missing
		}
		err = (*f)(ctx, in.Request, errors.New(in.Err))
	case "PreToolUse":
		f := findHook(h.PreToolUse, in.Name)
		if f == nil {
			return nil, missing
		}
		call := *in.Call
		if t, ok := tool.Find(a.opts.Tools, call.Name); ok {
			call.Tool = t
		}
		if err = (*f)(ctx, &call); err == nil {
			out.Input = call.Input
		}
	case "PostToolUse":
		f := findHook(h.PostToolUse, in.Name)
		if f == nil {
			return nil, missing
		}
		res := middleware.ToolResult{Text: in.Result.Text}
		if in.Result.Err != "" {
			res.Err = errors.New(in.Result.Err)
		}
		if err = (*f)(ctx, *in.Call, &res); err == nil {
			out.Result = &HookToolResult{Text: res.Text}
			if res.Err != nil {
				out.Result.Err = res.Err.Error()
			}
		}
	case "InputGuardrail":
		f := findHook(h.InputGuardrails, in.Name)
		if f == nil {
			return nil, missing
		}
		err = (*f)(ctx, in.Request)
	case "OutputGuardrail":
		f := findHook(h.OutputGuardrails, in.Name)
		if f == nil {
			return nil, missing
		}
		err = (*f)(ctx, in.Request, in.Response)
	default:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown hook event %q", in.Event), ErrTypeBadInput, nil)
	}
	if err == nil {
		return out, nil
	}
	if v, ok := middleware.VerdictOf(err); ok {
		out.Verdict, out.Reason = v.Kind, v.Reason
		if v.Info != nil {
			out.Info, _ = json.Marshal(v.Info)
		}
		return out, nil
	}
	return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agcore.HookFailed", nil)
}
