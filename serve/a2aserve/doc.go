// Package a2aserve serves agcore agents over the Agent2Agent (A2A) protocol,
// JSON-RPC transport, with the official A2A Go SDK,
// github.com/a2aproject/a2a-go at v0.3.3 (A2A protocol 0.3.0). The SDK's
// newer major version, a2a-go/v2, is not used: this project's module proxy
// does not serve it. The SDK does the protocol (JSON-RPC, SSE, task
// bookkeeping, event queues); this package supplies the agent executor, the
// agent cards and the task store.
//
// # Endpoints
//
// [New] returns one http.Handler for every agent of a host.Set; each agent
// has its own card and endpoint, and the first agent of the set is also the
// server's default:
//
//	GET  /.well-known/agent-card.json             card of the default agent
//	GET  /a2a/{agent}/.well-known/agent-card.json card of {agent}
//	POST /a2a/{agent}                             JSON-RPC endpoint of {agent} (the card's url)
//
// So a client given the server's URL finds the default agent, and one
// given ".../a2a/{agent}" finds that agent (the SDK's card resolver
// appends the well-known path to the URL it is given). A card names the
// agent, its description, the JSON-RPC URL (from Options.BaseURL, else
// from the request's Host), capabilities.streaming = true, text in and out
// (and JSON data in), one skill (the agent, its model and tools as tags),
// and, when Options.BearerAuth is set, a bearer security scheme that every
// call requires. The handler itself authenticates nothing: package serve's
// authentication layer in front of it labels each request with its
// principal (host.WithPrincipal).
//
// # What maps to what
//
//   - A task is one agent turn (one agent.Run). The task id is the run's
//     approval owner (approval.Owner.Run) and the principal of the request
//     that started it (host.PrincipalFrom) owns it.
//   - The context id names an agcore session of the principal
//     ([SessionID]): tasks of one principal sharing a context id continue
//     one session, so each turn sees the previous ones. The context id is
//     taken in the principal's namespace (host.SessionName: the id itself
//     without tokens, "PRINCIPAL.id" with them); a name that
//     session.ValidateID accepts (the SDK's UUIDs are) is the session id
//     itself, any other is mapped to "a2a-" and 32 hex digits of its
//     SHA-256. Without a context id the SDK makes one. The turn loads and
//     appends through host.Sessions, the server's one authorization
//     point, so the session belongs to the principal.
//   - A new context from a task: a message that starts a task in a
//     context with no session yet (no context id, or a new one) and names
//     a completed task of the principal's in referenceTaskIds begins that
//     context as a branch (session.Fork) of the task's session up to and
//     including the task's turn; the task's own context is unchanged.
//     The fork point is exact: a task records the number of its turn in
//     its session when the turn is stored (session_turn in its
//     [MetadataKey] metadata), and the fork is refused when that turn no
//     longer begins with the task's first message and ends with its
//     answer (the session was deleted and the context reused). A task
//     stored before the number was recorded falls back to a match by
//     content, the latest turn that begins with the task's first message
//     and ends with its answer (of two identical turns, the later). A
//     reference to a task that is unknown, another principal's or not
//     completed rejects the new task. In the task's
//     own context, or one that has a session, the reference changes
//     nothing (a refinement, as A2A's life of a task has it).
//   - A context id is not a capability: the context id of another
//     principal's session, sent by anyone else, names a session of the
//     sender's own (a new one the first time), and reveals nothing of the
//     other: no history, no error that tells it exists.
//   - The message's parts become one user message: text parts as text,
//     data parts as their JSON, file parts as images (image/* types) or
//     files, inline or by URL.
//   - The answer streams as one artifact named "answer": each text delta
//     is an artifact-update event appending to it (deltas that arrived
//     together are merged); when the turn succeeds a last event
//     (lastChunk = true, append = false) replaces the artifact with the
//     final answer alone, so the stored task holds exactly the answer,
//     without the text the model wrote before its tool calls. A streaming
//     client shows the deltas as they come and takes the last chunk as the
//     answer; a message/send client reads task.artifacts. (Status messages
//     would have carried the deltas too, but each one lands in the task's
//     history.) Thinking and tool results are not sent; each tool call is a "working" status
//     message with a data part {"tool", "call_id", "arguments"}.
//   - The completed status update, and so the task's metadata, and the
//     answer artifact carry the turn's usage, cost, model, session, run
//     id and number in its session under [MetadataKey].
//
// # States
//
// A task goes submitted → working → completed, or failed (the turn's
// error, in the status message), or rejected (a message with no usable
// part), or canceled (tasks/cancel), or input-required (below) and back to
// working. A failed or canceled turn stores nothing: the agent persists a
// turn only when it succeeds.
//
// # Approval
//
// A call of a tool that needs approval parks in the approval.Broker given
// to New (it must be the agents' Approver). The task then ends its
// exchange in the input-required state, with a status message naming each
// waiting call (a text, and a data part {"approvals": [{"approval_id",
// "tool", "call_id", "arguments"}]}); the turn stays alive, waiting. A
// follow-up message on the same task (message.taskId set) decides: a data
// part {"approval_id": ..., "approved": true|false, "reason": ...} (without
// approval_id it decides every waiting call), or a text whose first word
// is approve (yes, ok) or deny (no, reject), the rest being the reason.
// The turn then goes on, in that message's response or stream, to its
// end. A message that decides nothing leaves the task input-required, with
// a status message saying how to answer. Only the principal that started a
// task may decide, read (tasks/get), cancel or continue it: to any other
// the task does not exist. tasks/cancel cancels the turn's context,
// whether it runs or waits, and waits (Options.CancelWait) for it to end.
//
// A turn waiting for a decision holds its session (a later turn of the
// same context waits for it) until it is decided, cancelled, or denied by
// the broker's Timeout; set one. A turn the Timeout denied goes on with
// nobody following it, and writes its end into the stored task.
//
// # Tasks in the store, several processes
//
// When an agent's session store has records (session.RecordsOf; every
// agcore store has them), its tasks are kept there, with their owners:
// every server over the store answers tasks/get, and a restart loses
// none. A task is written at every change of state; while it works, its
// streamed answer is written at most every 250 ms. The process running a
// task's turn holds a lease on it (15 s, renewed): a task that is not
// over while nobody holds its lease lost its turn with the process that
// ran it, and reads as failed (the session has nothing of that turn).
//
// A message deciding the approvals of a task whose turn runs in another
// process is taken by any process: the decisions go through the broker,
// which must share its calls through the same store (approval.Broker's
// Shared, host.Approvals), and the running process picks them up. The
// message's response (or stream) is then the task as stored once it rests
// again (completed, failed, or input-required with the next calls), polled
// every 250 ms and sent as one task event, not as streamed deltas. A turn
// whose decision arrives through another process, or another channel (the
// approvals API, the web page), writes its end into the stored task
// itself, so tasks/get shows its result.
//
// tasks/resubscribe to a task whose execution this process holds streams
// its events, as the SDK does; otherwise (the turn runs in another
// process, or its exchange here is over) it sends the stored task at once
// and again each time it changes (a task whose process was lost, failed),
// polled every 250 ms, ending when the task rests (terminal or
// input-required). tasks/cancel sent to a process that does not run the
// turn marks the task canceled and writes a cancellation into the store
// (agcore.a2a.cancel), which the process running the turn reads within
// 250 ms and cancels it there: the turn stops wherever it runs, storing
// nothing.
//
// message/send with configuration.blocking = false answers with the task
// as soon as it exists (submitted or working); the turn runs on with no
// client attached, and tasks/get, tasks/resubscribe and push
// notifications follow it from any process.
//
// # Turns run elsewhere
//
// With Options.Remote (agcore serve --temporal: a durable runner's
// workers) and tasks in the store's records, no turn runs in the serving
// process: the process that accepts a task stores it working, marked
// remote in its record (agcore.a2a.tasks/AGENT/TASK, "remote": true: no
// run lease says it is alive, and it is never read lost), hands its turn
// over as data (Remote.StartTask, a RemoteTask: the agent, the owner, the
// session, the input, the task's TaskLog), and follows the stored task
// every 250 ms, each change written as an event (the answer's growth
// alone as an artifact update, else the task): message/send
// blocking returns the task once it rests (terminal, or input-required),
// non-blocking at once, message/stream streams it. Whatever runs the turn
// turns its updates into the task with TaskEvents (working, the streamed
// answer as the artifact "answer", each tool call a working status
// message, input-required with the approval message while a call waits
// for a decision, then completed with the answer and the MetadataKey
// turn info, failed, or canceled) and writes it with TaskWriter, which
// also sends the push notifications of each change of its state (the
// configs read from the store; the operator's allowed hosts travel in
// the TaskLog; each claimed in the store, so that a retried write sends
// it once). The accepting process notifies the task's first state (and a
// cancellation it stores itself when the runner did not end the task in
// time); the SDK's own saves and notifications of a remote task are
// skipped: only what runs the turn writes and notifies it. tasks/get and
// tasks/resubscribe, on any process, read and follow the stored task as
// for any task another process runs; tasks/cancel, on any process, calls
// Remote.CancelTask and waits (Options.CancelWait) for the task to end;
// a message deciding a remote task's approvals, on any process, lists
// its waiting calls (Remote.PendingTask; each decided by its call id,
// the approval_id of the approval message) and decides them
// (Remote.DecideTask), then follows the task until it rests again. With
// a RemoteWatcher, a process that reads a remote task unfinished and
// unchanged for 5 s asks whether its turn still runs (at most once per
// 5 s per task and process): a turn that ended without writing the task's
// end (a workflow terminated, timed out) leaves the task failed, stored
// so by that process, which sends the task's push notifications of that
// change as for any other (its configs read from the store, each claimed
// there first, over its own Options.PushAllowHosts). A task the runner
// has no run for (ErrRemoteNotFound: the accepting process died before
// the hand-over, or the runner's history of it was purged) is left
// failed so too once its status is older than 2 minutes, longer than a
// hand-over may take.
//
// # Push notifications
//
// The cards say capabilities.pushNotifications = true. A task's owner
// sets, gets, lists and deletes its webhooks
// (tasks/pushNotificationConfig/set, get, list, delete; or
// configuration.pushNotificationConfig of message/send), kept with the
// task (agcore.a2a.push/AGENT/TASK/CONFIG in the records, or in memory);
// anyone else is told the task does not exist. The process that writes a
// change of the task's state (the one running the turn, or the one
// answering a decision sent to it for a turn running elsewhere) POSTs
// the task (JSON) to each webhook, read from the store at that change
// whichever process set it; a change two processes write is sent once
// (claimed in the records first, agcore.a2a.pushed). In order, with the config's token in X-A2A-Notification-Token
// and its credentials (Bearer or Basic) in Authorization, in the
// background (the turn never waits for a webhook), each notification
// tried up to 6 times with exponential backoff from 0.5 s, redirects not
// followed. A webhook URL must be http or https, and its host must not
// be or resolve to a private, loopback, link-local, multicast or
// unspecified address (server-side request forgery): such a URL is
// refused when set, and each connection's address is checked again as it
// is dialled, unless the operator allows the host
// (Options.PushAllowHosts, agcore serve --a2a-push-allow-host). A task
// read failed after its process was lost is not notified (nothing writes
// that change: it is read so).
//
// # Limits
//
//   - With a store without records (a store of the user's own), tasks live
//     in memory, in a store of this package (at most Options.MaxTasks; the
//     oldest finished ones are forgotten first): they do not survive a
//     restart, and a turn the broker's Timeout denied shows its result
//     only when the task's next message collects it. A turn in progress or
//     waiting at a restart is lost; its session has nothing of it.
//   - A remote task (Options.Remote) is written only by what runs its
//     turn: a follow-up message (a decision) reaches the turn but is not
//     added to the stored task's history; the server's replay records
//     (host.BeginTurn; agcore serve --record-dir) keep nothing of its
//     turn; and a task whose runner never takes it up stays working
//     until it is cancelled, or, with a RemoteWatcher, until a process
//     reads it more than 2 minutes after its last change (then failed). A
//     task ended because its run ended is stored failed by a process
//     that reads it: with no reader (no tasks/get, no follower, no
//     resubscription) it stays working, and its webhooks are told
//     nothing. A message/stream of a remote task
//     streams the stored task as it changes, read every 250 ms: the
//     answer's growth as appending artifact-update events, any other
//     change as the task itself (not each delta as it is made).
//   - The authenticated extended card and the gRPC and HTTP+JSON
//     transports are not offered.
//   - a2a-go v0.3.3 answers a successful tasks/pushNotificationConfig/delete
//     with an empty body; the handler writes the JSON-RPC response
//     (result null) itself.
//   - a2a-go v0.3.3 forgets an execution that ended input-required a moment
//     after its client has the final event; a decision that arrives in that
//     window is retried for up to two seconds, and a cancellation waits
//     for the SDK to let go of the execution (the SDK would send it into
//     the ended execution, where it fails).
//
// Package a2aserve imports agent, approval, llm, session, tool, serve/host
// and serve/internal/ratelimit of agcore; nothing in agcore imports it but
// package serve, the command, the examples and the temporal module (whose
// workers write remote tasks).
package a2aserve
