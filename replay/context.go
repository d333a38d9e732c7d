package replay

import (
	"context"
	"iter"
	"sync"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// A run recorded through its context: the recorder is chosen per run, not
// per agent, so that one agent serving many sessions at once (a server)
// records each run in its session's record and the calls of concurrent
// runs never mix.

type ctxKey struct{}

// ctxRun is what a context carries: the recorder, and the turn to mark at
// the run's first recorded call (nil when none).
type ctxRun struct {
	rec  *Recorder
	once sync.Once
	turn *Turn
}

// WithRecorder returns ctx carrying rec: the model calls made under it go
// through [ContextMiddleware] into rec, and the tool results through
// [ContextToolMiddleware]. Turns are marked by rec's user
// ([Recorder.Turn]) or inferred. See [WithTurn] to mark the run's turn.
func WithRecorder(ctx context.Context, rec *Recorder) context.Context {
	return context.WithValue(ctx, ctxKey{}, &ctxRun{rec: rec})
}

// WithTurn is [WithRecorder] for one run whose turn is input on session:
// the turn is marked in rec ([Recorder.Turn]) at the first model call
// made under ctx, not before. So a run that fails before calling the
// model leaves no turn in the record, and the mark is made once the run
// holds its session (an agent serializes the runs of a session), which
// keeps the turns of a session in the order they ran. A context carries
// one run: the runs of one recorder must not overlap (their calls would
// be counted in the latest turn). Input's system messages are left out,
// as an agent leaves them out of a run's input.
func WithTurn(ctx context.Context, rec *Recorder, session string, input []llm.Message) context.Context {
	t := &Turn{Session: session}
	for _, m := range input {
		if m.Role != llm.RoleSystem {
			t.Input = append(t.Input, m)
		}
	}
	return context.WithValue(ctx, ctxKey{}, &ctxRun{rec: rec, turn: t})
}

// FromContext returns the recorder ctx carries (WithRecorder, WithTurn),
// or nil.
func FromContext(ctx context.Context) *Recorder {
	if c := runOf(ctx); c != nil {
		return c.rec
	}
	return nil
}

func runOf(ctx context.Context) *ctxRun {
	c, _ := ctx.Value(ctxKey{}).(*ctxRun)
	if c == nil || c.rec == nil {
		return nil
	}
	return c
}

// recorder returns the run's recorder, its turn marked.
func (c *ctxRun) recorder() *Recorder {
	if c.turn != nil {
		c.once.Do(func() { c.rec.Turn(c.turn.Session, c.turn.Input) })
	}
	return c.rec
}

// ContextMiddleware returns the model middleware that records each call
// in the recorder of the call's context ([WithRecorder], [WithTurn]), and
// passes the calls of a context without one through untouched (the cost
// of a context lookup). Place it as [Recorder.Middleware] (for
// agent.Config.Middleware: below hooks and telemetry, above retries); an
// agent's runs pass their context to its pipeline, so a sub-agent's or a
// summarizer's calls made within a run go to the run's record. Its type
// is middleware.Middleware's.
func ContextMiddleware() func(llm.Model) llm.Model {
	return func(next llm.Model) llm.Model { return &byContext{Model: next} }
}

// ContextToolMiddleware returns the tool middleware that records each
// tool call's result in the recorder of the call's context (for
// agent.Config.ToolMiddleware), as [Recorder.ToolMiddleware] does.
func ContextToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			c := runOf(ctx)
			if c == nil {
				return next(ctx, call)
			}
			return c.recorder().ToolMiddleware()(next)(ctx, call)
		}
	}
}

// byContext is ContextMiddleware's model.
type byContext struct{ llm.Model }

func (m *byContext) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return m.model(ctx).Generate(ctx, req)
}

func (m *byContext) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.model(ctx).Stream(ctx, req)
}

// model is the model a call in ctx goes through: the run's recording
// when ctx carries a run, else the model below.
func (m *byContext) model(ctx context.Context) llm.Model {
	if c := runOf(ctx); c != nil {
		return &recording{Model: m.Model, r: c.recorder()}
	}
	return m.Model
}
