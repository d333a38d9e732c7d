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
// are complete, each tool result the tool loop produced, usage reports, and
// exactly one finish, last, on success.
const (
	UpdateText       UpdateKind = iota + 1 // Text: a text delta
	UpdateThinking                         // Text: a thinking delta
	UpdateToolCall                         // ToolCall: a whole tool call
	UpdateToolResult                       // ToolResult: a tool's result message
	UpdateUsage                            // Usage: token usage of the current model call so far
	UpdateFinish                           // FinishReason, Usage (the turn's total), Response
)

var updateKindNames = [...]string{
	UpdateText:       "text",
	UpdateThinking:   "thinking",
	UpdateToolCall:   "tool_call",
	UpdateToolResult: "tool_result",
	UpdateUsage:      "usage",
	UpdateFinish:     "finish",
}

// String returns the kind's snake_case name.
func (k UpdateKind) String() string {
	if int(k) < len(updateKindNames) && updateKindNames[k] != "" {
		return updateKindNames[k]
	}
	return "unknown"
}

// Update is one item of a run's stream (the seed's AgentResponseResult).
// Which fields are set depends on Kind; Agent and RunID always are.
type Update struct {
	Kind         UpdateKind
	Agent        string // the agent's Name
	RunID        string
	Text         string
	ToolCall     llm.ToolUse
	ToolResult   *llm.Message
	Usage        *llm.Usage
	FinishReason llm.FinishReason
	// Response is the run's whole response (UpdateFinish). Its
	// persistence may still be in progress: see Response.PersistErr.
	Response *Response
}

// converter turns model events into updates (the seed's
// AgentResponseConverter). Tool-call arguments are buffered until the call
// is complete; the messages of the turn are gathered on the side for the
// persistence fallbacks.
type converter struct {
	agent, runID string
	pending      []pendingCall // tool calls of the current model call not yet sent
	calls        int           // tool calls sent
	steps        int           // assistant messages gathered from step completions
	gathered     []llm.Message // assistant messages and tool results, in order
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
			c.gathered = append(c.gathered, *ev.Message)
		}
	case llm.EventUsage:
		if ev.Usage != nil {
			u := c.update(UpdateUsage)
			u.Usage = ev.Usage
			c.out = append(c.out, u)
		}
	case llm.EventStepComplete:
		c.flush()
		if ev.Response != nil {
			c.gathered = append(c.gathered, ev.Response.Message)
			c.steps++
		}
	case llm.EventComplete:
		c.flush()
	}
	return c.out
}

func (c *converter) emitCall(call llm.ToolUse) {
	u := c.update(UpdateToolCall)
	u.ToolCall = call
	c.out = append(c.out, u)
	c.calls++
}

// flush sends the tool calls of the model call that just ended whose stop
// never came (the seed's finalize / flush_tool_calls).
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
// caller's, in the seed's priority: the whole turn transcript (without user
// messages); else, when the turn called tools, the assistant message(s)
// with the tool calls and each tool result; else the plain assistant
// message.
func (c *converter) transcript(resp *llm.Response) []llm.Message {
	if len(resp.Transcript) > 0 {
		out := make([]llm.Message, 0, len(resp.Transcript))
		for _, m := range resp.Transcript {
			if m.Role != llm.RoleUser {
				out = append(out, m)
			}
		}
		return out
	}
	if c.calls > 0 || len(c.gathered) > c.steps {
		if c.steps == 0 {
			// No step completions: the final message carries the calls.
			out := make([]llm.Message, 0, 1+len(c.gathered))
			out = append(out, resp.Message)
			return append(out, c.gathered...)
		}
		out := append([]llm.Message(nil), c.gathered...)
		if out[len(out)-1].Role == llm.RoleTool {
			out = append(out, resp.Message) // the last call's answer had no step completion
		}
		return out
	}
	return []llm.Message{resp.Message}
}
