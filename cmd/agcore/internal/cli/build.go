package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/tiktoken"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/provider/registry"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"
)

// mcpStartTimeout bounds starting the MCP servers (npx may download one
// first).
const mcpStartTimeout = 2 * time.Minute

// newAdapter returns the provider adapter the settings name, built by the
// provider registry from the settings' kind. The key and base URL are the
// ones config resolved (flag, environment, config file, with a custom
// provider's api_key_env), passed explicitly so the precedence is the
// CLI's: the registry reads no variable itself. Every adapter sends
// through newHTTPClient and waits IdleTimeout for a byte (the quietGuard
// around it counts that silence across retries).
func newAdapter(s *config.Settings) (llm.Model, error) {
	return s.Kind.New(registry.Config{
		Model:       s.Model,
		BaseURL:     s.BaseURL,
		APIKey:      s.APIKey,
		Getenv:      func(string) string { return "" },
		HTTPClient:  newHTTPClient(),
		IdleTimeout: s.IdleTimeout,
	})
}

// turnOptions returns the build options of run and chat for the settings'
// provider: the adapter (the demo model streams at a readable pace on a
// terminal, and is free) and what is known of the model. It fails, as a
// usage error, only for settings config.Resolve would have refused.
func (a *app) turnOptions(s *config.Settings) (buildOptions, error) {
	adapter, err := newAdapter(s)
	if err != nil {
		return buildOptions{}, exit(ExitUsage, "%v", err)
	}
	o := buildOptions{adapter: adapter, info: modelInfo(s, adapter)}
	if m, ok := adapter.(*demo.Model); ok {
		if !s.JSON && isTerminal(a.env.Stdout) {
			m.Delay = demoDelay
		}
	}
	return o, nil
}

// modelInfo returns what is known of the model's limits and price: the
// catalog's entry for the provider kind the user chose (so a compatible
// server, Ollama or vLLM get no cloud price, while --provider openai with
// a proxy's base URL is OpenAI's price), else the adapter's, with
// --context-window replacing the window.
func modelInfo(s *config.Settings, adapter llm.Model) llm.ModelInfo {
	seller := s.Kind.Name
	if s.Kind.Wire == registry.WireResponses {
		seller = "openai" // the same models at the same prices
	}
	info, ok := catalog.Default().LookupFor(seller, s.Model)
	if !ok {
		info = adapter.Info()
	}
	info.Provider, info.Name = s.Kind.Name, s.Model
	if s.ContextWindow > 0 {
		info.ContextWindow = s.ContextWindow
	}
	return info
}

// runtime is everything one command builds to run turns: the store, the
// tools (built-in and MCP), the pipeline and the agent.
type runtime struct {
	s       *config.Settings
	quiet   *quietGuard // the idle budget of the model's calls; nil for the demo
	counter compact.TokenCounter
	info    llm.ModelInfo
	instr   string // the agent's instructions
	store   *openedStore
	mcp     *mcp.Group
	notices noticeBoard    // where the MCP servers' notices go: the sink
	pool    *principalPool // serve's per-principal MCP connections; nil elsewhere
	agent   *agent.Agent
	model   string           // the model's name, for events
	sink    render.Sink      // where the current turn is shown
	rec     *replay.Recorder // --record: each turn marked in it; nil without
	// attach are the -a attachments, sent with the next turn's prompt
	// (the first), then cleared.
	attach []llm.Block
	// recHeader is the header of a record of this agent's runs, when they
	// are recorded through their context (serve --record-dir); nil
	// without.
	recHeader *replay.Header
	closers   []func() error
	// wrapModel, when set, wraps the adapter of each config-file agent
	// built beside this runtime (buildNamed): agcore eval's eval.Offline.
	wrapModel func(llm.Model) llm.Model
	// replayOpts, when set, are the options each config-file agent built
	// beside this runtime is built with instead of its own provider's
	// (agcore replay: every agent answered by the record).
	replayOpts *buildOptions
	// mcpServe: the config-file agents built beside this runtime are
	// agcore mcp serve's, so their mcp_tool settings apply (buildNamed).
	mcpServe bool

	// What build opened that another agent of the same command may share
	// (buildOptions.shared): the log, the telemetry.
	logger *slog.Logger
	tel    agent.Telemetry
	telMW  middleware.Middleware
	// approver decides the calls of the runtime's agent (and of the
	// agents joinHandoffs joins to it).
	approver tool.Approver
}

