package agent

import (
	"context"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
)

// Telemetry observes an agent's runs: a span (or whatever the
// implementation records) per run, per model call, per attempt of a model
// call and per tool call, and metrics. It is agcore's one telemetry seam:
// an [observe.Observer] (the phases below the pipeline: compaction,
// persistence, and the trace context written onto provider requests and
// MCP calls) that also wraps the pipeline. Package otelagent implements it
// with OpenTelemetry, following the GenAI semantic conventions; this
// interface keeps OpenTelemetry out of every program that does not trace.
//
// [New] places the pieces in the pipeline: ModelMiddleware first among the
// model middleware after the hooks (one call per model call of the tool
// loop, retries included), OnRetry beside Config.Retry.OnRetry (told of
// each retry of a model call, with the context of that call),
// ToolMiddleware outermost around each tool call (hooks and approval
// included). StartRun is called when a run starts and its end function
// once the run is entirely over, persistence included.
//
// The context StartRun is given already carries the Telemetry as the run's
// observe.Observer ([observe.With]); StartRun may return one carrying
// another Observer for the run (otelagent's knows the run's identity). The
// tool loop, the budget policy, the model calls, the tool calls (and the
// MCP calls and HTTP requests they make) and persistence all get the
// returned context or one derived from it, so the compaction and
// persistence phases reach the Observer and its trace context is
// propagated onto provider requests and MCP calls.
//
// Implementations must be safe for concurrent use.
type Telemetry interface {
	observe.Observer
	// StartRun starts a run (when ranging over its updates begins, before
	// its session is loaded) and returns the run's context and the
	// function that ends it, called once when the run is over.
	StartRun(ctx context.Context, run RunInfo) (context.Context, func(RunResult))
	// ModelMiddleware wraps each model call; nil adds nothing.
	ModelMiddleware() middleware.Middleware
	// OnRetry is told of each retry of a model call, before its wait, as
	// middleware.RetryConfig.OnRetry is: the attempt that failed (from 1),
	// the wait and the error.
	OnRetry(ctx context.Context, attempt int, delay time.Duration, err error)
	// ToolMiddleware wraps each tool call; nil adds nothing.
	ToolMiddleware() tool.Middleware
}

// RunInfo describes a run as it starts, for [Telemetry.StartRun].
type RunInfo struct {
	Agent   string // Config.Name
	AgentID string // Config.ID
	// SessionID is the session the run continues; empty without one.
	SessionID string
	// Model is what the pipeline knows of the model: Config.ModelInfo or
	// the model's Info (provider, name, price).
	Model llm.ModelInfo
	// Input are the caller's new messages; they must not be changed.
	Input []llm.Message
}

// RunResult is how a run ended, for the function [Telemetry.StartRun]
// returns.
type RunResult struct {
	// RunID is the run's id; empty when the run failed before it had one
	// (a session that could not be loaded).
	RunID string
	// Response is the run's response; nil when it failed. Its
	// PersistErr is already known.
	Response *Response
	// Err is the error that ended the run (ErrAbandoned when the caller
	// stopped ranging before the finish).
	Err error
}

// observe starts the run's telemetry, when the agent has any, and returns
// the run's context.
func (s *Stream) observe(ctx context.Context) context.Context {
	a := s.agent
	if a.cfg.Telemetry == nil {
		return ctx
	}
	sessionID := s.opts.SessionID
	if s.opts.Session != nil {
		sessionID = s.opts.Session.ID
	}
	ctx, s.endRun = a.cfg.Telemetry.StartRun(observe.With(ctx, a.cfg.Telemetry), RunInfo{
		Agent:     a.cfg.Name,
		AgentID:   a.cfg.ID,
		SessionID: sessionID,
		Model:     a.Info(),
		Input:     s.input,
	})
	return ctx
}

// over ends the run: its telemetry, then whoever waits for it. r is nil
// when the run failed before it was prepared.
func (s *Stream) over(r *run) {
	if s.endRun != nil {
		res := RunResult{Response: s.resp, Err: s.err}
		if r != nil {
			res.RunID = r.id
		}
		s.endRun(res)
	}
	close(s.done)
}

// persistObserved persists the turn in a persistence phase span, when the
// agent has telemetry and the run a session to persist to. (Without
// telemetry it does not even look for an observer: a lookup in ctx, which
// context.WithoutCancel made, costs an allocation.)
func (r *run) persistObserved(ctx context.Context, resp *Response) error {
	if r.sess == nil || r.agent.cfg.Telemetry == nil {
		return r.persist(ctx, resp)
	}
	ctx, span := observe.Start(ctx, observe.PhasePersistence)
	span.SetString(observe.AttrConversationID, r.sess.ID)
	span.SetString(observe.AttrRunID, r.id)
	span.SetInt(observe.AttrMessages, len(r.input)+len(resp.Messages))
	err := r.persist(ctx, resp)
	span.End(err)
	return err
}

// onRetry tells user (when set) and then the telemetry of each retry.
func onRetry(user func(context.Context, int, time.Duration, error), tel Telemetry) func(context.Context, int, time.Duration, error) {
	return func(ctx context.Context, attempt int, delay time.Duration, err error) {
		if user != nil {
			user(ctx, attempt, delay, err)
		}
		tel.OnRetry(ctx, attempt, delay, err)
	}
}
