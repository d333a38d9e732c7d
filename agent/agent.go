package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/usage"
)

// Config is everything an agent is built from, each setting given once.
// The zero value is a working agent: no tools, no store, the default budget
// policy, retries with the defaults, no hooks.
type Config struct {
	// Name identifies the agent in updates, logs and telemetry.
	Name string
	// ID, when set, is the agent's identifier for telemetry (the GenAI
	// conventions' gen_ai.agent.id); agcore itself never reads it.
	ID string
	// Description says what the agent does, for the agents that hand off
	// to it (in the transfer tool's description) or call it as a tool
	// ([AsTool]).
	Description string
	// Instructions open the system message of every request (a run can
	// replace them with RunOptions.Instructions).
	Instructions string
	// Tools are the agent's own tools, offered on every run before any
	// other; names must be unique. The tool loop runs these very values,
	// so every interface they implement is seen by the loop ([tool.Timed],
	// [tool.Approvable]), by hooks and by the Approver.
	Tools []tool.Tool
	// Handoffs are the agents this agent may hand a turn over to: each is
	// offered as a tool named TransferToolName(its Name); when the model
	// calls one, the call is answered ("Transferred to X.") and the turn
	// goes on with that agent: its instructions, tools, handoffs, pipeline
	// and limits, over the history and the turn so far. Agents that hand
	// off to each other are joined with [Agent.AddHandoffs].
	Handoffs []*Agent
	// MaxHandoffs is the most handoffs of one turn; 0 means
	// DefaultMaxHandoffs. A transfer past it gets an error result
	// (ErrHandoffLimit) and the agent that asked answers on.
	MaxHandoffs int
	// Providers add context to each run that has a session, in this order.
	Providers []ContextProvider
	// Store keeps sessions: a run with RunOptions.SessionID loads its
	// history from it and appends the turn to it. Nil keeps nothing.
	Store session.Store
	// Compaction keeps every request (each step of the tool loop
	// included) inside the model's input budget; nil means a default
	// &compact.Policy{}: the default strategy and the estimator counter,
	// active whenever the model's context window is known. Use
	// &compact.Policy{Strategy: compact.Off} to never compress. New sets
	// the policy's Logger to Logger when it has none.
	Compaction *compact.Policy
	// Retry configures the retries of each model call; the zero value
	// retries with the middleware defaults, MaxAttempts: 1 never retries
	// (a durable orchestrator that retries calls itself). Its Clock
	// defaults to Clock.
	Retry middleware.RetryConfig
	// Hooks run around each model call and each tool call, and their
	// guardrails on each turn's input and final answer (see the package
	// documentation); nil runs none.
	Hooks *middleware.Hooks
	// Approver decides calls to tools that need approval
	// ([tool.Approvable]); nil denies them.
	Approver tool.Approver
	// MaxSteps is the most model calls of one turn; 0 means
	// middleware.DefaultMaxSteps.
	MaxSteps int
	// Budget limits each run's model calls (input, output and total
	// tokens, cost); SessionBudget limits each session (its stored turns'
	// usage and cost plus the running turn). A model call that could
	// cross a limit is not sent, and the run ends with the
	// *budget.ExceededError (see [Agent.Run]). The zero values limit
	// nothing; RunOptions can replace them.
	Budget        budget.Limits
	SessionBudget budget.Limits
	// ToolTimeout limits each tool call ([tool.Timed] tools set their
	// own); 0 means none. ToolConcurrency is the most calls of one batch
	// running at once (0: tool.DefaultConcurrency). MaxResultBytes cuts
	// long tool results (0: tool.DefaultMaxResultBytes; negative: no
	// limit). Runner runs the calls of a batch (nil: tool.GoRunner).
	ToolTimeout     time.Duration
	ToolConcurrency int
	MaxResultBytes  int
	Runner          tool.Runner
	// Middleware wraps each model call, after the budget policy and the
	// hooks and before retries: the place for tracing or metrics. The first
	// is the outermost.
	Middleware []middleware.Middleware
	// ToolMiddleware wraps each tool call, inside the hooks and outside
	// approval. The first is the outermost.
	ToolMiddleware []tool.Middleware
	// ModelInfo, when set, replaces the model's own Info everywhere: the
	// budget policy, the middleware and the cost (a context window or
	// prices the adapter does not know).
	ModelInfo *llm.ModelInfo
	// Logger receives warnings (failed providers, compressions,
	// persistence) and, when set, one record per model call and per tool
	// call (never message contents); nil means slog.Default() for warnings
	// and no per-call records.
	Logger *slog.Logger
	// OnError is told of errors a run survives: a context provider that
	// failed (*ProviderError), a turn that could not be persisted
	// (*PersistError). Nil ignores them.
	OnError func(ctx context.Context, err error)
	// Clock stamps stored turns and times retries; nil means
	// clock.System.
	Clock clock.Clock
	// NewID makes run ids; nil means session.NewID.
	NewID func() string
	// Tracker, when set, records the usage and cost of every run that got
	// a response, by session and model.
	Tracker *usage.Tracker
	// Telemetry traces and measures every run, model call, attempt and
	// tool call (see [Telemetry]); nil records nothing and costs nothing.
	// otelagent.New returns one for OpenTelemetry, which uses the global
	// tracer and meter providers unless given its own.
	Telemetry Telemetry
}

