// Package serve is agcore's HTTP server as a library: [New] returns a
// [Handler] that offers agents (a *host.Set) as models of an
// OpenAI-compatible API, so that OpenAI's SDKs, and anything built on
// them, run agcore agents: the tools run on the server, the client sees
// the answer. `agcore serve` is this handler with the agents the CLI
// builds.
//
// # Endpoints
//
//	GET  /v1/models              the agents, as {"object":"list","data":[{"id","object":"model","created","owned_by":"agcore"}]}
//	GET  /v1/models/{model}      one of them
//	POST /v1/chat/completions    Chat Completions: a stateless turn
//	POST /v1/responses           Responses: a turn of a stored conversation
//	GET  /v1/responses/{id}      a stored response (see "Several processes"), while its session is the caller's;
//	                             ?stream=true&starting_after=N: a background response's events after N
//	POST /v1/responses/{id}/cancel  cancel a background response, wherever it runs
//	POST /agui/{agent}           AG-UI: one run of the agent (RunAgentInput → AG-UI events)
//	GET|POST /agui/{agent}/runs/{run}  reconnect to a run (its events again, ?after=N)
//	POST /agui/{agent}/runs/{run}/cancel  stop a run on whichever process runs it
//	GET  /v1/approvals           agcore's extension: calls waiting for the caller's approval
//	POST /v1/approvals/{id}      {"approved": true|false, "reason": "...", "content": {...}}
//	GET  /healthz                liveness: 200 while the process serves
//	GET  /readyz                 readiness: 200, then 503 once Drain began
//
// Options.A2A is mounted at /a2a/ and /.well-known/agent-card.json (the
// cards, /.well-known/agent-card.json and /a2a/NAME/.well-known/agent-card.json,
// are public), and
// Options.Web at / (its API under /api/).
//
// # Composing a server
//
// A Handler is its protocols mounted on a ServeMux ([Handler.Mux]) inside
// its layers ([Handler.Layers]); ServeHTTP serves
// Chain(h.Mux(), h.Layers()...). Each protocol is a [Protocol], the routes
// that serve it ([Handler.Health], [Handler.Models],
// [Handler.ChatCompletions], [Handler.Responses], [Handler.AGUI],
// [Handler.Approvals], and the mounted [Handler.A2A] and [Handler.Web]),
// which [Protocol.Mount] registers on any ServeMux. Each cross-cutting
// step is a [Layer], a func(http.Handler) http.Handler, outermost first:
//
//	AccessLog(logger)        one record per request, with the principal Authenticate resolved
//	Recover(logger)          a panic logged, answered 500 (or its response cut)
//	LoopbackOnly()           without tokens: only requests addressed to this machine
//	CORS(origins)            CORS headers, preflights, the origin check
//	Authenticate(Auth{...})  bearer token → principal, resolved once: put in the
//	                         context (host.WithPrincipal) and given to each Scope
//	                         (QuotaScope: the principal's spending limit)
//	LimitBody(max)           413 over the size
//
// A program composes its own server from them with [Chain]: the
// protocols it wants, routes of its own beside them, the layers it wants
// in the order it wants (see the compose example). Turns of a composed
// server run as they do in the Handler's (its Drain covers the turns of
// the protocols mounted from it).
//
// # Chat Completions
//
// The request's "model" names the agent (an unknown one is 404
// model_not_found). The request's messages are the whole history: they are
// converted to llm messages (user content as text and image_url parts,
// assistant messages with their tool_calls, tool messages by
// tool_call_id) and the agent runs them with no session; nothing is
// stored. System and developer messages become the run's instructions,
// which replace the agent's own for that turn (the client owns the system
// prompt, as with any OpenAI-compatible server). temperature,
// max_completion_tokens (or max_tokens), tool_choice and response_format
// go into the run; n must be 1.
//
// The tool loop runs on the server. The calls of the agent's own tools are
// not shown as tool_calls: an SDK would take them for calls it must run
// itself. The text of every step of the loop is the answer's content
// (steps separated by a blank line). Function tools the request declares
// ("tools") are the client's: a turn in which the model calls one ends
// there, with those calls as tool_calls and finish_reason "tool_calls",
// and the client sends their results in its next request, as with OpenAI.
//
// With "stream": true the answer is chat.completion.chunk events, the last
// "data: [DONE]"; stream_options.include_usage adds a chunk with no
// choices and the turn's usage (summed over the loop's model calls) before
// it. The model's thinking is sent as "reasoning_content" deltas (and the
// message's reasoning_content), the field DeepSeek's API uses, which
// clients that do not know it ignore. A failure after the stream began is
// sent as a data event {"error": {...}} before the stream ends, which the
// SDKs raise as an API error.
//
// # Responses and sessions
//
// A Responses turn is stored in a session of the agent's store (host.Agent's
// Store) unless "store" is false. The response id names the session and the
// turn: resp_SESSION_N is turn N of session SESSION. So:
//
//   - no previous_response_id and no conversation: a new session;
//   - previous_response_id: the turn continues that response's session
//     when the response is the session's latest turn. A response that is
//     not the latest (the conversation went on from it) branches the
//     conversation there, as OpenAI's API does ("regenerate", "edit an
//     earlier message"): a new session (session.Fork) with the turns up
//     to that response, the principal's, in which the turn is the next
//     (resp_NEW_N+1); the original is unchanged. A history whose turns
//     do not each begin with a user message cannot be branched (409
//     previous_response_not_latest, naming the latest). An id that is no
//     stored turn is 404 previous_response_not_found;
//   - conversation ("ID" or {"id": "ID"}): the session ID itself, made on
//     first use, each turn continuing its latest (on a server with tokens
//     the session is PRINCIPAL.ID, host.SessionName: each principal names
//     its own conversations);
//   - "store": false: the turn sees the history of previous_response_id or
//     conversation, but nothing is stored, and its random id cannot be
//     continued.
//
// A response id of a session that is not the principal's is answered as
// one that does not exist (404 previous_response_not_found, or
// response_not_found for GET), never 409. Turns of one session are run one
// at a time, also across processes sharing the store. "instructions" (and the text
// of system and developer input items) replace the agent's instructions
// for the turn; "input" is a string or a list of items: messages (input_text,
// output_text, input_image parts), function_call and function_call_output
// items; reasoning items are skipped.
//
// The response's output lists, in order, reasoning items (the model's
// thinking as summary text), message items, and for each tool call the
// server ran a function_call item and its function_call_output item, both
// "completed". A call of a tool the request declares is a function_call
// item with no output: the client answers it with a function_call_output
// item in a request continuing this response. Streamed, the events are
// the Responses family with sequence numbers: response.created,
// response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta,
// response.output_text.done, response.content_part.done,
// response.output_item.done (reasoning items with the
// response.reasoning_summary_* events, calls with
// response.function_call_arguments.done), and response.completed with the
// usage (response.incomplete when the output limit cut the answer,
// response.failed with an error).
//
// # Background responses
//
// A Responses request with "background": true (stored, on an agent whose
// store has records) answers at once with the response "in_progress"
// and "background": true; the turn runs on with no client attached,
// started by Options.Runner (InProcess, a goroutine, by default: the seam
// where a durable runner plugs in; a RemoteRunner runs the turn in other
// processes, which write its events with ResponseEvents and its outcome
// with FinishResponse: agcore serve --temporal's workers). Its events, numbered from 0 as a
// streamed turn's are, go to an event log in the store (package runlog:
// batched, at most one write per 50 ms plus the final one, bounded by
// Options.EventLogMaxBytes, kept Options.EventLogRetention). So:
//
//   - GET /v1/responses/{id} polls it, on any process: "in_progress",
//     then "completed" (or "incomplete") with its output and usage, or
//     "failed" with its error, or "cancelled";
//   - with "stream": true the request streams its events while the client
//     stays (each encoded once, into the event log, and written to the
//     client from there); when it leaves, the turn goes on;
//   - GET /v1/responses/{id}?stream=true&starting_after=N streams the
//     events after N (all without it), on any process, while the turn runs
//     and after it ended, within the retention; it reads only the log's
//     batches that hold events after N;
//   - POST /v1/responses/{id}/cancel, on any process, stops the turn where
//     it runs (the process that runs it reads the request from the
//     store within 250 ms) and answers the response once it ended:
//     "cancelled", its output so far, every function call in it answered
//     by a function_call_output, nothing of the turn stored (the session
//     stays as it was, well-formed). Its stream ends with the event
//     "response.cancelled" (the API defines none). A response that ended
//     is answered as it is; a response that was not made in the
//     background is refused (400).
//
// The process running a background turn renews a lease in the response's
// record (10 s). When it dies, the first reader after the lease passed
// (a poll, a resumed stream, a cancel, the session's next turn) ends the
// response "failed" with the error code "replica_lost", and a resumed
// stream ends with "response.failed": never "in_progress" forever.
// Options.MaxBackground bounds a principal's background turns running at
// once, across the processes of the store (429
// too_many_background_responses). Drain treats background turns like
// the others: those still running at its deadline end "failed". A failed
// or cancelled background response keeps its id until the session's
// next turn takes the number.
//
// # AG-UI
//
// POST /agui/{agent} takes AG-UI's RunAgentInput ({threadId, runId,
// state, messages, tools}) and answers with the AG-UI events as
// server-sent events ("data: {...}"): RUN_STARTED, STATE_SNAPSHOT (the
// input's state), STEP_STARTED with the agent's name, the answer as
// TEXT_MESSAGE_START / TEXT_MESSAGE_CONTENT / TEXT_MESSAGE_END, each tool
// call the server runs as TOOL_CALL_START / TOOL_CALL_ARGS /
// TOOL_CALL_END and its TOOL_CALL_RESULT, a handoff as STEP_FINISHED of
// the agent handing over and STEP_STARTED of the one taking over, then
// STEP_FINISHED and RUN_FINISHED, or RUN_ERROR. A call that needs
// approval is an interrupt: a CUSTOM event named
// "agcore.approval_required" with {id, toolCallId, tool, arguments}; the
// run waits until the client decides it through POST /v1/approvals/{id}.
// (A CUSTOM event because the AG-UI client agcore is tested with,
// @ag-ui/client 0.0.42, defines no interrupt: its RUN_FINISHED has no
// outcome and its RunAgentInput no resume, and it strips unknown fields.
// AG-UI's later interrupt lifecycle ends the run with RUN_FINISHED
// outcome {type: "interrupt", interrupts} and resumes in the next run's
// input; agcore's run waits instead, the call in flight.)
// The thread is a session of the principal's (host.SessionName, as a
// Responses conversation): a stored thread takes only the messages after
// the last assistant message of the input (the client sends its whole
// history each run). Tools the input declares are the client's, as with
// Responses. When the agent's store has records a run outlives its
// client: its events go to the event log (package runlog) and a lease
// record (agcore.agui.runs/PRINCIPAL/RUN) says it runs, so
// POST or GET /agui/{agent}/runs/{runId}[?after=N] on any process replays
// it from RUN_STARTED (or after event N) and follows it to RUN_FINISHED
// (an AG-UI client pointed at that URL reconnects: the POST's body is
// ignored); a run whose process was lost ends with RUN_ERROR
// (replica_lost). POST /agui/{agent}/runs/{runId}/cancel, on any process,
// stops the principal's running run (agui_cancel.go): it ends RUN_ERROR
// "cancelled". Without records the run is its request's. With a
// RemoteRunner (Options.Runner) a run without the client's tools runs
// elsewhere (RemoteTurn.AGUI, remote_agui.go): this process writes its
// first events and lease record, and streams it from the log, where what
// runs it writes AGUIEvents' events and ends it with FinishAGUI; a run id
// that is running is then refused (409 run_exists).
//
// A remote turn whose run ended without writing its outcome (a durable
// runner's workflow terminated, timed out or failed before its last
// activity) would stay in progress: with a RemoteWatcher (a RemoteRunner
// that says whether a turn's run still goes on), any process polled for
// such a response, or following its log or an AG-UI run's with nothing
// new for RemoteCheckAfter, asks it (at most once per RemoteCheckAfter per
// turn and process, remoteended.go); a run that ended makes the response
// "failed" (code run_ended, the runner's reason as the message: the
// workflow's status), frees the principal's background slot and ends its
// stream with response.failed, or ends the AG-UI run with RUN_ERROR
// (run_ended). The writes are compare-and-swap: an outcome the runner
// wrote meanwhile stays. A turn the runner has no run for (RemoteEnded's
// error wraps ErrRemoteNotFound: the accepting process died between
// writing the turn's record and the hand-over, or the runner's history of
// it was purged) is not ended while young, a hand-over may be under way,
// but ends so ("the durable runner has no workflow for the turn") once
// its record is older than RemoteLostAfter: a response by its created_at,
// an AG-UI run by its lease record's expiry (a remote run's lease lasts
// the event log's retention from its creation and is never renewed, so
// the replicas must share Options.EventLogRetention; a lease within a few
// renewal periods of its expiry is a run of a process, never ended so).
//
// # Owners
//
// A session belongs to a principal: the name of the token whose turn
// created it, or the single user ("", host.Owner) on a server without
// tokens, whose principal is LocalPrincipal. Every entry point reaches
// sessions through one authorization point, host.Sessions (a
// session.Scoped store), and runs its turns with it
// (agent.RunOptions.Store), so each stored turn carries its owner and the
// store refuses an append to another's session atomically. A principal
// lists only its own sessions and never reads, continues, forks or
// deletes another's: the Responses endpoint answers another's response
// id as one that does not exist; the web page's API answers 404 for
// another's session id (for reading, deleting and chatting alike, as for
// an id that does not exist); an A2A context id names a session in the
// sender's namespace, so another principal's context id starts a new
// session of the sender's and reveals nothing (serve/a2aserve). Tasks and
// approvals are the principal's that started them. Chat Completions
// stores nothing and touches no session. Sessions an older server stored
// without an owner stay the single user's, except those of a principal's
// namespace (the Responses conversations PRINCIPAL.ID and their response
// ids), which stay that principal's. Handler.Routes lists every route;
// a test covers each.
//
// # Errors
//
// Errors have OpenAI's shape, {"error": {"message", "type", "param",
// "code"}}: 400 invalid_request_error for a request that cannot be run, 401
// invalid_api_key, 404 (model_not_found, previous_response_not_found), 409
// previous_response_not_latest (a response that cannot be branched from), 413 request_too_large, and the model
// provider's failures mapped from llm.Error: rate limits 429 (with
// Retry-After), overload 503, the server's key refused and other failures
// 502, a context window exceeded 400. Server-side failures carry a generic
// message; the details go to the Logger. No error holds a provider key, a
// base URL or the server's configuration.
//
// # Approvals
//
// Give every agent Options.Broker as its Config.Approver. A call of a tool
// that needs approval (tool.Approvable) then waits in the broker, and the
// turn's response waits with it (a stream stays open), until the principal
// that started the turn decides it: GET /v1/approvals lists that
// principal's waiting calls ({"id", "tool", "call_id", "arguments",
// "agent", "session", "run", "created"}), and POST /v1/approvals/{id} with
// {"approved": true} runs the call, {"approved": false, "reason": "..."}
// tells the model it was denied and why. Other principals see nothing and
// get 404. A client that goes away abandons the call with its turn.
//
// The turn of a background response a RemoteRunner runs waits for its
// approvals where it runs, not in the Broker: when the runner implements
// RemoteApprovals, GET /v1/approvals on any process lists those calls too
// (found through the principal's background turns in the store, then
// asked of the runner) in the same shape (id "RUN/CALL_ID"), and POST
// /v1/approvals/{id} decides them through the runner, for the turn's
// principal only. A remote AG-UI run's calls likewise, when the runner
// implements RemoteAGUIApprovals (found through the principal's AG-UI
// lease records, id "RUN/CALL_ID" with the AG-UI run id); what runs it
// shows each with the run's agcore.approval_required event
// (AGUIEvents.ApprovalRequired), as a run of this process does.
//
// An MCP server's request for input during a turn's tool call (its
// Elicitor built with mcp.AskApprover, as agcore serve's are) waits the
// same way as the tool mcp.ElicitationTool, listed with "schema", the
// requested schema. Denying declines it; approving accepts it with
// "content", the form's answer (a JSON object), over the schema's
// defaults: {"approved": true, "content": {"name": "Ada"}}. The answer is
// checked against the schema when decided: one that does not fit (a
// required field without a default left out, a wrong type, a value out
// of range) is a 400 invalid_content whose message names the field, and
// the request goes on waiting. Content on any other decision is a 400.
//
// # Several processes
//
// Servers over one store (replicas behind a load balancer) answer for
// each other when the agents' store has records (session.RecordsOf; every
// agcore store has them):
//
//   - A stored Responses turn claims its id resp_SESSION_N in the store
//     before it runs: a record created by compare-and-swap, N being the
//     session's stored turns + 1, held under a lease (10 s) the process
//     renews while the turn runs. A second turn of the session, in any
//     process, waits until the first is over, then reads the session again
//     and takes the next number, so no two turns ever share an id; the
//     claim of a process that died lapses with its lease. A turn that
//     loses its claim (its process stalled past the lease) is cancelled
//     before it stores anything. A completed turn's record becomes the
//     response object (output items, usage), which GET /v1/responses/{id}
//     answers in any process and after a restart, for 30 days, to the
//     principal that made it; a failed turn frees its id. A process killed
//     between storing a turn and its response leaves that one id
//     unanswered by GET; the conversation goes on from the turn.
//     Without records the ids are numbered in the process, and GET knows
//     the last 1,024 responses the process completed.
//   - Give Options.Broker a Shared backend (host.Approvals over the store's
//     records, as agcore serve does): /v1/approvals lists and decides the
//     calls waiting in any process, each once, and the waiting process
//     picks the decision up by polling.
//   - A2A tasks and their approvals: see package serve/a2aserve.
//
// # Security
//
// Every path under /v1/, /agui/, /a2a/ and /api/ needs "Authorization: Bearer
// TOKEN" when Options.Tokens is set; tokens are compared in constant time
// (of their SHA-256), and the token's name becomes the request's principal
// (host.PrincipalFrom). /healthz, /readyz, the agent card and the web
// page's static files are public. Without tokens every request is the
// principal "local": bind such a server to a loopback address only (agcore
// serve refuses anything else); it answers only requests whose Host is
// localhost or a loopback address (403 host_not_allowed otherwise), so a web
// page whose domain was rebound to 127.0.0.1 cannot reach it. Browser origins in Options.AllowedOrigins
// get CORS headers; a state-changing request from any other origin but the
// server's own is refused with 403, whatever its token, so a web page
// cannot drive a local server. Bodies over Options.MaxRequestBytes are
// refused with 413. The access log has method, path, status, bytes,
// duration and principal: never a header, a query or a body.
//
// # Cancellation and shutdown
//
// A turn runs with its request's context (a background turn excepted):
// a client that disconnects cancels it, the model call included, and the agent stores nothing of a
// turn that did not complete. To stop a server, call [Handler.Shutdown]
// with its http.Server: [Handler.Drain] (readiness turns 503, new turns get
// 503 shutting_down, turns in progress may finish until the context given
// ends, and are then cancelled, storing nothing; a cancelled stream still
// sends the API's failure event and the end of its body, and a client
// that stopped reading is cut off Options.DrainGrace later), then
// http.Server.Shutdown, bounded by the same grace. Drain covers the
// requests that run turns: the /v1 endpoints', every POST under /a2a/
// (whose detached tasks are told to stop through host.Stop) and the web
// page's POST /api/chat. Traces come from each agent's
// Config.Telemetry (agcore serve's --otel), one invoke_agent span per turn.
//
// Options.Quota limits what each principal spends (tokens and cost, per
// UTC day and in total), on every entry point: Authenticate's
// [QuotaScope] puts a budget.StoreQuota for the request's principal in its
// context (budget.WithQuota, the one way a run is given a quota), which
// every agent run of the request keeps. It lives
// in the store's records, shared by replicas and kept across restarts. A
// turn the quota refuses at once is a 429 budget_exceeded (type
// insufficient_quota); one it stops after some model calls is stored, and
// a Responses turn ends "incomplete" with the reason "budget" and the
// limit in its error. The Responses usage object carries "budget": what
// is left of the turn's limits (run, session, principal).
//
// Options.Records keeps a replayable record (package replay) of every
// turn, on every entry point: a scope of Authenticate puts its record
// keeping, for the request's principal, in the request's context
// (host.WithTurnHook), and each entry point calls
// host.BeginTurn before a turn, which waits for the turns before it on
// the session's record (replay.Dir.Begin) and runs the turn with the
// record in its context (replay.WithTurn), where the agents'
// replay.ContextMiddleware and ContextToolMiddleware find it. One record
// per session of a principal, one per request for a turn without a
// session; the calls of concurrent turns never mix.
//
// Package serve imports agent, approval, budget, llm, mcp (a form's
// answer checked against its schema), middleware, replay, session,
// serve/host, serve/runlog and serve/internal/ratelimit; it never imports
// a provider, a store or the CLI.
package serve
