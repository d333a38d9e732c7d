package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// MaxSubAgentDepth is how deep sub-agents nest: a sub-agent's call at this
// depth (an agent that calls itself, say) gets an error result instead of
// a run.
const MaxSubAgentDepth = 8

// ToolOptions adjust the tool [AsTool] makes. The zero value (or nil)
// names the tool after the agent and takes {"input": "..."}.
type ToolOptions struct {
	// Name is the tool's name; "" means the agent's Name.
	Name string
	// Description is what the calling model reads; "" means the agent's
	// Description, else a sentence naming the agent.
	Description string
	// Parameters is the JSON Schema of the arguments; nil means an object
	// with one required string, "input", which becomes the sub-agent's
	// user message. With other parameters the arguments' JSON text is the
	// user message.
	Parameters json.RawMessage
}

// AsTool returns a tool that runs a as a sub-agent: each call is one run
// of a, with its own instructions, tools, model and limits, on the call's
// input; the tool's result is the text of a's answer.
//
// Called by an agent of this package, the sub-agent's run is tied to the
// calling run:
//   - its transcript is a session of its own, ChildSessionID(the caller's
//     session, the tool call's id), in the caller's store (RunOptions.Store
//     or Config.Store), whose state names the caller (session.ParentKey);
//     a caller without a session runs it without one;
//   - its updates reach the caller's stream as [UpdateSubAgent] updates;
//   - its usage and cost add up into the caller's [Response] and stored
//     turn;
//   - it runs in the tool call's context: cancelling the caller cancels
//     it, and its telemetry nests under the call's (execute_tool);
//   - a sub-agent without an Approver of its own asks the caller's.
//
// A sub-agent's failure is the tool's error result, which the calling
// model reads; a cancelled context fails the caller's turn.
func AsTool(a *Agent, opts *ToolOptions) tool.Tool {
	t := &agentTool{agent: a}
	if opts != nil {
		t.name, t.desc, t.params = opts.Name, opts.Description, opts.Parameters
	}
	if t.name == "" {
		t.name = a.cfg.Name
	}
	if t.desc == "" {
		t.desc = a.cfg.Description
	}
	if t.desc == "" {
		t.desc = "Ask the " + a.cfg.Name + " agent: it works on the input on its own and answers."
	}
	if t.params == nil {
		t.params = inputParams
		t.plain = true
	}
	return t
}

var inputParams = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The task or question for the agent, with everything it needs to know."}},"required":["input"],"additionalProperties":false}`)

// agentTool is the tool AsTool makes.
type agentTool struct {
	agent      *Agent
	name, desc string
	params     json.RawMessage
	plain      bool // params are inputParams
}

func (t *agentTool) Name() string                { return t.name }
func (t *agentTool) Description() string         { return t.desc }
func (t *agentTool) Parameters() json.RawMessage { return t.params }