// Agent runs turns of a conversation against a model through the standard
// pipeline. Build it with [New]; it is safe for concurrent runs.
type Agent struct {
	cfg    Config
	model  llm.Model // the pipeline below the tool loop: hooks, middleware, retry, logging, info
	policy *compact.Policy
	inv    tool.Invoker
	locks  sessionLocks
	// handoffs are Config.Handoffs and those AddHandoffs added.
	handoffs []*Agent
}

// New builds the standard agent over model (a provider adapter, or any
// llm.Model that makes one model call per call). It assembles, in the one
// correct order, outermost first:
//
//	tool loop (cfg.Tools and each run's tools; approval; MaxSteps; the
//	  input guardrails of cfg.Hooks gate the turn's first model call)
//	  → budget policy (compact.Guard: every step inside the input budget)
//	    → spending limits (runs with Budget, SessionBudget or a quota:
//	      budget.Meter, one per run)
//	    → hooks (PreRequest, PostRequest, OnError; PreToolUse and
//	      PostToolUse wrap each tool call, inside the telemetry's tool span)
//	      → telemetry (cfg.Telemetry: one span per model call)
//	        → cfg.Middleware
//	          → retry (each call, never the tools; each retry told to
//	            cfg.Retry.OnRetry and the telemetry)
//	            → logging (with cfg.Logger)
//	              → model-info override (cfg.ModelInfo)
//	                → model
//
// It fails when model is nil or when two of cfg.Tools share a name or one
// has none.
func New(model llm.Model, cfg Config) (*Agent, error) {
	if model == nil {
		return nil, ErrNoModel
	}
	seen := make(map[string]bool, len(cfg.Tools))
	for i, t := range cfg.Tools {
		if t == nil {
			return nil, fmt.Errorf("agent: tool %d is nil", i)
		}
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("agent: tool %d (%T) has no name", i, t)
		}
		if seen[name] {
			return nil, fmt.Errorf("agent: two tools are called %q", name)
		}
		seen[name] = true
	}
	a := &Agent{cfg: cfg, policy: cfg.Compaction}
	switch {
	case a.policy == nil:
		a.policy = &compact.Policy{Logger: cfg.Logger}
	case a.policy.Logger == nil:
		a.policy.Logger = cfg.Logger
	}

	var mws []middleware.Middleware
	var toolMWs []tool.Middleware
	tel := cfg.Telemetry
	if tel != nil {
		toolMWs = append(toolMWs, tel.ToolMiddleware())
	}
	if cfg.Hooks != nil {
		mws = append(mws, cfg.Hooks.Middleware())
		toolMWs = append(toolMWs, cfg.Hooks.ToolMiddleware())
	}
	if tel != nil {
		mws = append(mws, tel.ModelMiddleware())
	}
	mws = append(mws, cfg.Middleware...)
	toolMWs = append(toolMWs, cfg.ToolMiddleware...)
	toolMWs = append(toolMWs, subAgentCalls) // sub-agents learn their call's id (subagent.go)
	retry := cfg.Retry
	if retry.Clock == nil {
		retry.Clock = cfg.Clock
	}
	if tel != nil {
		retry.OnRetry = onRetry(retry.OnRetry, tel)
	}
	mws = append(mws, middleware.Retry(retry))
	if cfg.Logger != nil {
		logCfg := middleware.LogConfig{Logger: cfg.Logger, Clock: cfg.Clock}
		mws = append(mws, middleware.Logging(logCfg))
		toolMWs = append(toolMWs, middleware.ToolLogging(logCfg))
	}
	if cfg.ModelInfo != nil {
		mws = append(mws, middleware.WithInfo(*cfg.ModelInfo))
	}
	a.model = middleware.Chain(model, mws...)
	a.inv = tool.Invoker{
		Concurrency:    cfg.ToolConcurrency,
		Timeout:        cfg.ToolTimeout,
		MaxResultBytes: cfg.MaxResultBytes,
		Runner:         cfg.Runner,
		Middleware:     toolMWs,
		Logger:         cfg.Logger,
	}
	if err := a.AddHandoffs(cfg.Handoffs...); err != nil {
		return nil, err
	}
	return a, nil
}

