package agent

import (
	"context"
	"iter"
	"log/slog"
	"sync/atomic"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/session"
)

// Response is the result of a successful run.
type Response struct {
	RunID string
	// Agent is the Name of the agent that answered: after handoffs, the
	// last one the turn was handed to.
	Agent     string
	SessionID string // empty for a run without a session
	Model     string // the model that answered
	// Message is the final assistant message.
	Message llm.Message
	// Messages are what the turn added after the caller's messages: the
	// assistant messages and tool results, in order.
	Messages     []llm.Message
	FinishReason llm.FinishReason
	// Usage is summed over every model call of the turn, the calls of the
	// agents it was handed to and of its sub-agents ([AsTool]) included.
	Usage llm.Usage
	// CostUSD is the turn's price (its sub-agents' included); meaningful
	// only when CostKnown.
	CostUSD   float64
	CostKnown bool
	// Budget is what remains of the run's spending limits after it (the
	// run's, the session's, the principal's); nil for a run without
	// limits.
	Budget *budget.Remaining

	post *postInvocation
}

type postInvocation struct {
	done chan struct{} // closed when the post-invocation phase is over
	err  error         // set before done is closed
}

// Text returns the text of the final assistant message.
func (r *Response) Text() string { return r.Message.Text() }

// PersistErr waits for the run's post-invocation phase to finish and
// returns the error that kept the turn from being stored (a
// *[PersistError]), or nil when it was stored or there was nothing to
// store.
func (r *Response) PersistErr() error {
	if r.post == nil {
		return nil
	}
	<-r.post.done
	return r.post.err
}

// Stream is one run in progress, made by [Agent.RunStream]. Range over
// Updates once; Wait returns the run's result after its post-invocation
// phase. A Stream is for one run: it cannot be restarted.
type Stream struct {
	agent   *Agent
	ctx     context.Context
	input   []llm.Message
	opts    *RunOptions
	started atomic.Bool
	inline  bool          // run the post-invocation phase on the caller's goroutine (Wait drives the run)
	done    chan struct{} // closed when the run is entirely over
	resp    *Response     // set before done is closed, on success
	err     error         // set before done is closed, on failure

	endRun func(RunResult) // ends the run's telemetry (telemetry.go); nil without
}

// Updates runs the turn and yields its updates as they arrive; on success
// the last is the UpdateFinish, on failure the last item carries the error.
// Breaking out of the range before the finish update abandons the run: the
// model call is cancelled and nothing is persisted. The turn is persisted
// in the background once the model has finished; use Wait (or
// Response.PersistErr) to wait for it. Ranging a second time yields
// ErrStreamUsed. A run stopped by a spending limit yields its finish
// update (FinishReason llm.FinishBudget), then the *budget.ExceededError.
func (s *Stream) Updates() iter.Seq2[Update, error] {
	return func(yield func(Update, error) bool) {
		if !s.started.CompareAndSwap(false, true) {
			yield(Update{}, ErrStreamUsed)
			return
		}
		s.run(yield)
	}
}

// Wait returns the run's response, or the error that ended it, once the run
// is entirely over: the stream consumed and the post-invocation phase
// (providers' Invoked, persistence) finished. If nobody has ranged over
// Updates, Wait runs the turn itself, discarding the updates. Do not call
// Wait from inside the range loop over Updates: it would wait forever. A
// run a spending limit stopped returns both its Response (stored) and the
// *budget.ExceededError.
func (s *Stream) Wait() (*Response, error) {
	if s.started.CompareAndSwap(false, true) {
		s.inline = true // nobody reads the updates: no need to fork
		s.run(func(Update, error) bool { return true })
	}
	<-s.done
	return s.resp, s.err
}

// Each runs the turn on the caller's goroutine as Wait does, calling fn
// with each update as it arrives (the finish update included), and
// returns what Wait returns. Unlike ranging over Updates, it starts no
// goroutine: the post-invocation phase (providers' Invoked, persistence)
// runs on the caller's goroutine too, before the finish update is given
// to fn. It is for callers that may not start goroutines, such as a
// durable workflow that shows a turn's progress as it goes. fn returning
// false abandons the run, as breaking out of Updates does. A Stream
// already consumed returns ErrStreamUsed.
func (s *Stream) Each(fn func(Update) bool) (*Response, error) {
	if !s.started.CompareAndSwap(false, true) {
		return nil, ErrStreamUsed
	}
	s.inline = true
	s.run(func(u Update, err error) bool {
		if err != nil {
			return true // Wait returns it
		}
		return fn(u)
	})
	<-s.done
	return s.resp, s.err
}

