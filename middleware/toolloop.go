package middleware

import (
	"context"
	"iter"
	"slices"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// DefaultMaxSteps is the most model calls one turn of the tool loop makes
// unless ToolLoop.MaxSteps says otherwise.
const DefaultMaxSteps = 20

// ToolLoop configures [FunctionInvocation]. The zero value is usable (a
// loop with no tools of its own runs nothing: every call is left to the
// caller).
type ToolLoop struct {
	// Tools are the tools the loop runs: the user's own values, called as
	// they are, so every optional interface they implement ([tool.Timed],
	// [tool.Approvable], or one of the user's own that a hook or approver
	// looks for) is seen. Their definitions are offered on every request,
	// after the request's own Tools, except where the request already
	// defines that name. A definition in Request.Tools with no tool of that
	// name here is declared only: its calls end the turn and are the
	// caller's to answer.
	Tools []tool.Tool
	// MaxSteps is the most model calls per turn; 0 means DefaultMaxSteps.
	MaxSteps int
	// Invoker runs each batch of tool calls: concurrency, per-tool timeout,
	// result size limit, tool middleware (hooks, logging) and runner.
	Invoker tool.Invoker
	// Approver decides calls to tools that need approval. With none, such
	// calls are denied. It must be safe for concurrent use: the calls of
	// one batch are decided in parallel.
	Approver tool.Approver
	// Stop, when set, is asked after each batch of tool calls has run and
	// its results are in the transcript: true ends the turn there, every
	// call answered, with FinishToolUse (the agent's handoffs end a turn
	// of one agent this way, for the next to continue it).
	Stop func() bool
	// Refresh, when set, is asked before each model call after a turn's
	// first: the tools it returns (nil: no change) replace the loop's for
	// the rest of the turn, and the request's definitions follow (those of
	// tools gone are dropped, changed ones replaced, new ones added), so
	// the next model call sees the tools as they are now (an MCP server's
	// tools/list_changed during a turn).
	Refresh func() []tool.Tool
}

// FunctionInvocation returns the tool-loop middleware. A turn calls the
// model; while the answer asks for tool calls of the loop's tools, it runs
// them (in parallel, through cfg.Invoker), appends the
// assistant message and the results to the conversation and calls the model
// again. The Response carries the turn's Transcript (every assistant and
// tool-result message in order), Message is the last assistant message and
// Usage is summed over every model call.
//
// The rules:
//   - text, thinking and tool calls of one answer stay in one assistant
//     message, in the model's order;
//   - an answer without tool calls ends the turn;
//   - a call to a declared-only tool (defined in Request.Tools, not one of
//     cfg.Tools) ends the turn with that answer (FinishToolUse) and runs
//     none of its calls: they are the caller's to answer;
//   - the calls of an answer cut off by the length limit are not run: each
//     gets an error result saying so and the turn ends with FinishLength;
//   - at most cfg.MaxSteps model calls: if the last one still asks for
//     tools, they are not run, each gets an error result saying so, and the
//     turn ends with FinishMaxSteps, so every tool_use has its tool_result;
//   - a model call refused by a spending limit (an error matching
//     llm.ErrBudgetExceeded, see [StopOnBudget]) after the first ends the
//     turn with FinishBudget and what it did so far: the answers and the
//     results of every tool call they made; a refused first call is the
//     turn's error;
//   - a call to a tool the model invented gets a `tool "x" not found` error
//     result and the loop goes on;
//   - a tool that needs approval runs only if the Approver approves; a
//     denial becomes an error result telling the model it was denied;
//   - a fatal tool error or the context's cancellation ends the turn with
//     that error, after every running tool has returned;
//   - after the first model call a "required" or named tool choice becomes
//     auto, so a forced tool call cannot loop forever;
//   - a successful call to a [tool.Final] tool ends the turn (FinishStop)
//     once its batch has run: the model is not called again.
//   - when cfg.Stop reports true after a batch, the turn ends with that
//     batch's results (FinishToolUse).
//
// The streaming call forwards each inner event as it arrives, except that
// each inner EventComplete becomes an EventStepComplete; tool calls run only
// after their model call's stream has completed; each tool result is sent as
// an EventToolResult (in call order, after the batch); the stream ends with
// exactly one EventComplete carrying the turn's Response. Block indexes
// restart at each model call.
//
// It is the one constructor of the tool loop. An agent that offers
// different tools on each run makes one per run (it is cheap: no
// goroutine, nothing to close): FunctionInvocation(cfg)(next).
func FunctionInvocation(cfg ToolLoop) Middleware {
	return func(next llm.Model) llm.Model {
		l := &toolLoop{next: next, maxSteps: StepLimit(cfg.MaxSteps), approver: cfg.Approver, tools: cfg.Tools, stop: cfg.Stop, refresh: cfg.Refresh}
		l.inv = cfg.Invoker
		l.inv.Middleware = append(slices.Clip(cfg.Invoker.Middleware), l.approve)
		return l
	}
}

type toolLoop struct {
	next     llm.Model
	maxSteps int
	approver tool.Approver
	inv      tool.Invoker
	tools    []tool.Tool
	stop     func() bool
	refresh  func() []tool.Tool
}

func (l *toolLoop) Info() llm.ModelInfo { return l.next.Info() }

// runsTools marks the tool loop, so that Retry can refuse to wrap it.
func (l *toolLoop) runsTools() {}

// lookup finds the tool the turn runs for a call.
func (t *turn) lookup(name string) (tool.Tool, bool) { return tool.Find(t.tools, name) }

// offered returns req's tool definitions followed by those of the loop's
// tools the request does not define (req.Tools itself when there are none).
func (l *toolLoop) offered(req *llm.Request) []llm.ToolDefinition {
	defs := req.Tools
	for _, t := range l.tools {
		if !defines(req.Tools, t.Name()) {
			if len(defs) == len(req.Tools) {
				defs = slices.Clip(defs)
			}
			defs = append(defs, tool.Definition(t))
		}
	}
	return defs
}

func defines(defs []llm.ToolDefinition, name string) bool {
	for i := range defs {
		if defs[i].Name == name {
			return true
		}
	}
	return false
}

// approve is the innermost tool middleware: it runs after every other tool
// middleware, so the approver sees the arguments that will really be used.
func (l *toolLoop) approve(next tool.Handler) tool.Handler {
	return func(ctx context.Context, call tool.Call) (string, error) {
		if call.Tool == nil || !tool.NeedsApproval(call.Tool) {
			return next(ctx, call)
		}
		if l.approver == nil {
			return "", &tool.DeniedError{Tool: call.Name, By: "the tool loop", Reason: "the tool needs approval and no approver is configured"}
		}
		d, err := l.approver.Approve(ctx, call)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", &tool.DeniedError{Tool: call.Name, By: "the approver", Reason: "approval failed: " + err.Error()}
		}
		if err := d.Denial(call.Name); err != nil {
			return "", err
		}
		return next(ctx, call)
	}
}