// Name returns the agent's name.
func (a *Agent) Name() string { return a.cfg.Name }

// Info returns what the agent's pipeline knows of the model: the model's
// Info, or Config.ModelInfo.
func (a *Agent) Info() llm.ModelInfo {
	if a.model == nil {
		return llm.ModelInfo{}
	}
	return a.model.Info()
}

// Store returns Config.Store (nil without one).
func (a *Agent) Store() session.Store { return a.cfg.Store }

// Tools returns the agent's own tools (do not change the slice).
func (a *Agent) Tools() []tool.Tool { return a.cfg.Tools }

// Compaction returns the agent's budget policy (to read its circuit
// breaker, or Reset it).
func (a *Agent) Compaction() *compact.Policy { return a.policy }

// RunOptions adjust one run. The zero value (or a nil *RunOptions) runs
// without a session, with the agent's instructions and the model's defaults.
type RunOptions struct {
	// SessionID names the session the run continues. With a Store, its
	// history is loaded (a missing session starts empty) and the turn is
	// appended to it; without one, the run has the session's identity (for
	// context providers) but no stored history.
	SessionID string
	// Session is an in-memory session the run continues instead (it wins
	// over SessionID): its messages are the history, and a successful turn
	// is applied to it in place, after being appended to the Store under
	// Session.ID when the agent has a Store and the session an ID. The
	// caller must not use it while the run is in progress.
	Session *session.Session
	// Store, when not nil, is the store the run loads its session from and
	// appends its turn to, instead of Config.Store: a server gives each
	// request's runs session.Scoped(Config.Store, owner), so a run never
	// continues another owner's session and its turn carries the owner.
	Store session.Store
	// Instructions, when not empty, replace the agent's instructions for
	// this run. Providers' instructions still
	// follow them.
	Instructions string
	// Temperature, MaxTokens, ToolChoice and ResponseFormat go into the
	// request; zero values leave the model's defaults.
	Temperature    *float64
	MaxTokens      int
	ToolChoice     llm.ToolChoice
	ResponseFormat *llm.ResponseFormat
	// Tools are offered for this run only, after the agent's tools; a name
	// the agent already has is skipped.
	Tools []tool.Tool
	// Declared are tools the caller runs itself (a client-side tool, a
	// question to the user): offered after every other tool, under a name
	// not already taken; a turn whose answer calls one ends there with
	// FinishToolUse, and the caller answers the calls in its next run.
	Declared []llm.ToolDefinition
	// Metadata goes into Request.Metadata for middleware and hooks.
	Metadata map[string]string
	// Budget and SessionBudget, when not nil, replace Config.Budget and
	// Config.SessionBudget for this run.
	Budget        *budget.Limits
	SessionBudget *budget.Limits
}

