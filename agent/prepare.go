package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// run is one run's state from pre-invocation to persistence.
type run struct {
	agent *Agent
	id    string
	opts  *RunOptions
	input []llm.Message // the caller's messages, system-role dropped

	sess        *session.Session           // working copy; nil for a run without a session
	stateBefore map[string]json.RawMessage // the state bag as loaded
	unlock      func()                     // releases the session; nil without one
	inv         *Invocation
	req         *llm.Request
	model       llm.Model     // this run's pipeline: the tool loop with the run's tools over the agent's
	meter       *budget.Meter // the run's spending limits; nil when it has none

	// What the run's compaction needs (runs with a session): the
	// request's leading instructions (0 or 1 message), the context
	// providers' messages, and the last model request before and after
	// the budget policy (a run's steps are sequential).
	head     int
	provided []llm.Message
	state    *compact.State
	lastIn   *llm.Request
	lastSent *llm.Request

	// What a handoff needs to build the next agent's request: the context
	// providers' instructions and tools, the run's approver, and the
	// turn's handoffs (nil for an agent without any).
	providerInstructions []string
	providerTools        []tool.Tool
	approver             tool.Approver
	handoff              *handoffState
	current              *Agent // the agent answering: a, or the last one handed the turn
	// spans name the agent answering from each index of the turn's
	// messages (the caller's, then the transcript) on; nil for an agent
	// without handoffs (its own name from the transcript on).
	spans []session.AgentSpan
	// sub links the run to its sub-agents' runs (nil when it has no agent
	// tools); parent is the link of the run this one is a sub-agent of.
	sub    *subLink
	parent *subCall
}

// prepare is the pre-invocation phase: it takes the session, asks the
// providers, assembles the messages, merges the tools and builds the run's
// pipeline. On error nothing is held.
func (a *Agent) prepare(ctx context.Context, msgs []llm.Message, opts *RunOptions) (*run, error) {
	if a.model == nil {
		return nil, ErrNoModel
	}
	r := &run{agent: a, id: a.newID(), opts: opts, input: dropSystem(msgs)}
	r.current = a
	if err := r.openSession(ctx); err != nil {
		return nil, err
	}

	var (
		instructions  []string
		providerMsgs  []llm.Message
		providerTools []tool.Tool
		toolSources   []Injection // each provider's, for ToolsNow
		changing      bool        // a provider's tools may change during the turn
	)
	if opts.Instructions != "" {
		instructions = append(instructions, opts.Instructions)
	} else if a.cfg.Instructions != "" {
		instructions = append(instructions, a.cfg.Instructions)
	}
	own := len(instructions)
	if r.sess != nil {
		r.inv = &Invocation{Agent: a, RunID: r.id, Session: r.sess, Messages: r.input, Options: opts}
		for _, p := range a.cfg.Providers {
			inj, err := p.Invoking(ctx, r.inv)
			if err != nil {
				a.report(ctx, "agent: context provider failed; skipped", &ProviderError{Provider: providerName(p), Phase: "invoking", RunID: r.id, Err: err}, slog.String("run_id", r.id))
				continue
			}
			if inj.Instructions != "" {
				instructions = append(instructions, inj.Instructions)
			}
			if inj.ReplaceMessages {
				providerMsgs = append(providerMsgs[:0:0], inj.Messages...)
			} else {
				providerMsgs = append(providerMsgs, inj.Messages...)
			}
			providerTools = append(providerTools, inj.Tools...)
			toolSources = append(toolSources, inj)
			changing = changing || inj.ToolsNow != nil
		}
	}

	var history []llm.Message
	if r.sess != nil {
		// The session's view: its compaction's messages (what the last
		// compressed request sent), then the history after it. The agent
		// never stores a system message, but a caller's in-memory session
		// may hold one: there is one system message.
		history = r.sess.RequestHistory()
	}
	providerMsgs = dropSystem(providerMsgs)
	full := make([]llm.Message, 0, 1+len(history)+len(providerMsgs)+len(r.input))
	if len(instructions) > 0 {
		full = append(full, llm.SystemText(strings.Join(instructions, "\n\n")))
		r.head = 1
	}
	r.provided = providerMsgs
	full = append(full, history...)
	full = append(full, providerMsgs...)
	full = append(full, r.input...)

	r.providerInstructions, r.providerTools = instructions[own:], providerTools
	r.approver = a.cfg.Approver
	r.parent = linkOf(ctx)
	r.markParent()
	if r.approver == nil && r.parent != nil {
		r.approver = r.parent.link.run.approver // a sub-agent asks its caller's approver
	}
	if len(a.handoffs) > 0 {
		r.handoff = &handoffState{max: a.cfg.MaxHandoffs}
		if r.handoff.max <= 0 {
			r.handoff.max = DefaultMaxHandoffs
		}
	}
	transfers := a.transferTools(r.handoff)
	tools := tool.Merge(a.cfg.Tools, opts.Tools, providerTools, transfers)
	var refresh func() []tool.Tool
	if changing {
		refresh = func() []tool.Tool {
			var now []tool.Tool
			for _, inj := range toolSources {
				if inj.ToolsNow != nil {
					now = append(now, inj.ToolsNow()...)
				} else {
					now = append(now, inj.Tools...)
				}
			}
			return tool.Merge(a.cfg.Tools, opts.Tools, now, transfers)
		}
	}
	if len(a.handoffs) > 0 {
		r.spans = []session.AgentSpan{{From: len(r.input), Agent: a.cfg.Name}}
	}
	if hasAgentTool(tools) || len(a.handoffs) > 0 {
		// (an agent handed the turn may have agent tools)
		r.sub = &subLink{run: r}
	}
	r.req = &llm.Request{
		Messages:       full,
		Tools:          definitions(tools, opts.Declared),
		ToolChoice:     opts.ToolChoice,
		MaxTokens:      opts.MaxTokens,
		Temperature:    opts.Temperature,
		ResponseFormat: opts.ResponseFormat,
		Metadata:       opts.Metadata,
	}
	// The budget policy runs inside the tool loop, on every step; the
	// session records the prefix hashes of the first request as sent, after
	// compression.
	var next llm.Model = a.model
	if r.meter = r.newMeter(ctx); r.meter != nil {
		// Inside the budget policy: what is checked is what is sent.
		next = r.meter.Middleware()(next)
	}
	if r.sess != nil {
		next = compact.Guard(a.policy)(&recorder{Model: next, run: r})
		next = &stepRecorder{Model: next, run: r}
		r.state = &compact.State{}
	} else {
		next = compact.Guard(a.policy)(next)
	}
	// The input guardrails gate the turn's first model call, right under
	// the tool loop: its answer (and so its tool calls) reaches the loop
	// only once they passed.
	next = a.cfg.Hooks.InputGate()(next)
	r.model = a.loop(next, tools, r.approver, r.handoff, refresh)
	return r, nil
}

