package agtemporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/tiktoken"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/structured"
	"github.com/agcore/agcore/tool"
)

// driver is the state of one running TurnWorkflow: what the seams bound to
// the workflow share. Every field is rebuilt identically when the workflow
// replays: it changes only in workflow code, in an order the workflow's
// deterministic scheduler fixes.
type driver struct {
	root      workflow.Context
	in        TurnInput
	to        Timeouts
	ids       *wfIDs
	streamKey string
	desc      *DescribeResult

	calls   int // model calls started (activity ids model-N; summaries included)
	steps   int // the tool loops' model calls (TurnResult.Steps)
	effects int // other activities started (ids load-N, provide-N, hook-N, tool-N-...)
	pending []PendingApproval
	decided map[string]Decision // by call id; read by key only
	// waiting, when not nil, is told of each call that begins waiting
	// for a decision (an AG-UI run's interrupt event: respond.go).
	waiting  func(call tool.Call)
	recorder *replay.Recorder
	record   *bytes.Buffer
}

// TurnWorkflow runs one turn with agcore's own agent: the agents the input
// describes ([agent.Spec]) are built with agent.New inside the workflow,
// and the turn is the agent's run (agent.Agent.Run, or structured.Run for
// a turn with a Schema). Nothing of the tool loop, handoffs, sub-agents,
// budgets, guardrails, hooks, compaction or approvals is written here: the
// agent's seams are bound to the workflow (its clock, coroutines and ids)
// and its effects to activities (model calls, tool calls, the store, the
// context providers, the worker's hooks). See the package documentation.
func TurnWorkflow(ctx workflow.Context, in TurnInput) (*TurnResult, error) {
	if err := validateInput(&in); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	specs := in.specs()
	if err := agent.CheckSpecs(specs); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	d := &driver{root: ctx, in: in, to: in.Timeouts.withDefaults(), ids: &wfIDs{turn: in.TurnID},
		decided: map[string]Decision{}, streamKey: StreamKey(workflow.GetInfo(ctx).WorkflowExecution.ID)}
	if err := d.handlers(ctx); err != nil {
		return nil, err
	}
	if err := workflow.ExecuteLocalActivity(d.local(ctx, 5), activityDescribe,
		DescribeInput{Agents: specs}).Get(ctx, &d.desc); err != nil {
		return nil, err
	}
	if len(d.desc.Agents) != len(specs) {
		return nil, temporal.NewNonRetryableApplicationError("the worker described a different number of agents", ErrTypeBadInput, nil)
	}
	agents, err := d.build(specs) //workflowcheck:ignore (agent.New, the recorder: see below)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	entry := agents[specs[0].Name]
	if in.Agent != "" {
		if entry = agents[in.Agent]; entry == nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no agent %q among the turn's agents", in.Agent), ErrTypeBadInput, nil)
		}
	}

	rctx := bind(context.Background(), ctx)
	opts := &agent.RunOptions{SessionID: in.SessionID, MaxTokens: in.MaxTokens, Temperature: in.Temperature, Instructions: in.RunInstructions}
	if in.Quota != nil {
		if in.Principal == "" && in.QuotaPrincipal == "" {
			return nil, temporal.NewNonRetryableApplicationError("a Quota needs the Principal whose it is", ErrTypeBadInput, nil)
		}
		rctx = budget.WithQuota(rctx, &actQuota{d: d})
	}
	if d.recorder != nil {
		d.recorder.Turn(in.SessionID, in.Messages) //workflowcheck:ignore (writes to a buffer in memory)
	}
	var (
		resp   *agent.Response
		runErr error
		object json.RawMessage
	)
	// The agent's run: its code, with every goroutine, clock and id
	// behind the seams bound above (bind.go) and every effect an
	// activity (proxies.go). workflowcheck cannot see that the seams
	// replace the in-process defaults (tool.GoRunner, the hooks'
	// timers), which it reports on this call; replay tests over
	// committed histories check the determinism instead.
	switch {
	case hasSchema(in.Schema):
		object, resp, runErr = structured.Run[json.RawMessage](rctx, entry, in.Messages, &structured.Options{Run: opts, Schema: in.Schema}) //workflowcheck:ignore
	case in.Response != nil || in.AGUI != nil || in.Web != nil || in.A2A != nil:
		// A background response, an AG-UI run, a chat turn of the web
		// page or an A2A task of agcore serve: the same run, its updates
		// shown as the Responses API's events (respond.go), AG-UI's
		// (agui.go), the page's (web.go) or the task's progress (a2a.go).
		resp, runErr = d.respond(ctx, func(tctx workflow.Context, fn func(agent.Update) bool) (*agent.Response, error) {
			return entry.RunStream(bind(context.Background(), tctx), in.Messages, opts).Each(fn) //workflowcheck:ignore
		}) //workflowcheck:ignore
		if runErr != nil && ctx.Err() != nil {
			return nil, temporal.NewCanceledError("the response was cancelled")
		}
	default:
		resp, runErr = entry.Run(rctx, in.Messages, opts) //workflowcheck:ignore
	}
	res := &TurnResult{TurnID: in.TurnID, Steps: d.steps, Object: object}
	if resp != nil {
		res.Text, res.FinishReason, res.Transcript, res.Usage = resp.Text(), resp.FinishReason, resp.Messages, resp.Usage
		res.Agent, res.CostUSD, res.CostKnown, res.Budget = resp.Agent, resp.CostUSD, resp.CostKnown, resp.Budget
		// The run was inline (Run waits): its post-invocation phase is
		// over and the channel PersistErr reads is closed.
		perr := resp.PersistErr() //workflowcheck:ignore
		if perr != nil {
			return nil, perr
		}
		res.Stored = in.SessionID != ""
	}
	if d.recorder != nil {
		_ = d.recorder.Close() //workflowcheck:ignore (a buffer in memory)
		res.Record = d.record.Bytes()
	}
	if runErr != nil {
		var ex *budget.ExceededError
		if resp != nil && errors.As(runErr, &ex) {
			res.Exceeded = ex
			return res, nil
		}
		return nil, failure(runErr)
	}
	return res, nil
}

