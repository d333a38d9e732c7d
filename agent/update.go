package agent

import (
	"bytes"
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// UpdateKind says what an Update carries.
type UpdateKind uint8

// Update kinds, in the order they can appear in a run: text and thinking
// deltas as the model writes them, each tool call whole once its arguments
// are complete, each tool result the tool loop produced, usage reports,
// handoffs and sub-agents' updates, and exactly one finish, last, on
// success.
const (
	UpdateText       UpdateKind = iota + 1 // Text: a text delta
	UpdateThinking                         // Text: a thinking delta
	UpdateToolCall                         // ToolCall: a whole tool call
	UpdateToolResult                       // ToolResult: a tool's result message
	UpdateUsage                            // Usage: token usage of the current model call so far
	UpdateFinish                           // FinishReason, Usage (the turn's total), Response
	// UpdateHandoff: the turn passed from the agent From to the agent
	// Agent (a transfer_to_* call); the updates after it are Agent's.
	UpdateHandoff
	// UpdateSubAgent carries, in Sub, an update of a sub-agent (an agent
	// run as a tool, [AsTool]) while the tool call ToolCall runs it; Agent
	// and RunID are the caller's, Sub's the sub-agent's own (a sub-agent's
	// own sub-agents nest further). Consumers that show only the agent's
	// own answer skip this kind.
	UpdateSubAgent
)

var updateKindNames = [...]string{
	UpdateText:       "text",
	UpdateThinking:   "thinking",
	UpdateToolCall:   "tool_call",
	UpdateToolResult: "tool_result",
	UpdateUsage:      "usage",
	UpdateFinish:     "finish",
	UpdateHandoff:    "handoff",
	UpdateSubAgent:   "sub_agent",
}

// String returns the kind's snake_case name.
func (k UpdateKind) String() string {
	if int(k) < len(updateKindNames) && updateKindNames[k] != "" {
		return updateKindNames[k]
	}
	return "unknown"
}

// Update is one item of a run's stream.
// Which fields are set depends on Kind; Agent and RunID always are.
type Update struct {
	Kind UpdateKind
	// Agent is the Name of the agent that produced the update: after a
	// handoff, the agent the turn was handed to.
	Agent        string
	RunID        string
	From         string  // UpdateHandoff: the agent that handed the turn over
	Sub          *Update // UpdateSubAgent: the sub-agent's update
	Text         string
	ToolCall     llm.ToolUse
	ToolResult   *llm.Message
	Usage        *llm.Usage
	FinishReason llm.FinishReason
	// Response is the run's whole response (UpdateFinish). Its
	// persistence may still be in progress: see Response.PersistErr.
	Response *Response
}

// converter turns model events into updates. Tool-call arguments are buffered
// until the call is complete.
type converter struct {
	agent, runID string
	pending      []pendingCall // tool calls of the current model call not yet sent
	out          []Update      // reused result buffer
}

type pendingCall struct {
	index int
	call  llm.ToolUse
	input []byte
}

func (c *converter) update(k UpdateKind) Update {
	return Update{Kind: k, Agent: c.agent, RunID: c.runID}
}

// consume returns the updates ev produces (valid until the next call).
func (c *converter) consume(ev llm.Event) []Update {
	c.out = c.out[:0]
	switch ev.Type {
	case llm.EventTextDelta:
		u := c.update(UpdateText)
		u.Text = ev.Delta
		c.out = append(c.out, u)
	case llm.EventThinkingDelta:
		u := c.update(UpdateThinking)
		u.Text = ev.Delta
		c.out = append(c.out, u)
	case llm.EventBlockStart:
		if tu, ok := ev.Block.(llm.ToolUse); ok {
			c.pending = append(c.pending, pendingCall{index: ev.Index, call: llm.ToolUse{ID: tu.ID, Name: tu.Name}, input: append([]byte(nil), tu.Input...)})
		}
	case llm.EventToolInputDelta:
		if p := c.find(ev.Index); p != nil {
			p.input = append(p.input, ev.Delta...)
		}
	case llm.EventBlockStop:
		if i := c.findIndex(ev.Index); i >= 0 {
			call := c.pending[i].built()
			if tu, ok := ev.Block.(llm.ToolUse); ok {
				call = tu // the producer's finished block wins
			}
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			c.emitCall(call)
		} else if tu, ok := ev.Block.(llm.ToolUse); ok {
			c.emitCall(tu) // a stop without a start still carries the whole call
		}
	case llm.EventToolResult:
		if ev.Message != nil {
			u := c.update(UpdateToolResult)
			u.ToolResult = ev.Message
			c.out = append(c.out, u)
		}
	case llm.EventUsage:
		if ev.Usage != nil {
			u := c.update(UpdateUsage)
			u.Usage = ev.Usage
			c.out = append(c.out, u)
		}
	case llm.EventStepComplete, llm.EventComplete:
		c.flush()
	}
	return c.out
}

func (c *converter) emitCall(call llm.ToolUse) {
	u := c.update(UpdateToolCall)
	u.ToolCall = call
	c.out = append(c.out, u)
}

// flush sends the tool calls of the model call that just ended whose stop
// never came.
func (c *converter) flush() {
	for i := range c.pending {
		c.emitCall(c.pending[i].built())
	}
	c.pending = c.pending[:0]
}

func (c *converter) findIndex(index int) int {
	for i := range c.pending {
		if c.pending[i].index == index {
			return i
		}
	}
	return -1
}

func (c *converter) find(index int) *pendingCall {
	if i := c.findIndex(index); i >= 0 {
		return &c.pending[i]
	}
	return nil
}

func (p *pendingCall) built() llm.ToolUse {
	call := p.call
	if in := bytes.TrimSpace(p.input); len(in) > 0 {
		call.Input = json.RawMessage(in)
	} else {
		call.Input = json.RawMessage("{}")
	}
	return call
}

// transcript returns the messages the turn adds to the session after the
// caller's: the turn's transcript (every assistant message and tool result,
// in order, as the agent's tool loop recorded it), without user messages;
// else the final assistant message.
func (c *converter) transcript(resp *llm.Response) []llm.Message {
	if len(resp.Transcript) == 0 {
		return []llm.Message{resp.Message}
	}
	out := make([]llm.Message, 0, len(resp.Transcript))
	for _, m := range resp.Transcript {
		if m.Role != llm.RoleUser {
			out = append(out, m)
		}
	}
	return out
}