// newMeter returns the run's meter: its limits, its session's (with what
// the session's stored turns spent), the principal's quota, and the meter
// of a run this one runs inside (an agent called as a tool); nil when
// none of them limits anything.
func (r *run) newMeter(ctx context.Context) *budget.Meter {
	a, opts := r.agent, r.opts
	m := &budget.Meter{Run: a.cfg.Budget, Policy: a.policy, Parent: budget.FromContext(ctx)}
	if m.Parent == nil {
		// The principal's quota arrives one way, in the run's context
		// (budget.WithQuota: a server's, per request); a nested run's
		// calls reach it through the outer run's meter.
		m.Quota = budget.QuotaFrom(ctx)
	}
	if opts.Budget != nil {
		m.Run = *opts.Budget
	}
	if r.sess != nil {
		m.Session = a.cfg.SessionBudget
		if opts.SessionBudget != nil {
			m.Session = *opts.SessionBudget
		}
		m.SessionSpent = budget.Spend{Usage: r.sess.Usage, CostUSD: r.sess.CostUSD}
	}
	if !m.Active() {
		return nil
	}
	return m
}

// definitions returns the wire descriptions of tools followed by the
// declared-only ones whose names are free.
func definitions(tools []tool.Tool, declared []llm.ToolDefinition) []llm.ToolDefinition {
	defs := tool.Definitions(tools)
	for _, d := range declared {
		if _, taken := tool.Find(tools, d.Name); !taken && !slices.ContainsFunc(defs[len(tools):], func(e llm.ToolDefinition) bool { return e.Name == d.Name }) {
			defs = append(defs, d)
		}
	}
	return defs
}

// recorder records the prefix hashes of a run's first model request in the
// run's session (prefix-cache tracking): below the budget policy, so what
// is recorded is what is sent.
type recorder struct {
	llm.Model
	run  *run
	done bool // the first request was recorded (a run's steps are sequential)
}

func (rc *recorder) touch(ctx context.Context, req *llm.Request) {
	rc.run.lastSent = req
	if rc.done {
		return
	}
	rc.done = true
	r := rc.run
	if err := r.sess.TouchRequest(req.Messages); err != nil {
		r.agent.logger().LogAttrs(ctx, slog.LevelWarn, "agent: request hashes not recorded",
			slog.String("agent", r.agent.cfg.Name), slog.String("run_id", r.id), slog.Any("error", err))
	}
}

