package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// DefaultMaxHandoffs is the most handoffs of one turn unless
// Config.MaxHandoffs says otherwise.
const DefaultMaxHandoffs = 8

// PhaseHandoff is the span of the part of a turn an agent answers after a
// handoff (agcore.handoff with otelagent): it opens when the turn is handed
// over and ends when that agent's part of the turn does.
const PhaseHandoff observe.Phase = "handoff"

// Attributes of the handoff span.
const (
	AttrHandoffFrom = "agcore.handoff.from" // the agent handing over
	AttrHandoffTo   = "agcore.handoff.to"   // the agent taking over
)

// ErrHandoffLimit is the error result a transfer call gets once the turn
// has made MaxHandoffs handoffs: the model reads it and the agent that
// made the call goes on answering. Test with errors.Is on the
// [tool.Call]'s error (the model only reads its text).
var ErrHandoffLimit = errors.New("agent: handoff limit reached")

// TransferToolName returns the name of the tool that hands a turn over to
// the agent called name: "transfer_to_" followed by name in lower case,
// each character other than a letter, a digit or '_' replaced by '_' (the
// OpenAI Agents SDK's rule).
func TransferToolName(name string) string {
	var b strings.Builder
	b.Grow(len("transfer_to_") + len(name))
	b.WriteString("transfer_to_")
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// AddHandoffs adds agents this agent may hand a turn over to, after
// Config.Handoffs: the way to build agents that hand off to each other (a
// triage agent and specialists that hand back to it). Call it before the
// agent's first run; it is not safe to call during runs. It fails, adding
// nothing, when a target is nil or unnamed, or its transfer tool's name is
// taken by one of the agent's tools or another target.
func (a *Agent) AddHandoffs(targets ...*Agent) error {
	names := make(map[string]bool, len(a.cfg.Tools)+len(a.handoffs)+len(targets))
	for _, t := range a.cfg.Tools {
		names[t.Name()] = true
	}
	for _, h := range a.handoffs {
		names[TransferToolName(h.cfg.Name)] = true
	}
	for i, h := range targets {
		if h == nil {
			return fmt.Errorf("agent %q: handoff %d is nil", a.cfg.Name, i)
		}
		if h.cfg.Name == "" {
			return fmt.Errorf("agent %q: handoff %d has no name", a.cfg.Name, i)
		}
		n := TransferToolName(h.cfg.Name)
		if names[n] {
			return fmt.Errorf("agent %q: two tools or handoffs are called %q", a.cfg.Name, n)
		}
		names[n] = true
	}
	a.handoffs = append(a.handoffs, targets...)
	return nil
}

// Handoffs returns the agents this agent may hand a turn over to (do not
// change the slice).
func (a *Agent) Handoffs() []*Agent { return a.handoffs }

// handoffState is one turn's handoffs: how many were made, and the
// target a transfer call of the current batch named.
type handoffState struct {
	mu    sync.Mutex
	max   int
	count int
	next  *Agent
}

// stop ends the current agent's part of the turn once a batch named a
// target (middleware.ToolLoop.Stop).
func (h *handoffState) stop() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next != nil
}

// take returns the target the last batch named, and forgets it.
func (h *handoffState) take() *Agent {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := h.next
	if next != nil {
		h.count++
		h.next = nil
	}
	return next
}

// transferTool is the generated tool that hands a turn over to target.
type transferTool struct {
	target *Agent
	state  *handoffState
}

var emptyObject = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

func (t *transferTool) Name() string { return TransferToolName(t.target.cfg.Name) }

func (t *transferTool) Description() string {
	d := "Hand the conversation over to the " + t.target.cfg.Name + " agent, which continues it."
	if t.target.cfg.Description != "" {
		d += " " + t.target.cfg.Description
	}
	return d
}

func (t *transferTool) Parameters() json.RawMessage { return emptyObject }