func (s *Stream) run(yield func(Update, error) bool) {
	a := s.agent
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	ctx = s.observe(ctx) // the run's telemetry (telemetry.go)

	r, err := a.prepare(ctx, s.input, s.opts)
	if err != nil {
		s.fail(ctx, nil, err)
		yield(Update{}, err)
		return
	}
	over := false
	defer func() {
		if !over { // the caller broke out of the range (or panicked)
			s.fail(ctx, r, ErrAbandoned)
		}
	}()

	conv := converter{agent: a.cfg.Name, runID: r.id}
	mctx := ctx
	if r.state != nil {
		// What the budget policy's strategy remembers within the run
		// (compact.Incremental) belongs to the run: the run starts from
		// the session's stored view, not from a process's memory.
		mctx = compact.WithState(ctx, r.state)
	}
	if r.meter != nil {
		// Runs started by the run's tool calls count in its limits.
		mctx = budget.NewContext(mctx, r.meter)
	}
	out := r.sub.output(yield, cancel) // yield, made safe for sub-agents (subagent.go)
	if r.sub != nil {
		mctx = context.WithValue(mctx, linkKey{}, r.sub)
	}
	// The turn's parts: the agent's, then, after each handoff, the
	// agent's it was handed to.
	seg := segment{agent: a, model: r.model, req: r.req}
	var (
		final      *llm.Response
		prior      []llm.Message // the transcript of the parts before seg
		priorUsage llm.Usage
		cost       priced
		sctx       = mctx
		hspan      observe.Span
	)
	for {
		res := part(sctx, seg, &conv, out)
		final = res.final
		switch {
		case res.stopped || res.err != nil && r.sub.abandoned():
			// the caller stopped ranging (during a sub-agent's update, the
			// run was cancelled and failed)
			endSpan(hspan, ErrAbandoned)
			return
		case res.err != nil:
			over = true
			endSpan(hspan, res.err)
			s.fail(ctx, r, res.err)
			out(Update{}, res.err)
			return
		case final == nil:
			over = true
			err := llm.IncompleteStream("", "")
			endSpan(hspan, err)
			s.fail(ctx, r, err)
			out(Update{}, err)
			return
		}
		var next *Agent
		if r.handoff != nil {
			next = r.handoff.take()
		}
		if next == nil {
			break
		}
		// seg's part is over: its transcript and usage go on into the turn.
		prior = append(prior, conv.transcript(final)...)
		priorUsage.Add(final.Usage)
		cost.add(r.price(seg.agent, final))
		endSpan(hspan, nil)
		sctx, hspan = observe.Start(mctx, PhaseHandoff)
		hspan.SetString(AttrHandoffFrom, seg.agent.cfg.Name)
		hspan.SetString(AttrHandoffTo, next.cfg.Name)
		hspan.SetString(observe.AttrRunID, r.id)
		u := conv.update(UpdateHandoff)
		u.From, u.Agent = seg.agent.cfg.Name, next.cfg.Name
		conv.agent = next.cfg.Name
		if !out(u, nil) {
			endSpan(hspan, ErrAbandoned)
			return
		}
		r.spans = append(r.spans, session.AgentSpan{From: len(r.input) + len(prior), Agent: next.cfg.Name})
		seg = r.handOver(next, prior)
	}
	endSpan(hspan, nil)
	cost.add(r.price(seg.agent, final))
	if prior != nil {
		whole := *final
		whole.Transcript = append(prior, conv.transcript(final)...)
		whole.Usage.Add(priorUsage)
		final = &whole
	}

	if h := seg.agent.cfg.Hooks; h.HasOutputGuardrails() {
		// The final answer's deltas were delivered (by the agent that
		// answered, whose guardrails apply); its finish is not
		// until the output guardrails passed. A tripped turn ends with
		// their error, and nothing of it is stored.
		if err := h.RunOutputGuardrails(ctx, r.req, final); err != nil {
			over = true
			s.fail(ctx, r, err)
			out(Update{}, err)
			return
		}
	}

	resp := r.response(final, &conv, s.done, seg.agent, cost)
	s.resp = resp
	var stopped error // the spending limit that ended the turn
	if r.meter != nil {
		rem := r.meter.Remaining(ctx)
		resp.Budget = &rem
		if e := r.meter.Err(); e != nil && resp.FinishReason == llm.FinishBudget {
			stopped = e
			s.err = e
		}
	}
	over = true
	// The post-invocation phase runs beside the caller, who already has
	// every update but the finish. The caller's
	// cancellation cannot stop it: the model has answered, and the turn must
	// not be lost.
	post := func() {
		defer s.over(r)
		defer r.release()
		pctx := context.WithoutCancel(ctx)
		r.invoked(pctx, &Outcome{Request: r.req, Response: resp})
		resp.post.err = r.persistObserved(pctx, resp)
	}
	if s.inline {
		post()
	} else {
		go post()
	}

	u := conv.update(UpdateFinish)
	u.FinishReason = resp.FinishReason
	u.Usage = &resp.Usage
	u.Response = resp
	if !out(u, nil) || stopped == nil {
		return
	}
	out(Update{}, stopped)
}