func (rc *recorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(rc.wrap(ctx, req, llm.Next{Model: rc.Model, Blocking: true}))
}

func (rc *recorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return rc.wrap(ctx, req, llm.Next{Model: rc.Model})
}

// wrap records req, when the call is made, and passes it on.
func (rc *recorder) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	rc.touch(ctx, req)
	return next.Stream(ctx, req)
}

// stepRecorder keeps the last request of a run's tool loop as it enters
// the budget policy (what recorder keeps is what left it), when the call
// is made.
type stepRecorder struct {
	llm.Model
	run *run
}

func (sr *stepRecorder) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(sr.wrap(ctx, req, llm.Next{Model: sr.Model, Blocking: true}))
}

func (sr *stepRecorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return sr.wrap(ctx, req, llm.Next{Model: sr.Model})
}

func (sr *stepRecorder) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	sr.run.lastIn = req
	return next.Stream(ctx, req)
}

// compaction returns the compaction the run leaves (see
// session.Session.NextCompaction), built from its last model request as
// it entered and left the budget policy; nil when that request was sent
// as it was, or when it cannot be expressed as a view of the history
// (a compression changed the instructions or a context provider's
// messages, or the loop's transcript is not what the turn stores).
func (r *run) compaction(transcript []llm.Message) *session.Compaction {
	in, sent := r.lastIn, r.lastSent
	if len(r.spans) > 1 {
		return nil // handed over: the last request was another agent's
	}
	if in == nil || sent == nil || in == sent || len(in.Messages) < len(r.req.Messages) {
		return nil
	}
	steps := in.Messages[len(r.req.Messages):] // the transcript before the last request
	if len(steps) > len(transcript) {
		return nil
	}
	for i := range steps {
		if !steps[i].Equal(transcript[i]) {
			return nil
		}
	}
	msgs := sent.Messages
	if r.head > 0 {
		if len(msgs) == 0 || !msgs[0].Equal(r.req.Messages[0]) {
			return nil
		}
		msgs = msgs[r.head:]
	}
	if n := len(r.provided); n > 0 {
		at := -1
		for i := len(msgs) - n; i >= 0 && at < 0; i-- {
			if sameRun(msgs[i:i+n], r.provided) {
				at = i
			}
		}
		if at < 0 {
			return nil
		}
		msgs = append(msgs[:at:at], msgs[at+n:]...)
	}
	turn := make([]llm.Message, 0, len(r.input)+len(steps))
	turn = append(append(turn, r.input...), steps...)
	return r.sess.NextCompaction(msgs, turn)
}

// sameRun reports whether a and b hold equal messages.
func sameRun(a, b []llm.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// openSession resolves the run's session, waits for earlier runs on it to
// finish, and loads its history.
func (r *run) openSession(ctx context.Context) error {
	a, opts := r.agent, r.opts
	var key any
	switch {
	case opts.Session != nil:
		key = any(opts.Session)
		if opts.Session.ID != "" {
			key = opts.Session.ID
		}
	case opts.SessionID != "":
		if err := session.ValidateID(opts.SessionID); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		key = opts.SessionID
	default:
		return nil
	}
	unlock, err := a.locks.lock(ctx, key)
	if err != nil {
		return fmt.Errorf("agent: waiting for session %v: %w", key, err)
	}
	switch {
	case opts.Session != nil:
		r.sess = opts.Session.Clone()
	case r.store() != nil:
		// The view is enough: the compaction and the messages after it.
		s, err := r.store().LoadView(ctx, opts.SessionID)
		if errors.Is(err, session.ErrNotFound) {
			s, err = &session.Session{ID: opts.SessionID}, nil
		}
		if err != nil {
			unlock()
			return fmt.Errorf("agent: loading session %q: %w", opts.SessionID, err)
		}
		r.sess = s
	default:
		r.sess = &session.Session{ID: opts.SessionID}
	}
	r.stateBefore = maps.Clone(r.sess.State)
	r.unlock = unlock
	return nil
}

// store returns the run's session store: RunOptions.Store, else
// Config.Store.
func (r *run) store() session.Store {
	if r.opts.Store != nil {
		return r.opts.Store
	}
	return r.agent.cfg.Store
}

// dropSystem returns msgs without system-role messages (msgs itself when
// it has none).
func dropSystem(msgs []llm.Message) []llm.Message {
	for i, m := range msgs {
		if m.Role == llm.RoleSystem {
			out := append(make([]llm.Message, 0, len(msgs)-1), msgs[:i]...)
			for _, m := range msgs[i+1:] {
				if m.Role != llm.RoleSystem {
					out = append(out, m)
				}
			}
			return out
		}
	}
	return msgs
}