// joinHandoffs gives run and chat --agent NAME the agents its handoffs
// name, as agcore serve joins them: when the config file's agent has
// handoffs, every agent of the file is built (sharing rt's log,
// telemetry, store and approver), the handoffs are checked and joined, and
// rt's agent becomes the joined one. The returned func closes them.
func (a *app) joinHandoffs(ctx context.Context, cmd *cobra.Command, rt *runtime) (func(), error) {
	none := func() {}
	if cmd == nil || rt.s.Agent == "" {
		return none, nil
	}
	f, _, err := config.LoadFile(rt.s.ConfigFile)
	if err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	if len(f.Agents[rt.s.Agent].Handoffs) == 0 {
		return none, nil
	}
	named, err := a.buildFileAgents(ctx, cmd, f.Agents, rt, rt.approver)
	if err != nil {
		named.Close()
		return nil, err
	}
	rt.agent = named[rt.s.Agent].agent
	return named.Close, nil
}

// Close releases what the runtime opened, newest first.
func (rt *runtime) Close() error {
	var errs []error
	for i := len(rt.closers) - 1; i >= 0; i-- {
		errs = append(errs, rt.closers[i]())
	}
	rt.closers = nil
	return errors.Join(errs...)
}

// buildOptions are what differs between run, chat and demo.
type buildOptions struct {
	adapter llm.Model
	info    llm.ModelInfo
	ask     askFunc // interactive approval; nil denies
	// name is the agent's name; "" means the settings' Agent, else
	// "agcore".
	name string
	// extraTools are offered besides the file tools and MCP servers'
	// (agcore mcp serve's ask_user).
	extraTools []tool.Tool
	// description says what the agent does (agent.Config.Description: the
	// transfer tools of agents handing off to it show it).
	description string
	// approver, when set, decides the calls needing approval instead of
	// the terminal (agcore serve's broker).
	approver tool.Approver
	// principals: the turns are principals' (agcore serve, agcore mcp
	// serve): a URL server that authorizes with a login is reached with
	// the login of the turn's principal (principalPool).
	principals bool
	// shared, when set, is a runtime of the same command whose log,
	// telemetry and store this one uses instead of opening its own (the
	// agents of agcore serve). It must outlive this runtime.
	shared *runtime
	// record, when set, is the file --record writes the run's record to
	// (replay.go).
	record string
	// cacheBytes bounds the store's message cache
	// (session.WithCacheBytes: 0 is the store's default, negative none;
	// serve --cache-size).
	cacheBytes int64
	// recordCtx: each run is recorded in the recorder its context carries
	// (replay.ContextMiddleware; serve --record-dir).
	recordCtx bool
	// replaying: the adapter is a record (agcore replay): no idle guard,
	// no retries (a recorded error is the answer its call got after its
	// retries); toolMW answers the chosen tools from the record, and
	// standIns offer the recorded tools the configuration lacks.
	replaying bool
	toolMW    []tool.Middleware
	standIns  func(have func(string) bool) []tool.Tool
	// cmd, when set, is run's or chat's command: its --agent is joined to
	// the agents its handoffs name (joinHandoffs).
	cmd *cobra.Command
	// attach are run's or chat's -a attachments, sent with the first
	// prompt.
	attach []llm.Block
	// recorder, when set, is another runtime's --record recorder this
	// agent's calls are kept in too (the agents a recorded run hands off
	// to); not closed by this runtime.
	recorder *replay.Recorder
}

