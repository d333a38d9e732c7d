// Package agent runs an LLM agent: an [Agent] holds instructions, tools,
// context providers, an optional compression strategy and a model (already
// wrapped in its middleware pipeline), and runs turns with [Agent.Run] and
// [Agent.RunStream] in three phases:
//
//  1. Pre-invocation. Each [ContextProvider], in order, may add instructions,
//     messages and tools (or replace the messages gathered so far). A
//     provider that fails is skipped, logged and reported to OnError. The
//     request is one system message (the agent's instructions, then the
//     providers', blank-line separated), the session's stored history, the
//     providers' messages and the caller's messages; every other
//     system-role message (from providers, callers or an in-memory
//     session's history) is dropped: per-run instructions go through
//     RunOptions.Instructions. When a strategy, a counter and
//     known model limits are all present and the request is over the input
//     budget, it is compressed (a failing strategy leaves it unchanged).
//     This happens once per turn; a compact.Guard in the pipeline keeps
//     each later step of the tool loop inside the budget too.
//     The session records the request's prefix hashes.
//  2. Model call. The agent's tools come first, then the run's extra tools,
//     then the providers' minus any name already taken. The model's events
//     become [Update]s: text and thinking deltas, whole tool calls, tool
//     results, usage and the finish, each with the agent's name and run id.
//  3. Post-invocation. When the stream ends, each provider's Invoked is
//     called, then the caller's messages and the turn's transcript are
//     appended to the session as one atomic turn keyed by the run id.
//     Persistence errors never break the stream; they are logged, sent to
//     OnError and returned by [Response.PersistErr].
//
// A run that fails, is cancelled or is abandoned (the caller stops ranging
// before the finish update) persists nothing. Runs on the same session
// through the same Agent never interleave: a second run waits for the first
// to finish, including its persistence.
//
// Package agent imports llm, tool, middleware, session, compact and usage.
// It must never import cmd, provider adapters or concrete session stores.
package agent
