// Package replay records the model calls of agent runs and replays them as
// regression tests, with no network and no key.
//
// A [Recorder] keeps, for each model call, the provider-neutral
// [llm.Request] as it was sent (after the budget policy, hooks and
// middleware above it) and the [llm.Response] or error that answered it,
// and the result of each tool call, in a versioned JSON Lines file (see
// [Record] for the format). Give its [Recorder.Middleware] to
// agent.Config.Middleware (below hooks and telemetry, above retries: a
// retried call is recorded once, as the adapter got it) and its
// [Recorder.ToolMiddleware] to agent.Config.ToolMiddleware; call
// [Recorder.Turn] before each run so a replay knows the turns' inputs
// (without it the recorder infers them from the requests).
//
// An agent that serves many sessions at once records each run in the
// recorder its context carries: [ContextMiddleware] and
// [ContextToolMiddleware] in its configuration, and [WithTurn] for each
// run (the turn is marked at the run's first model call). [Append]
// continues a record file; a [Dir] keeps one record per key (a server's
// session) in a directory, the runs of a key one after the other.
//
// A [Model] answers call N with recorded response N as a proper event
// stream, so an agent built over it (agent.New(replay.NewModel(rec,
// opts), cfg)) runs its loop, updates and persistence as it did live.
// Each replayed request is compared with the recorded one ([Diff]) in the
// neutral model's terms: the system prompt changed, message N differs or
// was added or removed, the tool result of call X differs, a tool was
// added to or removed from the definitions or changed, the compaction cut
// moved, a parameter (model, max tokens, temperature, response format...)
// changed. In strict mode a drift fails the call with a [*DriftError]; in
// lenient mode the recorded answer is given anyway and the drift is
// reported ([Options.OnDrift], [Model.Drifts]). Turn retries off in the
// replaying agent (agent.Config.Retry.MaxAttempts = 1): a recorded error is
// the answer the call got after its retries.
//
// Tools run for real by default; [Record.ToolMiddleware] answers the
// calls of the tools the user names from the record (matched by
// tool_call_id, else by order), and [Record.StandIns] offers the
// recorded tools the current configuration lacks.
//
// Package replay imports llm and tool only (layer 4 of ARCHITECTURE.md,
// beside middleware); it must never import agent, cmd or a provider
// adapter.
package replay
