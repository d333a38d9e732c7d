package structured

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
)

// Partial is one item of [Stream]: the answer as far as it has arrived, or
// (Done) the validated answer.
type Partial[T any] struct {
	// Value is the answer so far, decoded from JSON (members not yet
	// arrived are zero; a string cut short holds what has arrived), or,
	// when Done, the answer.
	Value T
	// JSON is the text Value was decoded from: the answer's JSON so far,
	// closed where it was cut.
	JSON json.RawMessage
	// Attempt is 1 for the first answer, 2 for the first repair turn's,
	// ...: a repair starts the partial values again.
	Attempt int
	// Done marks the last item: Value validated against the schema.
	Done bool
	// Response is the run's response (Done only), as Run returns it.
	Response *agent.Response
}

// Stream is [Run] yielding the answer as its JSON arrives: a Partial each
// time the text received so far closes into a different JSON value that
// decodes into T, then one Partial with Done set. The partial values are
// not validated (members are missing until they arrive); only the last
// one is. In Mode Tool the answer arrives whole, as the forced tool's
// call (the agent's updates carry tool calls once complete). Text that
// precedes a tool call is not taken for the answer. On failure the last
// item carries the error (a *[Error] as Run's). Breaking out of the range
// abandons the run.
func Stream[T any](ctx context.Context, a *agent.Agent, msgs []llm.Message, opts *Options) iter.Seq2[Partial[T], error] {
	return func(yield func(Partial[T], error) bool) {
		k, err := newCall[T](a, msgs, opts)
		if err != nil {
			yield(Partial[T]{}, err)
			return
		}
		for attempt := 1; ; attempt++ {
			var (
				buf     []byte
				last    []byte
				stopped bool
			)
			emit := func(src []byte) bool {
				out, _ := completeJSON(src)
				if out == nil || bytes.Equal(out, last) {
					return true
				}
				var v T
				if json.Unmarshal(out, &v) != nil {
					return true // not yet T's shape (a number cut inside a string field, say)
				}
				last = append(last[:0], out...)
				if !yield(Partial[T]{Value: v, JSON: json.RawMessage(bytes.Clone(out)), Attempt: attempt}, nil) {
					stopped = true
					return false
				}
				return true
			}
			resp, err := k.run(ctx, func(u agent.Update) bool {
				switch u.Kind {
				case agent.UpdateText:
					if k.mode != Tool || len(buf) > 0 || bytes.IndexByte([]byte(u.Text), '{') >= 0 {
						buf = append(buf, u.Text...)
						return emit(buf)
					}
				case agent.UpdateToolCall:
					buf = buf[:0]
					if u.ToolCall.Name == k.toolName() {
						return emit(u.ToolCall.Input)
					}
				case agent.UpdateToolResult:
					buf = buf[:0]
				}
				return true
			})
			if stopped {
				return
			}
			if err != nil {
				yield(Partial[T]{}, err)
				return
			}
			raw, aerr := k.answer(resp)
			if aerr == nil {
				var v T
				if v, aerr = decode[T](raw, k.attempts); aerr == nil {
					yield(Partial[T]{Value: v, JSON: raw, Attempt: attempt, Done: true, Response: k.total(resp)}, nil)
					return
				}
			}
			if !k.retry(resp, aerr) {
				yield(Partial[T]{}, aerr)
				return
			}
		}
	}
}
