package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// DefaultServeAddr is where agcore serve listens unless told otherwise.
const DefaultServeAddr = "127.0.0.1:8080"

func (a *app) newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve agents over HTTP: OpenAI-compatible Chat Completions and Responses endpoints",
		Long: `Serve offers the agent agcore run would build (the same provider, model,
tools, MCP servers, store, compaction and instructions), named "agcore", and
each agent of the config file's "agents" section, as models of an
OpenAI-compatible API:

  GET  /v1/models                 the agents
  POST /v1/chat/completions       a stateless turn (streamed with "stream": true)
  POST /v1/responses              a stored turn: previous_response_id and
                                  conversation continue a session
  GET  /v1/responses/{id}         a stored response (?stream=true&starting_after=N:
                                  a background response's events again)
  POST /v1/responses/{id}/cancel  cancel a background response
  POST /agui/{agent}              the AG-UI protocol: RunAgentInput in, AG-UI events out
  POST /agui/{agent}/runs/{run}/cancel  stop an AG-UI run, on whichever server runs it
  GET  /v1/approvals              tool calls waiting for your approval
  POST /v1/approvals/{id}         {"approved": true|false, "reason": "..."}
  GET  /healthz, /readyz          liveness, readiness
  GET  /                          the web page: chat with the agents, approve calls, browse sessions
  POST /a2a/{agent}               the Agent2Agent protocol (JSON-RPC); cards at
                                  /.well-known/agent-card.json and /a2a/{agent}/.well-known/agent-card.json

Tools run on the server; tools that need approval (write_file, MCP servers
with "approval") wait until the client that started the turn decides them
at /v1/approvals (or --yes approves them all).

Authentication: bearer tokens from $AGCORE_SERVE_TOKENS ("name=secret,..."; a
bare secret is named "default") or the config file's serve.tokens. Without a
token the server only listens on a loopback address. Ctrl-C (SIGINT or
SIGTERM) stops taking turns, lets those in progress finish for
--shutdown-timeout, then cancels them (nothing of a cancelled turn is
stored; its stream ends with the API's failure event) and exits at most
a few seconds later, whatever the clients do.

Config file (agcore config shows where it is):
  {"agents": {"coder": {"provider": "anthropic", "model": "sonnet", "system": "You write Go.",
                        "tools": ["read_file", "grep"], "description": "Go helper"}},
   "serve": {"addr": "127.0.0.1:8080", "allowed_origins": ["https://app.example.com"],
             "quota": {"tokens_per_day": 2000000, "cost_usd": 25}}}

Quotas ("serve.quota": tokens_per_day, tokens, cost_per_day_usd, cost_usd)
limit what each token's principal spends, on every endpoint; they are kept
in the store (--store), so replicas sharing it and restarts keep them. A
model call that could cross one is not sent: the turn fails with HTTP 429
"budget_exceeded", or, when it already made model calls, is stored and
ends "incomplete" (the Responses API) naming the limit.

Background responses: POST /v1/responses with "background": true answers at
once with the response "in_progress"; the turn runs on with no client
attached. GET /v1/responses/{id} polls it; with "stream": true its events
carry sequence numbers, and GET /v1/responses/{id}?stream=true&starting_after=N
resumes after event N on any server sharing the store, also after the end;
POST /v1/responses/{id}/cancel stops it wherever it runs (status
"cancelled", nothing of the turn stored). A server killed mid-turn leaves
its turns "failed" (code replica_lost) within 10 s. Limits:
--background-limit (default 16) background turns per principal at once
(HTTP 429 too_many_background_responses past it), --event-log-max (default
8 MiB) of stored events per turn (past it only the final event is stored),
--event-log-retention (default 24h) for the events and for failed or
cancelled background responses.

With --temporal HOST:PORT (agcore-temporal installed, as for agcore run
--temporal), every background response runs as a Temporal workflow on the
workers of agcore worker over the same --store (--namespace and
--task-queue pick them): the agent is the one agcore run --temporal runs,
its events and outcome go to the store as they come (at most one write per
50 ms per turn, plus the final one), so the server that accepted it may die
(its turn goes on) and every server over the store streams it, polls it and
cancels it; a call that needs approval waits in the workflow, listed and
decided by /v1/approvals on every server (and by agcore approve --response
RESPONSE_ID). An AG-UI run runs the same way: a call of it that needs
approval is shown on its stream by the agcore.approval_required event and
listed and decided by /v1/approvals on every server too. A response with
the client's own function tools (or a tool_choice other than auto), or an
AG-UI run with the client's tools, runs in the server as without --temporal.
The web page's chat turns run as workflows too (agents whose store has
records): the page on any server lists, follows, stops and approves them
(GET /api/runs, GET /api/sessions/{id}/run, POST /api/sessions/{id}/cancel,
/api/approvals), the server that accepted the turn being gone or not.
A2A tasks run as workflows too (agents whose store has records; workflow
agcore-a2a/AGENT/TASK): the task is stored as its workflow writes it (at
most one write per 50 ms, plus the final one; push notifications sent from
the worker), so the server that accepted it may die and tasks/get,
tasks/resubscribe, tasks/cancel and a message deciding its approvals work
on every server. A turn whose workflow ended without its outcome
(terminated, timed out), or that Temporal does not know 2 minutes after it
was recorded, ends failed on the first server that looks at it. A turn
that is its connection's (a Responses turn without background, a chat
completion) runs in the server as without --temporal.

A2A: message/send with configuration.blocking false answers with the task at
once and the turn runs on; tasks/resubscribe and tasks/get answer on any
server sharing the store, and tasks/cancel sent to any of them stops the
turn where it runs (within 250 ms). Push notifications
(tasks/pushNotificationConfig/set, get, list, delete, or the message's
configuration): every change of a task's state is POSTed to the webhook
with its token (X-A2A-Notification-Token), retried with backoff (6
attempts). Webhooks on private, loopback or link-local addresses are
refused unless --a2a-push-allow-host names their host.

Memory: a continued turn reads its conversation's view (the compacted
history its next request is built from), never the whole history. The
store (sqlite, postgres, redis) keeps the views it read last decoded in
memory, up to --cache-size (default 32MiB) of their stored JSON; decoded
messages take up to about twice that, so the cache adds at most about
2 x --cache-size to the server's memory (64 MiB by default). A turn whose
view is not cached reads it from the store; 0 caches nothing.

--record-dir DIR keeps a replayable record (as agcore run --record does) of
every turn served, on every endpoint: one JSON Lines file per session of each
principal (per request for a chat completion), appended turn after turn,
named from the principal and session id (escaped) and a hash of both.
agcore replay DIR/FILE re-runs a session's turns with no network and shows
how the requests drift; per-request settings (Responses instructions,
temperature, declared tools) are not re-applied and show as drift.

` + providerHelp(),
		Example: `  agcore serve
  agcore serve --provider demo --addr 127.0.0.1:9000
  AGCORE_SERVE_TOKENS=alice=s3cret agcore serve --addr 0.0.0.0:8080
  curl -N localhost:8080/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"agcore","stream":true,"messages":[{"role":"user","content":"Hi"}]}'`,
		Args: cobra.NoArgs,
		RunE: a.serve,
	}
	fs := cmd.Flags()
	addProviderFlags(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	fs.String("log", "", "append a structured log of model and tool calls (no contents, never keys) to this file [$AGCORE_LOG]")
	addOtelFlag(fs)
	fs.String("addr", "", "the address to listen on (default "+DefaultServeAddr+"; a non-loopback address needs a token)")
	fs.StringArray("allowed-origin", nil, "a browser origin allowed to call the API (CORS), e.g. https://app.example.com (repeatable)")
	fs.Duration("shutdown-timeout", 30*time.Second, "how long turns in progress may take to finish once the server is asked to stop")
	fs.Int("background-limit", serve.DefaultMaxBackground, "background responses (\"background\": true) each principal may have running at once, across the servers sharing the store")
	fs.Int64("event-log-max", serve.DefaultEventLogMaxBytes, "bytes of events stored per background response; past it only its final event is stored")
	fs.Duration("event-log-retention", serve.DefaultEventLogRetention, "how long a background response's events (for resuming its stream), and a failed or cancelled background response, are kept")
	fs.StringArray("a2a-push-allow-host", nil, "a host A2A push notification webhooks may reach although it is (or resolves to) a private, loopback or link-local address, refused otherwise (repeatable)")
	fs.String("cache-size", formatSize(session.DefaultCacheBytes), "the most of the conversations the store (sqlite, postgres, redis) keeps decoded in memory, counted as their stored JSON (KiB, MiB, GiB); 0 keeps none. See Memory in the help")
	fs.String("record-dir", "", "keep a replayable record of every turn served in this directory: one JSON Lines file per session (per request for a chat completion), appended turn after turn; agcore replay re-runs one")
	addServeTemporalFlags(cmd)
	return cmd
}

