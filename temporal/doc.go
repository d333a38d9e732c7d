// Package agtemporal runs agcore turns as Temporal workflows: durable runs.
// A turn survives a crashed worker, a tool call that completed is never run
// again, and a call that needs approval can wait for days without holding a
// process. It is built on Temporal itself (go.temporal.io/sdk): the server
// keeps the turn's history, the SDK replays it, nothing here re-implements
// either.
//
// The package lives in its own module (github.com/agcore/agcore/temporal),
// so agcore's go.mod never carries the Temporal SDK. Its command,
// agcore-temporal (worker, run, approve, serve-runner), is what `agcore
// worker`, `agcore approve`, `agcore run --temporal` and `agcore serve
// --temporal` execute.
//
// # One agent, durable or not
//
// A turn is one workflow, [TurnWorkflow], id [TurnWorkflowID](session, turn),
// and the workflow runs agcore's agent itself: the turn's agents, sent as
// data in [TurnInput].Agents ([agent.Spec]: instructions, the provider and
// model by name, tool names, handoffs, agent tools, limits, guardrails,
// compaction), are built with agent.New inside the workflow
// (agent.FromSpecs, Spec.Apply: the same calls an in-process driver
// makes), and the turn is agent.Agent.Run, or structured.Run for a turn
// with a Schema. No rule of the tool loop, handoffs, sub-agents, spending
// limits, guardrails, hooks, the compaction view or approvals is written
// in this package: a feature added to the agent works durably the day it
// lands, and the contract suite (contract_test.go) runs each behaviour on
// both drivers and checks that they send the same requests and store the
// same turn.
//
// Of the two designs the peers suggest (a pure step function both drivers
// call, or the agent's own code made deterministic behind seams), this is
// the second: the agent already takes every source of nondeterminism as a
// replaceable dependency (DESIGN.md's seams), so binding them to workflow
// primitives (bind.go) was smaller and safer than rewriting the loop as a
// state machine, and it keeps the in-process loop exactly as fast as it
// was:
//
//	seam (agent.Config)        in-process default       in a TurnWorkflow
//	-------------------------  -----------------------  -----------------------------------
//	Clock                      the wall clock           workflow.Now, workflow.Sleep
//	Runner (parallel calls)    goroutines               workflow.Go coroutines, a WaitGroup
//	NewID (run ids)            random                   the turn id, then turn id + count
//	Hooks.Timeout              a goroutine and a timer  -1: inline (activities bound them)
//	Retry                      the retry middleware     off: Temporal's retry policy
//	the model                  the adapter              a Model activity per call
//	Tools                      the tools                a Tool activity per call
//	Store                      the store                Load and Persist activities
//	Providers                  the providers            Provide activities (Invoking, Invoked,
//	                                                    ToolsNow before each model call after the first)
//	named Hooks                the hooks                a Hook activity per hook run
//	Approver                   a person, a broker       the workflow: Query, Update, timer
//
// Every effect is an activity run by a worker, which resolves what the
// input names ([Options]: models by name or made by Options.NewModel, tools
// by name, the store, the context providers, the hooks); a workflow's input
// and history carry data only, never code or keys. A sub-agent (an agent
// tool) runs inside the turn, its calls activities of the same workflow
// and its transcript its own session, as in-process. Input guardrails run
// before the turn's first model call (an in-process agent may run them
// beside it): a tripped durable turn never calls the model.
//
// Tools that change while a turn runs (an MCP server's tools/list_changed)
// reach the turn's next model call, as in-process: a worker's context
// provider whose agent.Injection has ToolsNow is asked for its tools again
// before each model call after the first, a Provide local activity whose
// answer (the tools' specs) is recorded in history, so the step's tools
// replay (toolsnow.go, behind workflow.GetVersion "agcore.tools-now").
// [Options].ToolsNow gives the worker's tools as they are now, for the
// description, the providers' tools and each Tool activity; the
// agcore-temporal worker sets it, and such a provider, for its MCP
// servers.
//
// # Versions
//
// Turns started by agcore before this design ran their own loop, which
// stays registered, frozen, as [TurnWorkflowV1] under its old name
// ([TurnWorkflowV1Name]), so they finish on a new worker; new turns start
// [TurnWorkflowName]. [SessionWorkflow] picks the child's name behind
// workflow.GetVersion. From now on every change to a workflow's commands
// goes behind workflow.GetVersion, and the replay tests replay the
// committed histories of both versions (testdata/history-v1-*.json,
// testdata/history-v2-*.json).
//
// # Determinism
//
// The agent's code runs in the workflow: its clock, coroutines and ids are
// the seams above, its maps are never ranged to produce output, and its
// effects are activities. Temporal's workflowcheck linter runs in CI over
// the package; it cannot see that the seams replace the in-process
// defaults (it reports the goroutine of tool.GoRunner, the hooks' timers,
// encoding/json's reflection), so the call into the agent carries a
// reviewed //workflowcheck:ignore, and the replay tests over committed
// histories check the determinism instead.
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
// A call to a tool.Approvable tool that needs approval waits in the
// workflow (the turn's tool.Approver), never in an activity: the pending
// calls are readable by the [PendingQuery] query ([Pending]), and each
// decision is sent by the [DecideUpdate] update ([Decide]), whose validator
// rejects a call id the turn is not waiting on ([ErrUnknownCall]) or has
// decided. Each call of a batch waits on its own coroutine. With
// TurnInput.ApprovalTimeout, a durable timer denies a call still undecided;
// TurnInput.ApproveAll approves every call (agcore run --yes). A denied
// call is an error tool result the model reads. An MCP server's request
// for input during a tool activity ([Elicit], which the worker gives its
// MCP servers) is filed with the workflow by the [ElicitUpdate] update and
// waits among the same pending decisions (tool [ElicitationTool], its
// arguments the server, the message and the requested schema): approving
// accepts with the decision's content ([Decision].Content, `agcore approve
// --content JSON`) over the form's defaults, denying declines. The
// validator refuses content that does not fit the schema (a required
// field without a default left out included) or that answers no form
// ([ErrTypeFormContent]; [Decide]'s error matches mcp.ErrFormContent), and
// the request goes on waiting.
// The calls of a background response of agcore serve --temporal are
// addressed by its response id ([PendingResponse], [DecideResponse]: a
// turn that is over waits on nothing), which serve-runner answers for
// the servers' GET and POST /v1/approvals.
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
// # Background responses of agcore serve
//
// With TurnInput.Response set (agcore serve --temporal, through
// agcore-temporal serve-runner and [StartResponse]), the turn is a
// background Responses turn of the serving processes: its updates go,
// through serve.ResponseEvents (serve's own translation, with ids made
// from the turn id), to a buffer in the workflow that a coroutine writes
// to the serving processes' event log by an activity, at most once per
// [EventsFlushInterval] of workflow time; after the turn, a last activity
// writes the outcome (serve.FinishResponse: the response's record, then
// the final events), on a disconnected context, so a turn cancelled by
// [CancelResponse] (POST /v1/responses/{id}/cancel on any replica) still
// ends its response "cancelled". The worker's Store must be the servers'.
// With TurnInput.AGUI set instead ([StartAGUI], workflow id
// [AGUIWorkflowID]), the turn is an AG-UI run of the serving processes,
// written the same way with serve.AGUIEvents (agui.go: the workflow picks
// the translator from its input) and ended by serve.FinishAGUI (the final
// event, then the run's lease record deleted). A call such a run waits on
// for approval (or an MCP server's request for input, [ElicitUpdate]) is
// shown by the interrupt event agcore.approval_required,
// added by the workflow when the call begins waiting (behind
// workflow.GetVersion "agcore.agui-approval-event"), and listed and
// decided by [PendingAGUI] and [DecideAGUI] (serve's GET and POST
// /v1/approvals through serve-runner), as a response's by
// [PendingResponse] and [DecideResponse]. A workflow that ended without
// writing its outcome (terminated by an operator, timed out, failed
// before its last activity) is found by the serving processes: they ask
// serve-runner for its status (DescribeWorkflowExecution) through
// serve.RemoteWatcher, and end its response failed, or its AG-UI run with
// RUN_ERROR, themselves.
//
// With TurnInput.A2A set ([StartA2A], workflow id [A2AWorkflowID]:
// agcore-a2a/AGENT/TASK), the turn is an A2A task of the serving
// processes: the same workflow, its updates turned into the task's
// progress by a2aserve.TaskEvents (status timestamps from workflow.Now,
// ids from the turn id) and each change of the task buffered as one
// event; the A2ATask activity writes the last change of each batch into
// the task's record (a2aserve.TaskWriter, which also sends the push
// notifications of each change of state) at most once per
// [EventsFlushInterval], and the final task after the turn (completed,
// failed, or canceled: [CancelA2A]). A call the task waits on makes it
// input-required (its status message names the call, decided by its call
// id), listed and decided by [PendingA2A] and [DecideA2A].
//
// With TurnInput.Web set ([StartWeb], workflow id [WebWorkflowID]:
// agcore-web/PRINCIPAL/SESSION/RUN), the turn is a chat turn of the
// serving processes' web page, written the same way with web.ChatEvents
// (web.go: the page's own events, those a turn of the server streams) and
// ended by the WebEnd activity (web.FinishChat: the final event, finish
// with the session's totals or error, then the turn's run record
// deleted). [CancelWeb] (the page's POST /api/sessions/{id}/cancel on any
// replica) ends it with the error of a stopped turn, its open tool calls
// answered. A call it waits on for approval is shown by the page's
// approval event (id RUN/CALL_ID), added by the workflow when the call
// begins waiting, and listed and decided by [PendingWeb] and [DecideWeb]
// (the page's /api/approvals through serve-runner).
//
// [SessionWorkflow] optionally serializes a session's turns in one
// long-lived workflow: turns arrive by the [TurnUpdate] update and run as
// child turn workflows one at a time; it continues as new after
// SessionInput.TurnsPerRun turns or when the server suggests it.
//
// Package agtemporal imports agcore's agent (and what it builds on:
// llm, tool, middleware, compact, budget, session, structured, replay),
// serve (the Responses events of a background response, the AG-UI
// events of a run), serve/web (the page's events of a chat turn),
// serve/a2aserve (an A2A task's progress),
// go-redis and the Temporal SDK. Nothing in agcore's
// own module may import it: that would put the SDK in agcore's go.mod (the
// agcore command runs agcore-temporal as a separate executable instead).
package agtemporal