// Invoke names the target for the end of the batch; a second transfer in
// the batch, or one past the limit, is refused with an error result.
func (t *transferTool) Invoke(ctx context.Context, _ json.RawMessage) (string, error) {
	h := t.state
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.next != nil:
		return "", fmt.Errorf("not transferred: this answer already transfers to %s", h.next.cfg.Name)
	case h.count >= h.max:
		return "", fmt.Errorf("%w (%d per turn): answer the user yourself", ErrHandoffLimit, h.max)
	}
	h.next = t.target
	return "Transferred to " + t.target.cfg.Name + ".", nil
}

// transferTools returns the transfer tools of a's handoffs for one turn.
func (a *Agent) transferTools(h *handoffState) []tool.Tool {
	if len(a.handoffs) == 0 {
		return nil
	}
	out := make([]tool.Tool, len(a.handoffs))
	for i, target := range a.handoffs {
		out[i] = &transferTool{target: target, state: h}
	}
	return out
}

// loop returns the tool loop of one agent's part of a turn over next.
func (a *Agent) loop(next llm.Model, tools []tool.Tool, approver tool.Approver, h *handoffState, refresh func() []tool.Tool) llm.Model {
	cfg := middleware.ToolLoop{
		Tools:    tools,
		MaxSteps: a.cfg.MaxSteps,
		Invoker:  a.inv,
		Approver: approver,
		Refresh:  refresh,
	}
	if h != nil {
		cfg.Stop = h.stop
	}
	return middleware.FunctionInvocation(cfg)(next)
}

// segment is the part of a turn one agent answers.
type segment struct {
	agent *Agent
	model llm.Model
	req   *llm.Request
}

// handOver returns the segment in which the agent to answers the rest of
// the turn, after sofar (the turn's transcript up to the transfer's
// result): to's instructions with the context providers' (the run's
// providers were asked once, by the first agent), the request's history
// and context, to's tools and handoffs, to's pipeline and limits.
func (r *run) handOver(to *Agent, sofar []llm.Message) segment {
	var instructions []string
	if to.cfg.Instructions != "" {
		instructions = append(instructions, to.cfg.Instructions)
	}
	instructions = append(instructions, r.providerInstructions...)
	rest := r.req.Messages[r.head:]
	msgs := make([]llm.Message, 0, 1+len(rest)+len(sofar))
	if len(instructions) > 0 {
		msgs = append(msgs, llm.SystemText(strings.Join(instructions, "\n\n")))
	}
	msgs = append(append(msgs, rest...), sofar...)
	tools := tool.Merge(to.cfg.Tools, r.opts.Tools, r.providerTools, to.transferTools(r.handoff))
	req := *r.req
	req.Messages = msgs
	req.Tools = definitions(tools, r.opts.Declared)
	approver := to.cfg.Approver
	if approver == nil {
		approver = r.approver
	}
	r.setCurrent(to)
	next := to.model
	if r.meter != nil {
		// The run's spending limits hold whichever agent answers.
		next = r.meter.Middleware()(next)
	}
	return segment{agent: to, req: &req, model: to.loop(compact.Guard(to.policy)(next), tools, approver, r.handoff, nil)}
}

// recordAgents notes in the session's state bag which agent answered
// which part of the turn (session.AgentsKey), for a run whose agents hand
// off, or a session that already records them. base is the index in the
// session's history of the turn's first message.
func (r *run) recordAgents(base int) {
	if r.sess == nil || len(r.agent.handoffs) == 0 && r.sess.State[session.AgentsKey] == nil {
		return
	}
	spans := r.spans
	if spans == nil {
		spans = []session.AgentSpan{{From: len(r.input), Agent: r.agent.cfg.Name}}
	}
	for _, sp := range spans {
		if err := session.RecordAgent(r.sess, base+sp.From, sp.Agent); err != nil {
			r.agent.logger().Warn("agent: answering agent not recorded", "agent", sp.Agent, "run_id", r.id, "error", err)
			return
		}
	}
}

// setCurrent records the agent answering (read by sub-agents' runs, which
// may run in parallel).
func (r *run) setCurrent(a *Agent) {
	if r.sub != nil {
		r.sub.mu.Lock()
		defer r.sub.mu.Unlock()
	}
	r.current = a
}
