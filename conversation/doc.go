// Package conversation keeps a conversation's history and sends it to a
// model: a [Cycle] is for programs that want history
// management without an agent, sessions or context providers.
//
// A Cycle holds the messages, the model, optional hooks, an optional
// compaction configuration and a usage and cost tally. Submit sends the
// history plus a new user prompt; SubmitWithTools does the same through the
// tool loop ([middleware.FunctionInvocation]), so tools run exactly as they
// do under an agent; SubmitMessages sends messages without touching the
// history; SubmitStream streams.
//
// The history changes only when a call succeeds: a failed, blocked or
// cancelled call leaves it exactly as it was. The system prompt is only
// ever a system message in the history: put one there
// with WithMessages or PushMessage; the Cycle never inserts one.
//
// SubmitStream records the prompt (in the history as the request was
// sent, compressed or not, as Submit does) when the stream starts; after
// the stream's EventComplete the caller adds the answer with
// [Cycle.PushMessage]. A stream that fails or is abandoned before its
// EventComplete leaves the history as it was.
//
// A Cycle is not safe for concurrent use.
//
// This package imports llm, tool, middleware, compact and usage; it must
// never import agent, session, cmd or any provider package.
package conversation