func (a *app) serve(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	s, err := a.turnSettings(cmd)
	if err != nil {
		return err
	}
	file, _, err := config.LoadFile(s.ConfigFile)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	sc := config.ServeConfig{}
	if file.Serve != nil {
		sc = *file.Serve
	}
	tokens, err := serveTokens(a.env.Getenv, sc.Tokens)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	addr, _ := cmd.Flags().GetString("addr")
	if addr == "" {
		addr = sc.Addr
	}
	if addr == "" {
		addr = DefaultServeAddr
	}
	origins, _ := cmd.Flags().GetStringArray("allowed-origin")
	origins = append(origins, sc.AllowedOrigins...)
	grace, _ := cmd.Flags().GetDuration("shutdown-timeout")

	broker := &approval.Broker{}
	var approver tool.Approver = broker
	if s.Yes {
		approver = nil // --yes: the command's own approver, which approves every call
	}
	opts, err := a.serveOptions(s)
	if err != nil {
		return err
	}
	opts.approver = approver
	cacheFlag, _ := cmd.Flags().GetString("cache-size")
	cache, err := parseSize(cacheFlag)
	if err != nil {
		return exit(ExitUsage, "--cache-size: %v", err)
	}
	if opts.cacheBytes = cache; cache == 0 {
		opts.cacheBytes = -1 // none (0 is the store's default)
	}
	recordDir, _ := cmd.Flags().GetString("record-dir")
	var records *replay.Dir
	if recordDir != "" {
		if records, err = replay.OpenDir(recordDir); err != nil {
			return exit(ExitUsage, "--record-dir: %v", err)
		}
		opts.recordCtx = true
	}
	main, err := a.build(ctx, s, opts)
	if err != nil {
		return err
	}
	defer main.Close()
	if recs, ok := session.RecordsOf(main.store); ok {
		// Calls waiting for approval live in the store too, so that every
		// server over it lists and decides them.
		broker.Shared = host.Approvals(recs)
	}
	named, agents, set, err := a.offeredAgents(ctx, cmd, file.Agents, main, approver, "the agent agcore run builds")
	defer named.Close()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(a.env.Stderr, nil))
	pushHosts, _ := cmd.Flags().GetStringArray("a2a-push-allow-host")
	var rn *temporalRunner
	if addr, _ := cmd.Flags().GetString("temporal"); addr != "" {
		if rn, err = a.newTemporalRunner(cmd, s, &file); err != nil {
			return err
		}
		defer rn.Close()
	} else if cmd.Flags().Changed("namespace") || cmd.Flags().Changed("task-queue") || cmd.Flags().Changed("model-heartbeat") {
		return exit(ExitUsage, "--namespace, --task-queue and --model-heartbeat go with --temporal HOST:PORT")
	}
	aopts := a2aserve.Options{BearerAuth: len(tokens) > 0, Logger: logger, PushAllowHosts: pushHosts}
	if rn != nil {
		aopts.Remote = rn // every A2A task's turn runs as a workflow
	}
	a2a, err := a2aserve.New(set, broker, aopts)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	wopts := web.Options{Origins: origins, Logger: logger}
	if rn != nil {
		wopts.Remote = rn // the page's chat turns run as workflows too
	}
	page, err := web.New(set, broker, wopts)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	var quota *serve.Quota
	if q := sc.Quota; q != nil {
		quota = &serve.Quota{
			Total:  budget.Limits{Tokens: q.Tokens, CostUSD: q.CostUSD},
			PerDay: budget.Limits{Tokens: q.TokensPerDay, CostUSD: q.CostPerDayUSD},
		}
	}
	sopts := serve.Options{
		Agents: set, Broker: broker, Tokens: tokens, AllowedOrigins: origins, TurnTimeout: s.Timeout,
		Logger: logger, A2A: a2a, Web: page, Quota: quota,
	}
	sopts.MaxBackground, _ = cmd.Flags().GetInt("background-limit")
	sopts.EventLogMaxBytes, _ = cmd.Flags().GetInt64("event-log-max")
	sopts.EventLogRetention, _ = cmd.Flags().GetDuration("event-log-retention")
	if sopts.MaxBackground < 1 || sopts.EventLogMaxBytes < 1024 || sopts.EventLogRetention < time.Minute {
		return exit(ExitUsage, "--background-limit must be at least 1, --event-log-max at least 1024 bytes, --event-log-retention at least 1m")
	}
	if records != nil {
		// Closed after the server stopped: the last turns' lines are written.
		defer records.Close()
		headers := map[string]replay.Header{"agcore": *main.recHeader}
		for name, rt := range named {
			headers[name] = *rt.recHeader
		}
		sopts.Records = records
		sopts.RecordHeader = func(agent string) replay.Header { return headers[agent] }
	}
	if rn != nil {
		sopts.Runner = rn
	}
	h, err := serve.New(sopts)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}

	l, auth, err := listenGuarded("--addr", addr, tokens)
	if err != nil {
		return err
	}
	names := make([]string, len(agents))
	for i, ag := range agents {
		names[i] = ag.Name
	}
	fmt.Fprintf(a.env.Stderr, "agcore serve: listening on http://%s (%s; agents: %s)\n", l.Addr(), auth, strings.Join(names, ", "))

	// No write timeout: a stream lasts as long as its turn (bounded by --timeout).
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	closeUnusedOnShutdown(srv) // an idle server stops at once
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return exit(ExitFailed, "serving: %v", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(a.env.Stderr, "agcore serve: stopping: no new turns; waiting for those in progress")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Bounded whatever the clients do: turns still running at the deadline
	// are cancelled, end their streams with the API's failure event, and
	// a client that stopped reading is cut off serve.DefaultDrainGrace later.
	if err := h.Shutdown(sctx, srv); err != nil {
		fmt.Fprintf(a.env.Stderr, "agcore serve: turns still running after %s were cancelled\n", grace)
	}
	<-served
	return nil
}