// Invoke runs the sub-agent.
func (t *agentTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	input := string(args)
	if t.plain {
		var in struct {
			Input string `json:"input"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
		input = in.Input
	}
	link, _ := ctx.Value(linkKey{}).(*subLink)
	callID, _ := ctx.Value(callKey{}).(string)
	opts := &RunOptions{}
	call := &subCall{link: link, callID: callID, depth: 1}
	if link != nil && link.run.parent != nil {
		call.depth = link.run.parent.depth + 1
	}
	if call.depth > MaxSubAgentDepth {
		return "", fmt.Errorf("agent %s not run: sub-agents nest %d deep at most", t.agent.cfg.Name, MaxSubAgentDepth)
	}
	if link != nil && link.run.sess != nil && link.run.sess.ID != "" && callID != "" {
		opts.SessionID = ChildSessionID(link.run.sess.ID, callID)
		opts.Store = link.run.store()
	}
	stream := t.agent.RunStream(context.WithValue(ctx, childKey{}, call), []llm.Message{llm.UserText(input)}, opts)
	for u, err := range stream.Updates() {
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("agent %s: %w", t.agent.cfg.Name, err)
		}
		if link != nil && !link.forward(u, callID, t.name) {
			return "", ErrAbandoned
		}
	}
	resp, err := stream.Wait()
	if err != nil {
		return "", err
	}
	if link != nil {
		link.add(resp)
	}
	return resp.Text(), nil
}

// ChildSessionID returns the id of the session that keeps the transcript
// of the sub-agent run by the tool call callID of a turn in session
// parent: parent, '.', then callID with each byte a session id does not
// allow replaced by '_', cut to session.MaxIDLen.
func ChildSessionID(parent, callID string) string {
	b := make([]byte, 0, len(parent)+1+len(callID))
	b = append(append(b, parent...), '.')
	for i := 0; i < len(callID); i++ {
		c := callID[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			c = '_'
		}
		b = append(b, c)
	}
	if len(b) > session.MaxIDLen {
		b = b[:session.MaxIDLen]
	}
	return string(b)
}

type (
	linkKey  struct{} // the calling run's *subLink, in its tools' context
	callKey  struct{} // the tool call's id, in an agent tool's context
	childKey struct{} // the *subCall, in a sub-agent run's context
)

// subAgentCalls is the tool middleware that gives an agent tool its call's
// id (tool.Tool.Invoke has only the arguments).
func subAgentCalls(next tool.Handler) tool.Handler {
	return func(ctx context.Context, call tool.Call) (string, error) {
		if _, ok := call.Tool.(*agentTool); ok {
			ctx = context.WithValue(ctx, callKey{}, call.ID)
		}
		return next(ctx, call)
	}
}

// hasAgentTool reports whether one of tools is an agent tool.
func hasAgentTool(tools []tool.Tool) bool {
	for _, t := range tools {
		if _, ok := t.(*agentTool); ok {
			return true
		}
	}
	return false
}

// subCall is what a sub-agent's run knows of its caller.
type subCall struct {
	link   *subLink // nil when the caller is not an agent run
	callID string
	depth  int // 1 for a sub-agent of a top-level run
}

// linkOf returns the caller of the run whose context ctx is, or nil.
func linkOf(ctx context.Context) *subCall {
	c, _ := ctx.Value(childKey{}).(*subCall)
	if c == nil || c.link == nil {
		return nil
	}
	return c
}

// subLink ties a run to the runs of its sub-agents: their updates go into
// its stream, their usage and cost into its response.
type subLink struct {
	run *run

	mu      sync.Mutex
	yield   func(Update, error) bool // the caller's, once guarded
	stopped bool
	cancel  func()
	usage   llm.Usage
	cost    priced
}

// output returns the function a run sends its updates to: yield itself
// for a run without sub-agents (a nil l), else yield made safe for the
// sub-agents' goroutines: one call at a time, none after the consumer
// stopped (which cancels the run).
func (l *subLink) output(yield func(Update, error) bool, cancel func()) func(Update, error) bool {
	if l == nil {
		return yield
	}
	l.yield, l.cancel = yield, cancel
	return l.emit
}

func (l *subLink) emit(u Update, err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	if !l.yield(u, err) {
		l.stopped = true
		l.cancel()
		return false
	}
	return true
}

// abandoned reports whether the consumer of l's run stopped ranging (false
// for a nil l).
func (l *subLink) abandoned() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// forward sends the sub-agent's update u into the caller's stream.
func (l *subLink) forward(u Update, callID, toolName string) bool {
	sub := u
	l.mu.Lock()
	caller := l.run.current.cfg.Name
	l.mu.Unlock()
	return l.emit(Update{Kind: UpdateSubAgent, Agent: caller, RunID: l.run.id,
		ToolCall: llm.ToolUse{ID: callID, Name: toolName}, Sub: &sub}, nil)
}

// add adds a sub-agent's usage and cost.
func (l *subLink) add(resp *Response) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.usage.Add(resp.Usage)
	l.cost.add(resp.CostUSD, resp.CostKnown)
}

// addTo adds the sub-agents' usage and cost to the caller's response.
func (l *subLink) addTo(resp *Response) {
	l.mu.Lock()
	defer l.mu.Unlock()
	resp.Usage.Add(l.usage)
	resp.CostUSD += l.cost.usd
	resp.CostKnown = resp.CostKnown && !l.cost.unknown
}

// markParent records the calling run in a sub-agent's session.
func (r *run) markParent() {
	c := r.parent
	if c == nil || r.sess == nil || r.sess.State[session.ParentKey] != nil {
		return
	}
	c.link.mu.Lock()
	caller := c.link.run.current.cfg.Name
	c.link.mu.Unlock()
	p := session.Parent{Agent: caller, RunID: c.link.run.id, ToolCallID: c.callID}
	if c.link.run.sess != nil {
		p.Session = c.link.run.sess.ID
	}
	if err := session.SetState(r.sess, session.ParentKey, p); err != nil {
		r.agent.logger().Warn("agent: sub-agent's caller not recorded", "run_id", r.id, "error", err)
	}
}