// build opens what a command needs (log, tools: fstool + MCP, store) and
// builds the agent with agent.New, which assembles the pipeline: the tool
// loop with the approver, the budget policy per --compact, retries per
// --retries, logging per --log, the model info (--context-window).
func (a *app) build(ctx context.Context, s *config.Settings, o buildOptions) (*runtime, error) {
	rt := &runtime{s: s, info: o.info, model: o.info.Name, sink: render.NewJSON(io.Discard), attach: o.attach}
	built := false
	defer func() {
		if !built {
			rt.Close()
		}
	}()

	var err error
	logger, tel, telMW := sharedTelemetry(o.shared)
	if logger == nil {
		var closeLog func() error
		logger, closeLog, err = openLog(s.Log)
		if err != nil {
			return nil, exit(ExitUsage, "%v", err)
		}
		rt.closers = append(rt.closers, closeLog)
		// --otel or the OTEL_* environment (otel.go): flushed on exit, before
		// the log closes.
		var closeTel func() error
		tel, telMW, closeTel = a.openTelemetry(logger)
		rt.closers = append(rt.closers, closeTel)
	}
	rt.logger, rt.tel, rt.telMW = logger, tel, telMW

	var tools []tool.Tool
	if len(s.Tools) > 0 {
		tools, err = fstool.ByName(s.Root, s.Tools, fstool.Options{AllowSecrets: s.AllowSecrets, AllowHint: "--allow-secret", MaxReadBytes: s.MaxResultBytes})
		if err != nil {
			return nil, exit(ExitUsage, "--tools/--root: %v", err)
		}
	}
	tools = append(tools, o.extraTools...)
	var approve tool.Approver = &approver{yes: s.Yes, ask: o.ask, pause: func() func() { return rt.sink.Pause() }}
	if o.approver != nil {
		approve = o.approver
	}
	rt.approver = approve
	rt.notices.set(rt.sink)
	if len(s.MCP) > 0 {
		var elicit mcp.Elicitor
		if ap, ok := approve.(*approver); ok && ap.ask != nil {
			elicit = terminalElicitor(ap, a.env.Stderr)
		} else if o.approver != nil {
			elicit = approvalElicitor(o.approver, rt.notices.notify) // serve, mcp serve
		}
		servers := make([]mcp.Server, len(s.MCP))
		for i, m := range s.MCP {
			if servers[i], err = a.mcpServer(s, m, "", rt.notices.notify, elicit); err != nil {
				return nil, err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, mcpStartTimeout)
		rt.mcp, err = mcp.ConnectAll(cctx, servers)
		cancel()
		if err != nil {
			return nil, exit(ExitFailed, "MCP: %v", mcpErrorLine(err))
		}
		rt.closers = append(rt.closers, rt.mcp.Close)
		if o.principals {
			rt.pool = &principalPool{a: a, s: s, notify: rt.notices.notify, elicit: elicit, clients: map[string]*mcp.Client{}}
			rt.closers = append(rt.closers, rt.pool.Close)
		}
		tools = append(tools, rt.mcpTools()...)
	}

	// The store opens last, so that a bad flag or a server that fails to
	// start leaves no database behind.
	if o.shared != nil {
		rt.store = o.shared.store
	} else {
		rt.store, err = openStore(ctx, s.Store, s.Home, logger, false, session.WithCacheBytes(o.cacheBytes))
		if err != nil {
			return nil, err
		}
		rt.closers = append(rt.closers, rt.store.Close)
	}

	name := o.name
	if name == "" {
		name = s.Agent // the config file's agent (--agent; serve's named agents)
	}
	if name == "" {
		name = "agcore"
	}
	model := o.adapter
	_, offline := model.(*demo.Model)
	if _, client := model.(mcpserve.ClientModel); client {
		offline = true // the MCP client's model answers at a person's pace
	}
	if !offline && !o.replaying {
		rt.quiet = newQuietGuard(model, s.IdleTimeout, config.RedactURL(s.BaseURL))
		model = rt.quiet
	}
	attempts := s.Retries + 1
	if o.replaying {
		attempts = 1
	}
	retry := middleware.RetryConfig{
		MaxAttempts: attempts,
		ShouldRetry: shouldRetry,
		OnRetry: func(_ context.Context, attempt int, d time.Duration, err error) {
			rt.sink.Retry(attempt, d, err)
		},
	}

	if o.standIns != nil {
		tools = append(tools, o.standIns(func(name string) bool { _, ok := tool.Find(tools, name); return ok })...)
	}
	rt.instr = instructions(s, tools)
	var recMW []middleware.Middleware
	if o.record != "" {
		if rt.rec, err = openRecord(o.record, s, o.info, rt.instr, tools); err != nil {
			return nil, exit(ExitUsage, "--record: %v", err)
		}
		rt.closers = append(rt.closers, rt.rec.Close)
		recMW = append(recMW, rt.rec.Middleware())
	} else if o.recorder != nil {
		rt.rec = o.recorder
		recMW = append(recMW, rt.rec.Middleware())
	}
	if o.recordCtx {
		h := recordHeader(s, o.info, rt.instr, tools)
		rt.recHeader = &h
		recMW = append(recMW, replay.ContextMiddleware())
	}

	// --compact: the agent's budget policy keeps every model call of the
	// tool loop inside the input budget.
	info := o.info
	counter, _ := tiktoken.For(info.Name) // exact for OpenAI models, else the estimator
	rt.counter = counter
	policy := &compact.Policy{Counter: counter}
	switch s.Compact {
	case "off":
		policy.Strategy = compact.Off
	case "summarize":
		// The summarizer calls the model directly, with retries and logging
		// but without tools or the budget policy.
		// A record keeps its calls too.
		summarizer := middleware.Chain(model, append(append([]middleware.Middleware{telMW}, recMW...), middleware.Retry(retry), middleware.Logging(middleware.LogConfig{Logger: logger}))...)
		policy.Strategy = compact.NewIncremental(compact.DefaultPipeline(summarizer))
	} // "auto": the default strategy

	toolMW := o.toolMW
	if rt.rec != nil {
		toolMW = append(toolMW, rt.rec.ToolMiddleware())
	}
	if o.recordCtx {
		toolMW = append(toolMW, replay.ContextToolMiddleware())
	}
	// The named agent's guardrails (its "guardrails" in the config file).
	hooks, err := agent.AddGuardrails(nil, s.Guardrails)
	if err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	rt.agent, err = agent.New(model, agent.Config{
		Hooks:         hooks,
		Name:          name,
		Description:   o.description,
		Instructions:  rt.instr,
		Tools:         tools,
		Store:         rt.store,
		Compaction:    policy,
		Retry:         retry,
		Approver:      approve,
		MaxSteps:      s.MaxSteps,
		ModelInfo:     &info,
		Budget:        budget.Limits{CostUSD: s.MaxCost, Tokens: s.TokenBudget},
		SessionBudget: budget.Limits{CostUSD: s.SessionMaxCost, Tokens: s.SessionTokenBudget},
		Logger:        logger,
		Providers:     []agent.ContextProvider{&metaRecorder{meta: sessionMeta{Model: s.Model, Provider: s.Provider}}, &mcpToolsNow{rt}},
		Telemetry:     tel,
		Middleware:    recMW,

		ToolMiddleware: toolMW,
		MaxResultBytes: s.MaxResultBytes, // and read_file's cap above
	})
	if err != nil {
		return nil, exit(ExitUsage, "%v", err)
	}
	built = true
	return rt, nil
}

// sharedTelemetry returns the log and telemetry of shared, if any.
func sharedTelemetry(shared *runtime) (*slog.Logger, agent.Telemetry, middleware.Middleware) {
	if shared == nil {
		return nil, nil, nil
	}
	return shared.logger, shared.tel, shared.telMW
}

// instructions are --system, or a short default that tells the model where
// its file tools work.
func instructions(s *config.Settings, tools []tool.Tool) string {
	if s.System != "" {
		return s.System
	}
	text := "You are agcore, a helpful assistant in a terminal. Answer concisely."
	if len(tools) > 0 {
		text += " Use the tools you are given when they help"
		if len(s.Tools) > 0 {
			text += "; the file tools work inside the directory " + s.Root + " and take paths relative to it"
		}
		text += "."
	}
	return text
}

// openLog opens the --log file (appending, mode 0600) as a JSON logger, or
// returns a logger that discards everything and costs nothing.
func openLog(path string) (*slog.Logger, func() error, error) {
	if path == "" {
		return slog.New(slog.DiscardHandler), func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--log: %w", err)
	}
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: readableDurations})), f.Close, nil
}

// readableDurations writes durations in units a person reads ("1.234s",
// "850ms", "120µs") instead of a count of nanoseconds.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	switch {
	case d >= time.Second:
		d = d.Round(time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(10 * time.Microsecond)
	default:
		d = d.Round(time.Microsecond)
	}
	return slog.String(a.Key, d.String())
}