// specs returns the turn's agents: its Agents, or the one agent the
// single-agent fields describe.
func (in *TurnInput) specs() []agent.Spec {
	if len(in.Agents) > 0 {
		return in.Agents
	}
	s := agent.Spec{Name: "agcore", Model: in.Model, Instructions: in.Instructions, Tools: in.Tools, MaxSteps: in.MaxSteps}
	if in.Summarize {
		s.Compact = "summarize"
	}
	return []agent.Spec{s}
}

// handlers registers the approval query and update.
func (d *driver) handlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, PendingQuery, func() ([]PendingApproval, error) {
		out := make([]PendingApproval, 0, len(d.pending))
		for _, p := range d.pending {
			if _, done := d.decided[p.CallID]; !done {
				out = append(out, p)
			}
		}
		return out, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, ElicitUpdate, d.elicit); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, DecideUpdate,
		func(_ workflow.Context, dec Decision) error {
			d.decided[dec.CallID] = dec
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: d.validateDecision})
}

// validateDecision is the DecideUpdate's validator: a call the turn waits
// on, not yet decided, and a form's answer that fits its schema (refused
// otherwise, and the request goes on waiting). mcp.CheckDecision is a pure
// check of its input (JSON decoding, schema validation: its verdict does
// not depend on map order), and a validator records nothing in the
// history.
//
//workflowcheck:ignore
func (d *driver) validateDecision(_ workflow.Context, dec Decision) error {
	for _, p := range d.pending {
		if p.CallID == dec.CallID {
			if _, done := d.decided[dec.CallID]; done {
				return fmt.Errorf("%w: %q was already decided", ErrUnknownCall, dec.CallID)
			}
			if err := mcp.CheckDecision(p.Tool, json.RawMessage(p.Input), dec.Tool()); err != nil {
				return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeFormContent, temporal.ApplicationErrorOptions{NonRetryable: true})
			}
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrUnknownCall, dec.CallID)
}

// Approve is the turn's tool.Approver: the call waits in the workflow
// (listed by the PendingQuery) until a Decision arrives by the
// DecideUpdate, or until TurnInput.ApprovalTimeout denies it. Calls of a
// batch wait in parallel, each on its own coroutine.
func (d *driver) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	if d.in.ApproveAll {
		return tool.Decision{Approved: true}, nil
	}
	w := wf(ctx)
	delete(d.decided, call.ID) // a call id an earlier step used is decided anew
	for i, p := range d.pending {
		if p.CallID == call.ID {
			d.pending = append(d.pending[:i:i], d.pending[i+1:]...)
			break
		}
	}
	// A decided call stays listed (the query skips it), so that a second
	// decision for it is rejected as already decided.
	d.pending = append(d.pending, PendingApproval{CallID: call.ID, Tool: call.Name, Input: string(call.Input), Since: workflow.Now(w).UTC()})
	if d.waiting != nil {
		d.waiting(call)
	}
	decided := func() bool { _, ok := d.decided[call.ID]; return ok }
	if d.in.ApprovalTimeout > 0 {
		ok, err := workflow.AwaitWithTimeout(w, d.in.ApprovalTimeout, decided)
		if err != nil {
			return tool.Decision{}, err
		}
		if !ok {
			return tool.Decision{Reason: fmt.Sprintf("no decision within %s", d.in.ApprovalTimeout)}, nil
		}
	} else if err := workflow.Await(w, decided); err != nil {
		return tool.Decision{}, err
	}
	return d.decided[call.ID].Tool(), nil
}