func (l *toolLoop) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(l.wrap(ctx, req, llm.Next{Model: l.next, Blocking: true}))
}

func (l *toolLoop) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return l.wrap(ctx, req, llm.Next{Model: l.next})
}

// wrap is the loop, for both calls: each model call's events (its
// completion as EventStepComplete), then its tool results, until the
// model stops calling tools; the last event completes the whole turn.
func (l *toolLoop) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		t := newTurn(l, req)
		for {
			var resp *llm.Response
			sent := false // an event of this model call was forwarded
			for ev, err := range next.Stream(ctx, t.request()) {
				if !sent && StopOnBudget(t.steps, err) {
					t.finish = llm.FinishBudget
					yield(llm.Event{Type: llm.EventComplete, Response: t.final()}, nil)
					return
				}
				if err != nil {
					yield(llm.Event{}, err)
					return
				}
				if ev.Type == llm.EventComplete {
					resp = ev.Response
					ev.Type = llm.EventStepComplete
				}
				sent = true
				if !yield(ev, nil) {
					return
				}
			}
			if resp == nil {
				yield(llm.Event{}, llm.IncompleteStream("", ""))
				return
			}
			results, done, err := t.step(ctx, resp)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			for i := range results {
				if !yield(llm.Event{Type: llm.EventToolResult, Message: &results[i]}, nil) {
					return
				}
			}
			if done {
				yield(llm.Event{Type: llm.EventComplete, Response: t.final()}, nil)
				return
			}
		}
	}
}

// turn is the state of one tool-loop turn.
type turn struct {
	l          *toolLoop
	req        *llm.Request
	msgs       []llm.Message // the request's messages, then the transcript as far as request has needed it
	transcript []llm.Message
	usage      llm.Usage
	steps      int
	last       *llm.Response
	finish     llm.FinishReason
	tools      []tool.Tool // the loop's, or as ToolLoop.Refresh last gave them
}

func newTurn(l *toolLoop, req *llm.Request) *turn {
	if defs := l.offered(req); len(defs) != len(req.Tools) {
		r := *req
		r.Tools = defs
		req = &r
	}
	// Clip so that appending never writes into the caller's array.
	return &turn{l: l, req: req, msgs: slices.Clip(req.Messages), tools: l.tools}
}

