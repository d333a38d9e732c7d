// Package agent runs an LLM agent. [New] builds the standard agent from a
// model (a provider adapter) and one [Config]: instructions, tools,
// context providers, a session store, the budget policy, retries, hooks,
// an approver, the step limit, logging, telemetry ([Telemetry]; package
// otelagent implements it with OpenTelemetry), extra middleware, the clock
// and id source. It assembles the pipeline in the one correct order, each
// setting given once:
//
//	tool loop → budget policy → hooks → telemetry → Config.Middleware → retry → logging → model-info override → model
//
// The tool loop runs the user's own tool.Tool values, so every interface
// they implement (tool.Timed, tool.Approvable, or the user's own, which a
// hook or approver may look for) is seen where it matters. The budget
// policy (compact.Policy) checks every model call of the loop, and a
// retry re-sends one model call, never the tools.
//
// [Agent.Run] and [Agent.RunStream] run a turn in three phases:
//
//  1. Pre-invocation. Each [ContextProvider], in order, may add instructions,
//     messages and tools (or replace the messages gathered so far). A
//     provider that fails is skipped, logged and reported to OnError. The
//     request is one system message (the agent's instructions, then the
//     providers', blank-line separated), the session's view of its history
//     (Store.LoadView: its stored compaction, what the last compressed
//     request sent, then the messages after it; the whole history when
//     nothing was compressed), the providers' messages and the caller's
//     messages; every other
//     system-role message (from providers, callers or an in-memory
//     session's history) is dropped: per-run instructions go through
//     RunOptions.Instructions. The tools are the agent's, then the run's,
//     then the providers' minus any name already taken, then the run's
//     declared-only tools (whose calls end the turn for the caller).
//  2. Model call. The tool loop calls the model through the pipeline; the
//     budget policy compresses each request over the input budget (or
//     refuses one that cannot fit the context window), and the session
//     records the prefix hashes of the first request as sent. The model's
//     events become [Update]s: text and thinking deltas, whole tool calls,
//     tool results, usage and the finish, each with the agent's name and
//     run id.
//  3. Post-invocation. When the stream ends, each provider's Invoked is
//     called, then the caller's messages and the turn's transcript are
//     appended to the session as one atomic turn keyed by the run id,
//     with, when the turn's last request was compressed, what it sent
//     (Turn.Compaction, see session.Session.NextCompaction): the next
//     turn, in this process or any other over the store, starts from that
//     view and sends what one long-lived agent would. What the budget
//     policy's strategy remembers during a run (compact.State) belongs to
//     the run. The stored history stays whole (Store.Load).
//     Persistence errors never break the stream; they are logged, sent to
//     OnError and returned by [Response.PersistErr].
//
// Guardrails are hooks (Config.Hooks: middleware.Hooks.InputGuardrails
// and OutputGuardrails), the one way to check a turn. The input guardrails
// check the turn's first model request alongside its first model call (or
// before it, middleware.GuardrailsBlocking): that call's output is held
// back until they pass, so no tool runs before, and a tripwire cancels the
// call. The output guardrails check the final answer before the finish
// update. A tripped (or failed: guardrails fail closed) guardrail ends the
// run with a *middleware.GuardrailError (errors.Is
// middleware.ErrTripwire, or middleware.ErrGuardrailFailed) and nothing of
// the turn is stored. A streaming caller of a turn tripped at its input
// gets no update, only the error; the final answer's text deltas stream as
// the model writes them, so a turn tripped at its output ends with the
// error in place of the finish, after deltas the caller should discard.
//
// A run that fails, is cancelled or is abandoned (the caller stops ranging
// before the finish update) persists nothing. Runs on the same session
// through the same Agent never interleave: a second run waits for the first
// to finish, including its persistence.
//
// Agents work together in two ways. [AsTool] makes an agent a tool
// another agent offers: each call is a run of its own, in the call's
// context, with its transcript in a child session ([ChildSessionID]), its
// updates forwarded ([UpdateSubAgent]) and its usage added to the
// caller's. Config.Handoffs (and [Agent.AddHandoffs], for agents that hand
// off to each other) offer transfer_to_NAME tools ([TransferToolName]):
// calling one hands the rest of the turn to that agent, under its own
// instructions, tools and pipeline ([UpdateHandoff], at most
// Config.MaxHandoffs times a turn); the session records which agent
// answered what (session.AgentsKey).
//
// Lower-level composition stays possible: package middleware's
// FunctionInvocation, compact.Guard and the rest are plain
// func(llm.Model) llm.Model values, and package conversation keeps a
// history without an agent.
//
// Package agent imports llm, tool, middleware, session, compact, usage, budget and
// observe. It must never import cmd, provider adapters, concrete session
// stores or OpenTelemetry (a test in internal/testkit/sizeprobe checks the last).
package agent