// build makes the turn's agents with agent.New (agent.FromSpecs: agent
// tools first, then the handoffs joined), from their specs and what the
// worker described.
func (d *driver) build(specs []agent.Spec) (map[string]*agent.Agent, error) {
	index := make(map[string]int, len(specs))
	for i, s := range specs {
		index[s.Name] = i
	}
	return agent.FromSpecs(specs, func(s agent.Spec, subs []tool.Tool) (*agent.Agent, error) {
		return d.agent(s, d.desc.Agents[index[s.Name]], subs)
	})
}

// agent builds one agent with its seams bound to the workflow.
func (d *driver) agent(s agent.Spec, desc AgentDescription, subs []tool.Tool) (*agent.Agent, error) {
	info := desc.Info
	model := &actModel{d: d, provider: s.Provider, model: s.Model, info: info, loop: true}
	tools := make([]tool.Tool, 0, len(desc.Tools)+len(subs))
	for _, ts := range desc.Tools {
		tools = append(tools, &actTool{d: d, spec: ts})
	}
	tools = append(tools, subs...)
	providers := make([]agent.ContextProvider, len(d.desc.Providers))
	for i, name := range d.desc.Providers {
		providers[i] = &actProvider{d: d, index: i, name: name}
	}
	counter, _ := tiktoken.For(info.Name) // the counter agcore run uses
	policy := &compact.Policy{Counter: counter}
	if d.in.Budget > 0 && len(d.in.Agents) == 0 {
		policy.Budget = d.in.Budget
	}
	var (
		mw     []middleware.Middleware
		toolMW []tool.Middleware
		err    error
	)
	if d.in.Record {
		if d.recorder == nil {
			h := replay.Header{Provider: s.Provider, Model: info.Name, ContextWindow: info.ContextWindow,
				MaxOutputTokens: info.MaxOutputTokens, Instructions: s.Instructions, Tools: toolNames(tools)}
			if d.in.RecordHeader != nil {
				h = *d.in.RecordHeader
				// The model the worker resolved, when the client left it
				// to the worker.
				if h.Provider == "" && h.Model == "" {
					h.Provider, h.Model = info.Provider, info.Name
					h.ContextWindow, h.MaxOutputTokens = info.ContextWindow, info.MaxOutputTokens
				}
				// The tools the worker offered, when the client left them
				// to the worker.
				if h.Tools == nil && s.Tools == nil {
					h.Tools = toolNames(tools)
					if h.Meta != nil {
						h.Meta["tools"] = strings.Join(h.Tools, ",")
					}
				}
			}
			h.Created = workflow.Now(d.root).UTC().Truncate(time.Second)
			d.record = &bytes.Buffer{}
			if d.recorder, err = replay.NewRecorder(d.record, h); err != nil {
				return nil, err
			}
		}
		mw = append(mw, d.recorder.Middleware())
		toolMW = append(toolMW, d.recorder.ToolMiddleware())
	}
	toolMW = append(toolMW, callIDs)
	cfg, err := s.Apply(agent.Config{
		Tools:      tools,
		Providers:  providers,
		Store:      &actStore{d: d},
		Compaction: policy,
		Retry:      middleware.RetryConfig{MaxAttempts: 1}, // Temporal's retry policy owns retries
		Hooks:      d.hooks(nil, desc.Hooks),
		Approver:   d,
		// The worker cuts results (Options.MaxResultBytes), as it always has.
		MaxResultBytes: -1,
		Runner:         wfRunner{},
		Middleware:     mw,
		ToolMiddleware: toolMW,
		ModelInfo:      &info,
		Logger:         slog.New(slog.DiscardHandler),
		Clock:          wfClock{root: d.root},
		NewID:          d.ids.next,
	}, &actModel{d: d, provider: s.Provider, model: s.Model, info: info})
	if err != nil {
		return nil, err
	}
	if cfg.Hooks != nil {
		cfg.Hooks.Timeout = -1 // each hook on its caller's coroutine; activities bound them
	}
	return agent.New(model, cfg)
}

func toolNames(ts []tool.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

// local are the options of a short effect run as a local activity (the
// worker's description, a session load, a context provider, a hook): it
// runs in the worker that runs the workflow task, recorded in history as a
// marker, with no round trip through the server's task queues.
func (d *driver) local(ctx workflow.Context, attempts int32) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: d.to.Persist,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: attempts,
			NonRetryableErrorTypes: []string{ErrTypeBadInput, errTypeNotFound}},
	})
}

// hasSchema reports whether a turn asks for a typed answer (a JSON null,
// as an empty Schema arrives, does not).
func hasSchema(s json.RawMessage) bool {
	return len(bytes.TrimSpace(s)) > 0 && string(bytes.TrimSpace(s)) != "null"
}
