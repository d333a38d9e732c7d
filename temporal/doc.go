// Package agtemporal runs agcore turns as Temporal workflows: durable runs.
// A turn survives a crashed worker, a tool call that completed is never run
// again, and a call that needs approval can wait for days without holding a
// process. It is built on Temporal itself (go.temporal.io/sdk): the server
// keeps the turn's history, the SDK replays it, nothing here re-implements
// either.
//
// The package lives in its own module (github.com/agcore/agcore/temporal),
// so agcore's go.mod never carries the Temporal SDK. Its command,
// agcore-temporal (worker, run, approve), is what `agcore worker`,
// `agcore approve` and `agcore run --temporal` execute.
//
// # What runs where
//
// A turn is one workflow, [TurnWorkflow], id [TurnWorkflowID](session, turn).
// [StartTurn] starts it with the reuse policy REJECT_DUPLICATE and the
// conflict policy USE_EXISTING: starting a turn that is running attaches to
// it, starting one that has ended returns that run, so a turn runs at most
// once however often it is submitted.
//
// The workflow holds the agent loop; every side effect is an activity run
// by a worker:
//
//	workflow (deterministic)                  activities (worker-side)
//	--------------------------------------    ---------------------------------------------
//	                                          Prepare: load the session, run the context
//	                                            providers, describe tools and model
//	build the request, apply the budget
//	policy (compact.Policy: count, fit,
//	microcompact, drop oldest turns)  ──────► Summarize (only when TurnInput.Summarize)
//	                                  ──────► Model "model-N": stream the call, heartbeat,
//	                                            publish deltas, return llm.Response
//	approval: park, Query, Update, timer
//	fan out the batch's tool calls    ──────► Tool "tool-N-CALLID", one per call, parallel
//	collect the results in call order
//	loop until no tool call, or the
//	step limit (middleware's rules)
//	                                  ──────► Persist "persist-TURNID": session.Store.Append
//
// The workflow is its own loop over agcore's pieces (llm messages and
// requests, tool definitions and approval marks, compact.Policy,
// session.Turn) rather than agent.Agent run inside the workflow: the agent
// calls models and tools directly, through goroutines, locks and
// middleware that expect a real clock, and each of those would need a
// workflow binding; the loop here is about a hundred lines whose every
// effect is visibly an activity. Its rules are the in-process loop's, from
// one place (middleware.StepLimit, StopBeforeTools, NotRun): the same step
// limit (DefaultMaxSteps, 20), and at the limit, or after an answer cut off
// by the output limit, the calls are answered without running and the turn
// ends, stored, with llm.FinishMaxSteps (or FinishLength) in
// TurnResult.FinishReason. The adapter, the tools and the store are
// resolved on the worker from names ([Options]: Models by name, Tools by
// name); a workflow's input and history carry data only, never code or
// keys.
//
// # Determinism
//
// The workflow reads time with workflow.Now (the stored turn's time),
// waits with workflow.Await and AwaitWithTimeout (durable timers), fans
// out with activity futures collected in call order, and never ranges over
// a map to produce output (decisions are looked up by call id; pending
// approvals are a slice). Ids are the caller's (turn id) or the model's
// (call ids), so no random id is made in the workflow. Temporal's
// workflowcheck linter runs in CI over the package; the budget policy is
// the one call it is told to ignore, for two reviewed false positives
// (reflect.DeepEqual over maps and logging into a discarding handler).
// Replay tests replay committed histories (testdata/history-*.json:
// a tool loop, an approval, a rate-limited retry, a session continuing as
// new), so a change that would break running turns fails the tests.
//
// # Retries
//
// agcore's retry middleware is not used: Temporal's retry policy owns
// retries. A model call's error is classified by [ModelError]: a rate
// limit (HTTP 429) is retried, after the provider's Retry-After when it
// sent one (the activity error's NextRetryDelay); other retryable kinds
// (server errors, overload, lost connections, idle timeouts) are retried
// with exponential backoff; every other kind (400, 401, context length) is
// non-retryable. A model call heartbeats on a timer, so a worker that dies
// mid-stream is noticed after Timeouts.Heartbeat and the call is retried
// on another worker. A tool's error is a result the model reads, never a
// retry; an error wrapping tool.ErrFatal fails the turn; a tool call
// interrupted by a crash is retried (at least once: a tool with external
// effects should be idempotent; its activity id, tool-STEP-CALLID, is the
// same on every attempt).
//
// # Approvals
//
// A call to a tool.Approvable tool that needs approval parks the turn in
// the workflow, never in an activity: the batch's pending calls are
// readable by the [PendingQuery] query ([Pending]), and each decision is
// sent by the [DecideUpdate] update ([Decide]), whose validator rejects a
// call id the turn is not waiting on ([ErrUnknownCall]). With
// TurnInput.ApprovalTimeout, a durable timer denies calls still undecided.
// A denied call is an error tool result the model reads; the others of the
// batch run once every decision is in.
//
// # Live output
//
// Workflow history is not a stream, so a model call publishes its text as
// it arrives to a side channel, [Live]: [RedisLive] appends to a Redis
// stream per turn (key [StreamKey](workflow id)), each event tagged with
// the step and the activity attempt; a retried call first publishes a
// reset. [Watch] reads a stream ([Follow] until the turn has ended, then
// to its end without waiting) and [Transcript] keeps, per step, only the
// newest attempt's text, so a reader drops the partial text of a failed
// attempt. Live output is best effort and can be off (Options.Live nil).
//
// # Payloads and history size
//
// A payload over 256 KiB (a long tool result, a long history in a model
// call's request) does not go into workflow history: [ClaimCheck], a
// converter.PayloadCodec, stores it in a [BlobStore] ([FileBlobs],
// [RedisBlobs]) under its SHA-256 and puts the reference in history.
// Clients and workers must use the same codec and store. Measured on a
// dev server: a turn whose tool returned 630 KiB (which then travels in the
// tool's result, the next model call's request and the turn's result) kept
// 5.6 KB of history.
//
// Per turn, history holds about 6 events per activity (3 for the activity,
// 3 for the workflow task that follows it): a turn of N model calls and T
// tool calls in sequence has about 6(N+T+2)+5 events. Measured: a turn of
// three tool calls (four model calls) is 59 events and 13.8 KB. The bytes
// are dominated by the model calls' inputs, each holding the whole request
// (the session's history included): a turn costs about N × the request's
// size plus the results, which is why the claim check exists; a session
// with a long history should rely on the budget policy and the claim check
// rather than on Temporal's 50 MB history limit.
//
// # Guarantees
//
//   - A turn runs at most once per (session, turn) id, and completes despite
//     worker crashes as long as some worker comes back.
//   - A tool call whose activity completed is never executed again; one
//     interrupted by a crash is executed again (at least once).
//   - The turn is appended to its session exactly once: the append is keyed
//     by the turn id, and session stores ignore a turn id they hold.
//   - A pending approval waits as long as the workflow does (with no
//     timeout, indefinitely), costing no worker.
//   - Live output may lose or repeat text; the workflow's result is the
//     answer.
//
// [SessionWorkflow] optionally serializes a session's turns in one
// long-lived workflow: turns arrive by the [TurnUpdate] update and run as
// child turn workflows one at a time; it continues as new after
// SessionInput.TurnsPerRun turns or when the server suggests it.
//
// Package agtemporal imports agcore's llm, tool, compact, session and agent
// (for ContextProvider), go-redis and the Temporal SDK. Nothing in agcore's
// own module may import it: that would put the SDK in agcore's go.mod (the
// agcore command runs agcore-temporal as a separate executable instead).
package agtemporal