// partResult is how one agent's part of a turn ended.
type partResult struct {
	final   *llm.Response // the part's response; nil when it did not complete
	err     error         // the error that ended it
	stopped bool          // the consumer stopped ranging
}

// part ranges over one agent's part of a turn, sending its updates to
// yield.
func part(ctx context.Context, seg segment, conv *converter, yield func(Update, error) bool) partResult {
	var res partResult
events:
	for ev, err := range seg.model.Stream(ctx, seg.req) {
		if err != nil {
			res.err = err
			break
		}
		if ev.Type == llm.EventComplete {
			res.final = ev.Response
		}
		for _, u := range conv.consume(ev) {
			if !yield(u, nil) {
				res.stopped = true
				break events
			}
		}
	}
	return res
}

// endSpan ends a handoff span, if one is open.
func endSpan(s observe.Span, err error) {
	if s != nil {
		s.End(err)
	}
}

// priced is a cost summed over parts of a turn.
type priced struct {
	usd     float64
	unknown bool
}

func (p *priced) add(usd float64, known bool) {
	p.usd += usd
	p.unknown = p.unknown || !known
}

// price prices the usage of the part of the turn a answered, with a's
// model info (and records it with a's Tracker).
func (r *run) price(a *Agent, part *llm.Response) (float64, bool) {
	model := part.Model
	if model == "" {
		model = a.Info().Name
	}
	sessionID := ""
	if r.sess != nil {
		sessionID = r.sess.ID
	}
	return a.price(sessionID, model, part.Usage)
}

// fail ends a run that produced no response: providers learn why, the
// session is released untouched.
func (s *Stream) fail(ctx context.Context, r *run, err error) {
	if r != nil {
		r.invoked(context.WithoutCancel(ctx), &Outcome{Request: r.req, Err: err})
		r.release()
	}
	s.err = err
	s.over(r)
}

func (r *run) response(final *llm.Response, conv *converter, done chan struct{}, last *Agent, cost priced) *Response {
	resp := &Response{
		RunID:        r.id,
		Agent:        last.cfg.Name,
		Model:        final.Model,
		Message:      final.Message,
		Messages:     conv.transcript(final),
		FinishReason: final.FinishReason,
		Usage:        final.Usage,
		CostUSD:      cost.usd,
		CostKnown:    !cost.unknown,
		post:         &postInvocation{done: done},
	}
	if r.sess != nil {
		resp.SessionID = r.sess.ID
	}
	if resp.Model == "" {
		resp.Model = last.Info().Name
	}
	if r.sub != nil {
		r.sub.addTo(resp) // the sub-agents' usage and cost
	}
	return resp
}

// invoked calls every provider's Invoked (runs with a session only).
func (r *run) invoked(ctx context.Context, out *Outcome) {
	if r.sess == nil {
		return
	}
	for _, p := range r.agent.cfg.Providers {
		if err := p.Invoked(ctx, r.inv, out); err != nil {
			r.agent.report(ctx, "agent: context provider's Invoked failed", &ProviderError{Provider: providerName(p), Phase: "invoked", RunID: r.id, Err: err}, slog.String("run_id", r.id))
		}
	}
}

func (r *run) release() {
	if r.unlock != nil {
		r.unlock()
	}
}

// persist stores the turn: the caller's messages and the transcript as one
// atomic append keyed by the run id, then (for an in-memory session) the
// same turn applied to the caller's session.
func (r *run) persist(ctx context.Context, resp *Response) error {
	if r.sess == nil {
		return nil
	}
	a := r.agent
	r.recordAgents(r.sess.Base + len(r.sess.Messages))
	msgs := make([]llm.Message, 0, len(r.input)+len(resp.Messages))
	msgs = append(msgs, r.input...)
	msgs = append(msgs, resp.Messages...)
	turn := session.Turn{
		ID:       r.id,
		Messages: msgs,
		Usage:    resp.Usage,
		State:    session.StateDelta(r.stateBefore, r.sess.State),
		Prefix:   r.sess.Prefix,
		Hashes:   r.sess.Hashes,
		Time:     a.now(),
		Model:    resp.Model,
		// What the last request sent, when it was compressed: the next
		// turn, in any process, continues from it.
		Compaction: r.compaction(resp.Messages),
	}
	if resp.CostKnown {
		turn.CostUSD = resp.CostUSD
	}
	if st := r.store(); st != nil && r.sess.ID != "" {
		if err := st.Append(ctx, r.sess.ID, turn); err != nil {
			perr := &PersistError{SessionID: r.sess.ID, RunID: r.id, Err: err}
			a.report(ctx, "agent: turn not persisted", perr, slog.String("run_id", r.id), slog.String("session", r.sess.ID))
			return perr
		}
	}
	if r.opts.Session != nil {
		r.opts.Session.Apply(turn)
	}
	return nil
}
