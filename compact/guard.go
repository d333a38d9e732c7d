package compact

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"

	"github.com/agcore/agcore/llm"
)

// GuardConfig configures [Guard].
type GuardConfig struct {
	// Strategy compresses the messages of a request over the budget.
	// Required. Use one that keeps requests cache-friendly:
	// NewIncremental(DefaultPipeline(summarizer)).
	Strategy Strategy
	// Counter counts messages and tool definitions. Required; use the one
	// the agent uses ([CounterFor] the model's id).
	Counter TokenCounter
	// Budget is the most input tokens a request may hold, messages and
	// tool definitions together. Zero means the input budget of Info
	// ([llm.ModelInfo.InputBudget]).
	Budget int
	// Info describes the model's limits: its input budget is the budget
	// when Budget is zero, and its context window is the hard limit (see
	// [Guard]). When its context window is unknown (zero), the wrapped
	// model's Info is used instead. Set it when the limits differ from
	// what the adapter reports (a context window given on a command line).
	Info llm.ModelInfo
	// Logger records failed compressions (warning) and successful ones
	// (debug), never message contents; nil means slog.Default().
	Logger *slog.Logger
}

// Guard returns a model middleware that keeps every request it passes on
// inside the budget. Its type is assignable to middleware.Middleware.
//
// For each Generate and Stream call it counts the request's messages and
// tool definitions. A request within the budget goes on unchanged (the
// same pointer). A request over the budget goes on as a copy whose
// messages are the strategy's result for the budget less the tools' count;
// the caller's request and its messages are never modified.
//
// When the strategy fails, the guard sends the best it has (the strategy's
// partial result when it shrank the messages, else the messages as
// received) and logs a warning, as the agent does with its own compression:
// the budget keeps room for the answer and for counting error, so a request
// over it may still be accepted. The exception is a request that is still
// larger than the whole context window: it cannot succeed, and some
// servers silently cut such a prompt from the front instead of failing, so
// the guard does not send it and the call fails with an *[llm.Error] of
// [llm.KindContextLength] (not retryable) whose cause is the strategy's
// error. A strategy that fails because ctx ended fails the call with a
// KindCancelled error. Without a known budget (no Budget, no known context
// window) the guard passes every request on unchanged.
//
// Put the guard inside the tool loop and outside retries:
//
//	model := middleware.Chain(adapter,
//		middleware.FunctionInvocation(loop), // each step is a model call...
//		compact.Guard(cfg),                  // ...checked here
//		hooks.Middleware(),
//		middleware.Retry(retry),             // retries resend the compressed request
//		middleware.Logging(logCfg),
//	)
//
// so that each step of a turn is checked (an agent compresses only once,
// before the turn, and a tool-heavy turn grows by an assistant message and
// its tool results at every step) and a retried call is not compressed
// again. What the tool loop records, and the agent persists, is the full
// transcript: only what is sent shrinks.
//
// An [Incremental] keeps what it remembers per conversation (told apart by
// the messages up to the first user message) and extends a previous result
// only when its next input starts with exactly the previous input, so one
// guard serves any number of conversations, concurrently; a
// conversation's entry is replaced by its next compression. The guard may
// share its Incremental with the agent's own compression (Agent.Compression):
// every call either extends the previous result, checked against the
// current budget, or compresses afresh, so sharing never lets a request
// out of order or over the budget. It helps when a turn that started
// uncompressed outgrew the budget: the next turn's history starts with the
// input the guard last compressed, so the agent's request extends the
// guard's last one and the provider's prompt cache keeps hitting.
func Guard(cfg GuardConfig) func(llm.Model) llm.Model {
	if cfg.Strategy == nil || cfg.Counter == nil {
		panic("compact: Guard needs a Strategy and a Counter")
	}
	return func(next llm.Model) llm.Model { return &guard{cfg: cfg, next: next} }
}

type guard struct {
	cfg  GuardConfig
	next llm.Model
}

// Info returns the wrapped model's Info.
func (g *guard) Info() llm.ModelInfo { return g.next.Info() }

// Generate sends req, compressed when it is over the budget.
func (g *guard) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	r, err := g.fit(ctx, req)
	if err != nil {
		return nil, err
	}
	return g.next.Generate(ctx, r)
}

// Stream sends req, compressed when it is over the budget. Compression
// happens when ranging starts; its error is the stream's only item.
func (g *guard) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r, err := g.fit(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range g.next.Stream(ctx, r) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// limits returns the budget and the context window (0 when unknown).
func (g *guard) limits() (budget, window int) {
	info := g.cfg.Info
	if !info.Known() {
		info = g.next.Info()
	}
	budget = g.cfg.Budget
	if budget <= 0 {
		budget = info.InputBudget()
	}
	return budget, info.ContextWindow
}

// fit returns the request to send: req when it is within the budget,
// otherwise a copy with compressed messages.
func (g *guard) fit(ctx context.Context, req *llm.Request) (*llm.Request, error) {
	budget, window := g.limits()
	if budget <= 0 {
		return req, nil
	}
	counter := g.cfg.Counter
	tools := 0
	if len(req.Tools) > 0 {
		tools = counter.CountTools(req.Tools)
	}
	n := counter.CountMessages(req.Messages)
	if n+tools <= budget {
		return req, nil
	}
	msgBudget := max(budget-tools, 0)
	// The strategy gets its own slice: a strategy must not modify its
	// input, but the caller's request is not ours to risk.
	out, rep, err := Apply(ctx, g.cfg.Strategy, slices.Clone(req.Messages), msgBudget, counter)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("compact: %s returned no messages", rep.Strategy)
	}
	if err == nil {
		g.logger().LogAttrs(ctx, slog.LevelDebug, "compact: request compressed",
			slog.Int("tokens", n), slog.Int("tools", tools), slog.Int("budget", budget),
			slog.Int("tokens_after", rep.TokensAfter), slog.Int("messages", len(req.Messages)),
			slog.Int("messages_after", len(out)), slog.String("strategy", rep.Strategy), slog.String("detail", rep.Detail))
		return withMessages(req, out), nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, llm.Cancelled("compact", ctxErr)
	}

	send, after := req, n
	if out != nil && errors.Is(err, ErrCannotFit) {
		if c := counter.CountMessages(out); c < n {
			send, after = withMessages(req, out), c
		}
	}
	if window > 0 && after+tools > window {
		return nil, &llm.Error{
			Kind:     llm.KindContextLength,
			Provider: "compact",
			Message: fmt.Sprintf("the request holds %d tokens (%d of them tool definitions), more than the context window of %d, and compression failed: %v",
				after+tools, tools, window, err),
			Err: err,
		}
	}
	g.logger().LogAttrs(ctx, slog.LevelWarn, "compact: compression failed; sending the request over the budget",
		slog.Int("tokens", n), slog.Int("tools", tools), slog.Int("budget", budget),
		slog.Int("tokens_after", after), slog.Any("error", err))
	return send, nil
}

func (g *guard) logger() *slog.Logger {
	if g.cfg.Logger != nil {
		return g.cfg.Logger
	}
	return slog.Default()
}

// withMessages returns a shallow copy of req with msgs as its messages.
func withMessages(req *llm.Request, msgs []llm.Message) *llm.Request {
	r := *req
	r.Messages = msgs
	return &r
}
