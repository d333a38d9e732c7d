package llmtest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/llm"
)

// Step is one scripted model call: what the model answers to the request it
// receives. Build steps with [Text], [Reply], [Respond], [Fail], [Func] or
// [Hang], and adjust them with the With… and FailAfter methods. A Step is a
// value; the methods return a changed copy.
type Step struct {
	resp      *llm.Response
	err       error
	failAfter int // with err: events a stream yields before err; <0: fail at once
	fn        func(ctx context.Context, req *llm.Request) (*llm.Response, error)
	hang      bool
}

// Text returns a step answering with one text block (finish reason stop).
func Text(text string) Step {
	return Reply(llm.Text{Text: text})
}

// Reply returns a step answering with an assistant message holding blocks,
// in order: text, thinking ([llm.Thinking]), tool calls ([Call]), and so on.
// The finish reason is tool_use when a block is a tool call, else stop.
func Reply(blocks ...llm.Block) Step {
	return Respond(&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks}})
}

// Respond returns a step answering with resp as given. An empty ID, Model or
// FinishReason is filled in when the step is played; resp is copied each
// time, so the caller may keep using it.
func Respond(resp *llm.Response) Step {
	return Step{resp: cloneResponse(resp), failAfter: -1}
}

// Fail returns a step whose call fails with err. A stream yields err as its
// first item.
func Fail(err error) Step {
	return Step{err: err, failAfter: -1}
}

// Func returns a step computed by fn from the call's context and request
// (a deep copy the function may keep). Streams play fn's response as events.
func Func(fn func(ctx context.Context, req *llm.Request) (*llm.Response, error)) Step {
	return Step{fn: fn, failAfter: -1}
}

// Hang returns a step that waits until the call's context is done and then
// fails with a cancelled error (see [llm.Cancelled]). Use it to test
// cancellation and timeouts.
func Hang() Step {
	return Step{hang: true, failAfter: -1}
}

// WithUsage returns s answering with usage u.
func (s Step) WithUsage(u llm.Usage) Step {
	s.resp = s.response()
	s.resp.Usage = u
	return s
}

// WithFinish returns s answering with finish reason f (for example
// llm.FinishLength for a cut-off answer).
func (s Step) WithFinish(f llm.FinishReason) Step {
	s.resp = s.response()
	s.resp.FinishReason = f
	return s
}

// WithID returns s answering with response id id.
func (s Step) WithID(id string) Step {
	s.resp = s.response()
	s.resp.ID = id
	return s
}

// FailAfter returns s made to fail with err after its stream has yielded n
// events (n = 0 fails before the first event). Generate fails with err at
// once. Use it for failures in the middle of a stream.
func (s Step) FailAfter(n int, err error) Step {
	s.err = err
	s.failAfter = max(n, 0)
	return s
}

// response returns a private copy of s's response to change.
func (s Step) response() *llm.Response {
	if s.resp == nil {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	}
	return cloneResponse(s.resp)
}

// Call returns a tool call block with the given id and tool name. args is
// the JSON arguments object: a string, []byte or json.RawMessage is used as
// is ("" means {}); anything else is marshalled with encoding/json, and Call
// panics if that fails.
func Call(id, name string, args any) llm.ToolUse {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case string:
		raw = json.RawMessage(a)
	case []byte:
		raw = append(json.RawMessage(nil), a...)
	case json.RawMessage:
		raw = append(json.RawMessage(nil), a...)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			panic(fmt.Sprintf("llmtest.Call(%q, %q): %v", id, name, err))
		}
		raw = b
	}
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return llm.ToolUse{ID: id, Name: name, Input: raw}
}
