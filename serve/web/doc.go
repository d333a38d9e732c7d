// Package web serves agcore's web page and its JSON API: pick an agent,
// talk to it with streamed text, thinking and tool calls, approve or deny
// the calls that need it, and browse, continue and delete sessions.
//
// [New] returns an http.Handler that package serve mounts at "/" behind
// its authentication layer (which labels each /api/ request with its
// principal, host.WithPrincipal). The page is plain HTML, CSS and
// JavaScript modules embedded in the binary: no build step, nothing
// fetched from anywhere but this server.
//
// # Routes
//
// Every API response is JSON ({"error":{"message":...}} with a 4xx or 5xx
// status on failure) except the chat stream. NAME is an agent's name; an
// empty or absent agent means the set's default (its first).
//
//	GET    /                          the page and its files (index.html, style.css, js/*.js)
//	GET    /api/agents                {"agents":[{name, description, model, sessions, default}]}
//	GET    /api/sessions?agent=NAME[&cursor=C]
//	                                  {"sessions":[SESSION], "next": C}: newest first, Options.ListLimit a page
//	GET    /api/sessions/{id}?agent=NAME
//	                                  SESSION with "items": the stored transcript as ITEMs
//	DELETE /api/sessions/{id}?agent=NAME
//	                                  {"deleted": id}; 404 when there is no such session
//	POST   /api/sessions/{id}/fork?agent=NAME
//	                                  body {"turns": N}: 201 {"session": NEW, "turns": N}, a new session
//	                                  of the principal's with the first N turns (session.Fork), the
//	                                  original unchanged; 409 when the history cannot be cut there
//	POST   /api/chat                  body {"agent", "session", "message"}: one turn, as an event stream
//	GET    /api/approvals             {"approvals":[APPROVAL]}: calls waiting, of this principal's turns
//	POST   /api/approvals/{id}        body {"approved": bool, "reason": string, "content": object}; 404 for an id not
//	                                  waiting or of a turn another principal started; 400 for content
//	                                  that does not fit (mcp.CheckDecision)
//
// SESSION is {id, agent, title (the first user text), model (the session's
// own: the model that answered its last turn; absent when the store kept
// none), turns, messages, usage, tokens, cost_usd, created_at,
// updated_at}; its tokens and cost are summed over the stored turns.
// Listing reads the stores' session metadata (session.Info) only, no
// session. APPROVAL is {id, tool_call_id, tool, input, agent, session,
// since}.
//
// # The chat stream
//
// POST /api/chat runs one turn on the session named by "session" (empty:
// a new one, session.NewID; a session that is not the principal's, or does
// not exist, is 404) and answers with text/event-stream. Each event
// is "event: TYPE" and "data: ITEM", ITEM being a JSON object whose "type"
// is TYPE:
//
//	session      {session, agent, model, run}: first, always; run prefixes the turn's approval ids
//	text         {text}: a delta of the answer
//	thinking     {text}: a delta of the model's visible reasoning
//	tool_call    {id, name, input}: a whole tool call
//	approval     {id, tool_call_id, name, input, schema}: the call waits for POST /api/approvals/{id}
//	             (schema: an MCP server's form, tool mcp_elicitation, whose approval carries content)
//	tool_result  {tool_call_id, text, is_error}
//	handoff      {from, agent}: the turn passed from the agent from to agent
//	sub_agent    {agent, tool_call_id, sub}: an event of the sub-agent agent run by the
//	             tool call tool_call_id (agent.AsTool); sub is a text, thinking,
//	             tool_call, tool_result or handoff ITEM of its own
//	usage        {usage}: the current model call's usage so far
//	finish       {session, model, usage, cost_usd (when known), finish_reason,
//	              session_usage, session_cost_usd, session_turns (the totals once stored),
//	              budget (what is left of the turn's spending limits, when it has some),
//	              message (when the turn could not be stored)}: last, on success
//	error        {message}: last, on failure (after finish for a turn a spending
//	              limit stopped: what it did is stored)
//
// A stored transcript (GET /api/sessions/{id}) uses the same ITEM shapes,
// plus {"type":"user","text","turn"} for the user's messages (turn: the
// number of the turn the message begins, when every turn begins with
// one) and a handoff item
// where the answering agent changes (session.Agents); it holds no usage
// per turn, only the session's totals. A block the page does not show (an
// image, a file) is named in brackets: "[image]".
//
// Each user message of the page has Edit and Regenerate buttons: both
// branch the conversation before the message's turn (POST
// /api/sessions/{id}/fork with the turns before it, or a new chat before
// the first) and send the message there, edited or as it was; the
// original session is kept, in the sidebar.
//
// The page also polls GET /api/approvals every few seconds and lists, in
// its sidebar, the calls of the principal's other turns waiting for a
// decision (a turn started through the OpenAI-compatible API, say), with
// their own Approve and Deny buttons.
//
// # Turns that outlive the page
//
// When the agent's store has records (session.RecordsOf), a turn is not
// its connection: a page that goes away (a reload, a closed tab, a lost
// network) leaves it running, its events kept in an event log in the
// store (package runlog, the "user" item first) and a record saying it
// runs (agcore.web.runs/PRINCIPAL/SESSION, a 10 s lease its process
// renews). So, on any server over the store:
//
//	GET  /api/runs?agent=NAME                {"runs":[{session, agent, run, started}]}: the principal's running turns
//	GET  /api/sessions/{id}/run?agent=NAME[&after=N]
//	                                         the running turn's events from the first (after event N),
//	                                         then as they come, to the last (SSE, "id: N" on each); 404 when none runs
//	POST /api/sessions/{id}/cancel?agent=NAME
//	                                         stops the running turn wherever it runs (within 250 ms); 404 when none runs
//
// The page remembers the open session for the tab (sessionStorage):
// reloaded, it reopens it and follows its running turn; the sidebar
// badges the sessions with a turn running, and opening one follows it; the
// Stop button stops the turn on the server. A turn whose server dies is
// not stored, and a page following it gets an error event once its lease
// passed. Without records the run's context is the request's: a client
// that goes away cancels the turn, as nobody could reattach. A stopped,
// drained or cancelled turn is not stored.
//
// # Turns run elsewhere
//
// With Options.Remote (agcore serve --temporal), a turn of an agent whose
// store has records runs in another process, which outlives the one that
// accepted it: a durable runner's workers. The accepting process records
// the turn as running with the record marked remote (no process renews
// it: it lasts the event log's retention), writes its first events (the
// "user" item, the session event), hands it over (Remote.StartChat, a
// RemoteChat: the agent, the message, the principal's quota, the ChatLog)
// and streams the turn to the page from the event log, as a page that
// reattaches reads it. What runs the turn makes the page's events with
// ChatEvents (the same events as a turn of this process; a call waiting
// for approval adds the approval event, ApprovalRequired) and ends it with
// FinishChat (the final event, finish with the session's totals or error,
// then the run record deleted). So the accepting process may die
// mid-turn: the page on any server over the store lists it, follows it to
// its end and stops it (POST /api/sessions/{id}/cancel asks
// Remote.CancelChat: the turn ends with the error of a stopped turn, its
// open tool calls answered by tool_result items marked is_error, nothing
// stored). When the Remote implements RemoteApprovals, GET /api/approvals
// lists the calls those turns wait on (of the principal's remote turns,
// asked each at once, 5 s at most each) and POST /api/approvals/{id}
// decides them, on any server, for the turn's principal only. A stream
// read from the event log (a remote turn's, a reattached page's) sends
// the heartbeat comment too when idle.
//
// A remote turn whose run ended without writing its end (a durable
// runner's workflow terminated, timed out or failed before FinishChat
// ran) would stay listed as running, its followers waiting, until its
// record expired: when the Remote implements RemoteWatcher, a follower of
// such a turn quiet for 5 s, and GET /api/runs listing one at least 5 s
// old, ask it (ChatEnded; at most once per 5 s per turn and process,
// remoteended.go), and a turn whose run ended gets the end its worker
// would have written for a failed turn (ChatEvents.End: its open tool
// calls answered, then the error event, the runner's reason its message)
// and its run record deleted while it names the turn; GET /api/runs no
// longer lists it. A turn the runner has no run for (ErrChatNotFound: the
// accepting process died before the hand-over, or the runner's history
// of it was purged) ends so too once its record is older than 2 minutes,
// longer than a hand-over may take. A log the worker ended meanwhile is
// kept.
//
// The run is labelled with approval.WithOwner (agent, session, a
// run id of its own, and the principal) so only the principal that started
// a turn may decide its calls; approval.WithNotify turns a parked call into
// the approval event. An idle stream sends an SSE comment every
// Options.Heartbeat.
//
// # Security
//
// State-changing requests (POST, DELETE) must carry the header
// "X-Agcore-CSRF: 1" ([CSRFHeader]), which a cross-site form cannot send
// and a cross-site script cannot send without a CORS preflight (never
// granted); a request with an Origin header must come from the request's
// own origin (or one of Options.Origins), and one marked Sec-Fetch-Site:
// cross-site is refused. Bodies must be application/json and at most
// Options.MaxBodyBytes. Refusals are 403, 415 and 413.
//
// Every response carries a strict Content-Security-Policy
// ([ContentSecurityPolicy]: default-src 'self', no inline script, no
// framing) and nosniff. The page writes model and tool output only with
// textContent, never as HTML; the small Markdown subset it renders in
// answers (paragraphs, headings, lists, code, bold, emphasis; no links or
// images) is built element by element from text nodes. When the server answers 401 the page asks
// for a bearer token once, keeps it in sessionStorage (this tab only) and
// sends it as "Authorization: Bearer" on its API calls; the handler itself
// authenticates nobody and trusts host.PrincipalFrom.
//
// Sessions belong to principals: every route reaches them through
// host.Sessions, so a principal lists, reads, continues and deletes its
// own sessions only, and another's id is answered as one that does not
// exist (404). Approvals are tied to the principal that started the turn.
// The chat
// stream needs a ResponseWriter that can flush (http.NewResponseController):
// middleware wrapping the handler must pass Flush through or implement
// Unwrap. A server on a loopback address without tokens should also check
// the Host header (DNS rebinding); that belongs to the server, not to this
// handler.
//
// Package web imports agent, approval, budget, llm, mcp (a form's answer
// checked), middleware, session, tool, serve/host, serve/runlog and
// serve/internal/ratelimit; it never imports package serve or a provider.
package web
