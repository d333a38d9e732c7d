package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/usage"
)

// Agent runs turns of a conversation against a model. Set the fields before
// the first run and do not change or copy the Agent afterwards; an Agent is
// safe for concurrent runs. Only Model is required: every other field has a
// working zero value.
type Agent struct {
	// Name identifies the agent in updates and logs.
	Name string
	// Instructions open the system message of every request (a run can
	// replace them with RunOptions.Instructions).
	Instructions string
	// Tools are offered to the model on every run, before any other tool.
	Tools []tool.Tool
	// Providers add context to each run that has a session, in this order.
	Providers []ContextProvider
	// Compression shrinks a request over the model's input budget. It runs
	// only when Counter is set and the model's context window is known.
	Compression compact.Strategy
	Counter     compact.TokenCounter
	// Model answers the requests. It is the whole pipeline (tool loop,
	// retries, hooks over a provider adapter), so tool calls are invisible to
	// the agent.
	Model llm.Model
	// ModelInfo, when set, replaces Model.Info() (for the input budget and
	// cost).
	ModelInfo *llm.ModelInfo
	// Store keeps sessions: a run with RunOptions.SessionID loads its history
	// from it and appends the turn to it. Nil keeps nothing.
	Store session.Store
	// Logger receives warnings (failed providers, failed compression,
	// failed persistence); nil means slog.Default().
	Logger *slog.Logger
	// OnError is told of errors a run survives: a context provider that
	// failed (*ProviderError), a turn that could not be persisted
	// (*PersistError). Nil ignores them. To hand them to middleware hooks:
	//	OnError: func(ctx context.Context, err error) { hooks.RunOnError(ctx, nil, err) }
	OnError func(ctx context.Context, err error)
	// Clock stamps stored turns; nil means middleware.SystemClock.
	Clock middleware.Clock
	// NewID makes run ids; nil means session.NewID.
	NewID func() string
	// Cost prices a turn's usage for the model that answered; known is
	// false when the model has no price (the cost is then unknown, not
	// zero). Nil means the Price of the model's info (ModelInfo, else
	// Model.Info()), through usage.CostOf.
	Cost func(model string, u llm.Usage) (usd float64, known bool)
	// Tracker, when set, records the usage of every run that got a
	// response, by session and model, with the cost the agent computed:
	// the agent's running totals.
	Tracker *usage.Tracker

	locks sessionLocks
}

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
	// Instructions, when not empty, replace the agent's instructions for
	// this run (the seed's with_instructions). Providers' instructions still
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
	// Metadata goes into Request.Metadata for middleware and hooks.
	Metadata map[string]string
}

// Errors of a run; test them with errors.Is.
var (
	// ErrNoModel: the Agent has no Model.
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
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

func (a *Agent) now() time.Time {
	if a.Clock != nil {
		return a.Clock.Now()
	}
	return middleware.SystemClock.Now()
}

func (a *Agent) newID() string {
	if a.NewID != nil {
		return a.NewID()
	}
	return session.NewID()
}

func (a *Agent) modelInfo() llm.ModelInfo {
	if a.ModelInfo != nil {
		return *a.ModelInfo
	}
	return a.Model.Info()
}

// price prices a turn's usage and records it with the Tracker.
func (a *Agent) price(sessionID, model string, u llm.Usage) (usd float64, known bool) {
	if a.Cost != nil {
		usd, known = a.Cost(model, u)
	} else {
		usd, known = usage.CostOf(a.modelInfo(), u)
	}
	if a.Tracker != nil {
		a.Tracker.Add(usage.Turn{Session: sessionID, Model: model, Usage: u, CostUSD: usd, Known: known})
	}
	return usd, known
}

// report logs err as a warning and hands it to OnError.
func (a *Agent) report(ctx context.Context, msg string, err error, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("agent", a.Name), slog.Any("error", err))
	a.logger().LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
	if a.OnError != nil {
		a.OnError(ctx, err)
	}
}