// fileAgents are the config file's agents, built, by name.
type fileAgents map[string]*runtime

// Close closes every agent's runtime.
func (f fileAgents) Close() {
	for _, rt := range f {
		rt.Close()
	}
}

// buildFileAgents builds every agent of the config file (buildNamed) and
// joins each to the agents its handoffs name (main, named "agcore",
// included): the agents agcore serve offers, and those a command running
// one of them needs. On error, what was built is returned, to be closed.
func (a *app) buildFileAgents(ctx context.Context, cmd *cobra.Command, agents map[string]config.AgentConfig, main *runtime, approver tool.Approver) (fileAgents, error) {
	if err := config.CheckHandoffs(agents, "agcore"); err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	built := fileAgents{}
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		rt, err := a.buildNamed(ctx, cmd, name, agents[name], main, approver)
		if err != nil {
			return built, err
		}
		built[name] = rt
	}
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		targets := make([]*agent.Agent, 0, len(agents[name].Handoffs))
		for _, h := range agents[name].Handoffs {
			if rt, ok := built[h]; ok {
				targets = append(targets, rt.agent)
			} else {
				targets = append(targets, main.agent) // "agcore" (CheckHandoffs)
			}
		}
		if err := built[name].agent.AddHandoffs(targets...); err != nil {
			return built, exit(ExitUsage, "agent %q of the config file: %v", name, err)
		}
	}
	return built, nil
}