// refresh replaces the turn's tools by now, and the request's definitions
// of the old ones by those of now.
func (t *turn) refresh(now []tool.Tool) {
	defs := make([]llm.ToolDefinition, 0, len(t.req.Tools)+len(now))
	for _, d := range t.req.Tools {
		if _, was := tool.Find(t.tools, d.Name); was {
			if nt, still := tool.Find(now, d.Name); still {
				defs = append(defs, tool.Definition(nt))
			}
			continue
		}
		defs = append(defs, d) // the caller's own definition
	}
	for _, nt := range now {
		if !defines(defs, nt.Name()) {
			defs = append(defs, tool.Definition(nt))
		}
	}
	r := *t.req
	r.Tools = defs
	t.req, t.tools = &r, now
}

// request returns the request for the next model call. The transcript is
// appended to the messages here, not as it grows, so that a turn whose
// first answer ends it (most turns) never copies the request's messages.
func (t *turn) request() *llm.Request {
	if t.steps > 0 && t.l.refresh != nil {
		if now := t.l.refresh(); now != nil {
			t.refresh(now)
		}
	}
	t.msgs = append(t.msgs, t.transcript[len(t.msgs)-len(t.req.Messages):]...)
	r := *t.req
	r.Messages = t.msgs
	if t.steps > 0 && (r.ToolChoice.Mode == llm.ToolChoiceRequired || r.ToolChoice.Mode == llm.ToolChoiceTool) {
		r.ToolChoice = llm.ToolChoice{}
	}
	return &r
}

// step records one model answer, runs its tool calls when the loop goes on,
// and returns the tool results it added and whether the turn is over.
func (t *turn) step(ctx context.Context, resp *llm.Response) ([]llm.Message, bool, error) {
	t.steps++
	t.usage.Add(resp.Usage)
	t.last = resp
	t.finish = resp.FinishReason
	// A step's messages: its transcript when the model below is itself a
	// pipeline that ran tools (the user messages of it are the request's),
	// else its message.
	for _, m := range resp.Messages() {
		if m.Role != llm.RoleUser {
			t.add(m)
		}
	}

	calls := resp.Message.ToolUses()
	if len(calls) == 0 {
		return nil, true, nil
	}
	end, why, stop := StopBeforeTools(t.steps, t.l.maxSteps, resp.FinishReason)
	switch {
	case stop && end == llm.FinishLength:
		return t.notRun(calls, why), true, nil
	case t.declaredOnly(calls):
		t.finish = llm.FinishToolUse
		return nil, true, nil
	case stop:
		t.finish = end
		return t.notRun(calls, why), true, nil
	}
	results, err := t.l.inv.Invoke(ctx, t.lookup, calls)
	if err != nil {
		return nil, true, err
	}
	for _, m := range results {
		t.add(m)
	}
	if t.ends(calls, results) {
		t.finish = llm.FinishStop
		return results, true, nil
	}
	if t.l.stop != nil && t.l.stop() {
		t.finish = llm.FinishToolUse
		return results, true, nil
	}
	return results, false, nil
}

// ends reports whether a call of the batch went to a [tool.Final] tool
// that ends the turn, and succeeded.
func (t *turn) ends(calls []llm.ToolUse, results []llm.Message) bool {
	for i, c := range calls {
		tl, ok := t.lookup(c.Name)
		if !ok {
			continue
		}
		if f, ok := tl.(tool.Final); ok && f.EndsTurn() && i < len(results) && !results[i].IsError {
			return true
		}
	}
	return false
}

func (t *turn) add(m llm.Message) {
	t.transcript = append(t.transcript, m)
}

// notRun answers each call with an error result saying why it did not run.
func (t *turn) notRun(calls []llm.ToolUse, why string) []llm.Message {
	out := NotRun(calls, why)
	for _, m := range out {
		t.add(m)
	}
	return out
}

// final returns the turn's Response.
func (t *turn) final() *llm.Response {
	r := *t.last
	r.Usage = t.usage
	r.FinishReason = t.finish
	r.Transcript = t.transcript
	return &r
}

// declaredOnly reports whether a call names a tool the request declares
// but the loop has no tool for: the caller answers those.
func (t *turn) declaredOnly(calls []llm.ToolUse) bool {
	for _, c := range calls {
		if _, ok := t.lookup(c.Name); !ok && defines(t.req.Tools, c.Name) {
			return true
		}
	}
	return false
}