// Errors of a run; test them with errors.Is.
var (
	// ErrNoModel: New was given no model (or the Agent was not made by
	// New).
	ErrNoModel = errors.New("agent: no model")
	// ErrAbandoned ends a run whose caller stopped ranging over its updates
	// before the finish update; nothing of it was persisted.
	ErrAbandoned = errors.New("agent: run abandoned before its finish")
	// ErrStreamUsed: a Stream's updates were ranged over a second time.
	ErrStreamUsed = errors.New("agent: stream already consumed")
)

// ProviderError reports a context provider that failed; the run went on
// without it. OnError receives it.
type ProviderError struct {
	Provider string // the provider's Name, or its Go type
	Phase    string // "invoking" or "invoked"
	RunID    string
	Err      error
}

// Error names the provider, the phase and the run.
func (e *ProviderError) Error() string {
	return fmt.Sprintf("agent: context provider %s failed while %s (run %s): %v", e.Provider, e.Phase, e.RunID, e.Err)
}

// Unwrap returns the provider's error.
func (e *ProviderError) Unwrap() error { return e.Err }

// PersistError reports a turn that could not be stored. OnError receives it
// and [Response.PersistErr] returns it.
type PersistError struct {
	SessionID string
	RunID     string
	Err       error
}

// Error names the run and the session.
func (e *PersistError) Error() string {
	return fmt.Sprintf("agent: persisting run %s to session %q: %v", e.RunID, e.SessionID, e.Err)
}

// Unwrap returns the store's error.
func (e *PersistError) Unwrap() error { return e.Err }

// Run runs one turn and returns when it is over, including the
// post-invocation phase (providers' Invoked and persistence). The error is
// the run's; a persistence failure does not fail the run and is returned by
// [Response.PersistErr].
//
// A run stopped by a spending limit (Config.Budget, SessionBudget,
// the quota its context carries, budget.WithQuota) after its first model
// call returns both its Response
// (FinishReason llm.FinishBudget; what it did, persisted like any turn,
// every tool call answered) and the *budget.ExceededError naming the
// limit, which matches llm.ErrBudgetExceeded. When the first call is
// refused, the run did nothing: no Response, nothing stored.
func (a *Agent) Run(ctx context.Context, msgs []llm.Message, opts *RunOptions) (*Response, error) {
	return a.RunStream(ctx, msgs, opts).Wait()
}

// RunStream prepares one turn and returns its stream; nothing happens until
// the caller ranges over [Stream.Updates] (or calls [Stream.Wait]). msgs are
// the caller's new messages; opts may be nil. The Stream keeps msgs and
// opts: do not change them until the run is over.
//
// A run on a session that another run of this Agent is using waits, when
// it starts, until that run is entirely over (persistence included), or
// until its context ends. Runs never interleave on a session, so each sees
// the previous one's turn. (Two Agent values, or two processes, sharing a
// store are not coordinated.)
func (a *Agent) RunStream(ctx context.Context, msgs []llm.Message, opts *RunOptions) *Stream {
	if opts == nil {
		opts = &RunOptions{}
	}
	return &Stream{agent: a, ctx: ctx, input: msgs, opts: opts, done: make(chan struct{})}
}

func (a *Agent) logger() *slog.Logger {
	if a.cfg.Logger != nil {
		return a.cfg.Logger
	}
	return slog.Default()
}

func (a *Agent) now() time.Time {
	return clock.Or(a.cfg.Clock).Now()
}

func (a *Agent) newID() string {
	if a.cfg.NewID != nil {
		return a.cfg.NewID()
	}
	return session.NewID()
}

// price prices a turn's usage with the model info's Price (unknown, not
// zero, without one) and records it with the Tracker.
func (a *Agent) price(sessionID, model string, u llm.Usage) (usd float64, known bool) {
	usd, known = usage.CostOf(a.Info(), u)
	if a.cfg.Tracker != nil {
		a.cfg.Tracker.Add(usage.Turn{Session: sessionID, Model: model, Usage: u, CostUSD: usd, Known: known})
	}
	return usd, known
}

// report logs err as a warning and hands it to OnError.
func (a *Agent) report(ctx context.Context, msg string, err error, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("agent", a.cfg.Name), slog.Any("error", err))
	a.logger().LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
	if a.cfg.OnError != nil {
		a.cfg.OnError(ctx, err)
	}
}