// buildNamed builds the config file's agent name: the command's settings
// with the agent's replaced (config.Resolve with config.AgentFlag, as run
// and chat --agent), sharing main's log, telemetry and store.
func (a *app) buildNamed(ctx context.Context, cmd *cobra.Command, name string, ac config.AgentConfig, main *runtime, approver tool.Approver) (*runtime, error) {
	in := a.input(cmd)
	in.Flags[config.AgentFlag] = name
	s, err := config.Resolve(in)
	var se *config.SetupError
	if main.replayOpts != nil && errors.As(err, &se) && se.Settings != nil {
		s, err = se.Settings, nil // a replay sends nothing: no key is needed
	}
	if err == nil {
		err = s.Check()
	}
	if err != nil {
		return nil, exit(ExitUsage, "agent %q of the config file: %v", name, err)
	}
	var opts buildOptions
	if main.replayOpts != nil {
		opts = *main.replayOpts
		s.Store, s.JSON = "memory:", false
	} else if opts, err = a.serveOptions(s); err != nil {
		return nil, exit(ExitUsage, "agent %q of the config file: %v", name, err)
	}
	opts.shared, opts.approver, opts.description = main, approver, ac.Description
	opts.recorder = main.rec               // run --record: the agents handed to are recorded too
	opts.recordCtx = main.recHeader != nil // serve --record-dir
	if main.wrapModel != nil {
		opts.adapter = main.wrapModel(opts.adapter) // agcore eval
	}
	if t := ac.MCPTool; main.mcpServe && t != nil {
		if t.Sampling {
			opts.adapter = mcpserve.ClientModel{MaxTokens: s.MaxTokens}
			opts.info = opts.adapter.Info()
		}
		if t.AskUser {
			opts.extraTools = append(opts.extraTools, mcpserve.AskUser())
		}
	}
	return a.build(ctx, s, opts)
}

// serveOptions are turnOptions without the demo model's reading pace:
// the server's clients show the stream themselves.
func (a *app) serveOptions(s *config.Settings) (buildOptions, error) {
	o, err := a.turnOptions(s)
	o.principals = true // each principal's own MCP logins (mcpclient.go)
	if m, ok := o.adapter.(*demo.Model); ok {
		m.Delay = 0
	}
	return o, err
}

// serveTokens reads the bearer tokens: $AGCORE_SERVE_TOKENS
// ("name=secret,name2=secret2"; a bare secret is named "default") when
// set, else the config file's.
func serveTokens(getenv func(string) (string, bool), file map[string]string) (map[string]string, error) {
	v, ok := getenv("AGCORE_SERVE_TOKENS")
	if !ok || strings.TrimSpace(v) == "" {
		for name, secret := range file {
			if name == "" || secret == "" {
				return nil, errors.New("the config file's serve.tokens: every token needs a name and a secret")
			}
		}
		return file, nil
	}
	out := map[string]string{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, secret, found := strings.Cut(item, "=")
		if !found {
			name, secret = "default", item
		}
		if name == "" || secret == "" {
			return nil, errors.New("$AGCORE_SERVE_TOKENS: want name=secret pairs separated by commas")
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("$AGCORE_SERVE_TOKENS: the name %q is given twice", name)
		}
		out[name] = secret
	}
	return out, nil
}

// listenGuarded opens addr (given by flag) for a server behind tokens:
// with no token it refuses an address that is not a loopback one. It
// returns the listener and how authentication is set, for the start line.
// agcore serve and agcore mcp serve --http listen through it.
func listenGuarded(flag, addr string, tokens map[string]string) (net.Listener, string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", exit(ExitFailed, "%s %s: %v", flag, addr, err)
	}
	tcp, _ := l.Addr().(*net.TCPAddr)
	if len(tokens) == 0 && (tcp == nil || !tcp.IP.IsLoopback()) {
		l.Close()
		return nil, "", exit(ExitUsage, "%s %s is not a loopback address, and no token is configured: set $AGCORE_SERVE_TOKENS (name=secret,...) or the config file's serve.tokens, or listen on 127.0.0.1", flag, addr)
	}
	auth := "auth off, loopback only"
	if len(tokens) > 0 {
		auth = fmt.Sprintf("auth on: %d bearer tokens", len(tokens))
	}
	return l, auth, nil
}

// offeredAgents builds the config file's agents beside main ("agcore",
// described as mainDesc) and returns them as the agents a server offers:
// agcore serve and agcore mcp serve offer the same set. named is never
// nil: close it whatever err is.
func (a *app) offeredAgents(ctx context.Context, cmd *cobra.Command, file map[string]config.AgentConfig, main *runtime, approver tool.Approver, mainDesc string) (fileAgents, []host.Agent, *host.Set, error) {
	agents := []host.Agent{{Name: "agcore", Agent: main.agent, Store: main.store, Model: main.s.Model, Description: mainDesc}}
	named, err := a.buildFileAgents(ctx, cmd, file, main, approver)
	if err != nil {
		return named, nil, nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(file)) {
		rt := named[name]
		agents = append(agents, host.Agent{Name: name, Agent: rt.agent, Store: rt.store, Model: rt.s.Model, Description: file[name].Description})
	}
	set, err := host.NewSet(agents...)
	if err != nil {
		return named, nil, nil, exit(ExitUsage, "%v", err)
	}
	return named, agents, set, nil
}
