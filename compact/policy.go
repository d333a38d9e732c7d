package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/observe"
)

// DefaultMaxFailures is how many compressions in a row may fail before a
// [Policy] stops calling its strategy, unless Policy.MaxFailures says
// otherwise.
const DefaultMaxFailures = 3

// Off is a strategy that never compresses. A [Policy] with Strategy: Off
// sends every request as it is, even one larger than the context window:
// the provider decides (compaction off is the caller's choice).
var Off Strategy = off{}

type off struct{}

func (off) Compress(_ context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	return nil, &CannotFitError{Strategy: "off", Tokens: counter.CountMessages(msgs), Budget: budget, Reason: "compaction is off"}
}

// Policy is the one way a request is kept inside a model's input budget:
// the agent, [Guard] and package conversation all apply it, through
// [Policy.Fit]. The zero value works: the default strategy (see Strategy)
// with the estimator counter for the model.
//
// A Policy keeps state (the circuit breaker, the default strategy's
// memory of what it sent, and what the messages of its recent requests
// counted, see [AdditiveCounter]): use it through a pointer, one per agent
// or conversation, and do not change its fields once in use. It tells a
// message it counted before by comparing it with the one it saw, whose
// blocks it shares: change a message of a conversation by replacing it
// (with a new Content slice), never by writing into its blocks.
type Policy struct {
	// Strategy compresses the messages of a request over the budget. Nil
	// means NewIncremental(DefaultPipeline(nil)): clear old tool results,
	// then drop the oldest whole turns, cache-friendly across requests.
	// [Off] never compresses.
	Strategy Strategy
	// Counter counts messages and tool definitions; nil means
	// [CounterFor] the model's name.
	Counter TokenCounter
	// Budget is the most input tokens a request may hold, messages and
	// tool definitions together; 0 means the model's input budget
	// ([llm.ModelInfo.InputBudget]). A request compresses only when it
	// holds more: one of exactly Budget tokens fits and is sent as it is.
	Budget int
	// Info, when its context window is known, replaces the model info Fit
	// is given (a context window set by hand).
	Info llm.ModelInfo
	// MaxFailures is how many compressions in a row may fail before the
	// policy stops calling the strategy (a circuit breaker: a failing
	// summarizer is not called on every request); 0 means
	// DefaultMaxFailures. A success resets the count; so does Reset.
	MaxFailures int
	// Logger records failed compressions (warning) and successful ones
	// (debug), never message contents; nil means slog.Default().
	Logger *slog.Logger

	failures atomic.Int32
	defOnce  sync.Once
	def      Strategy
	counts   countMemo // per-message counts of recent requests (additive counters)

	// The last request Fit sent as it was given, and its count (what
	// Count is asked next, for a spending limit).
	fitMu  sync.Mutex
	fitReq *llm.Request
	fitN   int
}

// Failures returns how many compressions in a row have failed.
func (p *Policy) Failures() int { return int(p.failures.Load()) }

// Reset closes the circuit breaker: the strategy is called again.
func (p *Policy) Reset() { p.failures.Store(0) }

// Open reports whether the circuit breaker is open: MaxFailures
// compressions in a row have failed, and the strategy is not called until
// one succeeds or Reset is called.
func (p *Policy) Open() bool { return p.Failures() >= p.maxFailures() }

func (p *Policy) maxFailures() int {
	if p.MaxFailures > 0 {
		return p.MaxFailures
	}
	return DefaultMaxFailures
}

func (p *Policy) strategy() Strategy {
	if p.Strategy != nil {
		return p.Strategy
	}
	p.defOnce.Do(func() { p.def = NewIncremental(DefaultPipeline(nil)) })
	return p.def
}

// CounterFor returns the counter the policy uses for a model: Counter, or
// the package's [CounterFor] the model.
func (p *Policy) CounterFor(info llm.ModelInfo) TokenCounter {
	if p.Counter != nil {
		return p.Counter
	}
	return CounterFor(info)
}

// Limits returns the budget and the hard limit (the context window) the
// policy applies for a model; both are 0 when unknown.
func (p *Policy) Limits(info llm.ModelInfo) (budget, window int) {
	if p.Info.Known() {
		info = p.Info
	}
	budget = p.Budget
	if budget <= 0 {
		budget = info.InputBudget()
	}
	return budget, info.ContextWindow
}

// Fit returns the request to send to a model described by info: req itself
// when its messages and tool definitions fit the budget (or no budget is
// known), otherwise a copy whose messages the strategy compressed to the
// budget less the tools' count. req and its messages are never modified.
//
// The rules, in order:
//   - The user's newest message is never dropped: a result without it
//     counts as a failed compression.
//   - A failed compression still helps when it shrank the messages (a
//     strategy's partial result is sent instead of the original).
//   - After MaxFailures failures in a row the strategy is not called (the
//     breaker is open) until one succeeds or Reset is called.
//   - Whatever is sent must fit the context window: a request that is
//     still larger than the window is not sent, and Fit returns an
//     *llm.Error of KindContextLength (some servers silently cut such a
//     prompt from the front instead of failing). Over the budget but
//     within the window, the request goes out with a warning: the budget
//     keeps room for the answer and for counting error.
//   - A compression that ends because ctx ended returns a KindCancelled
//     error.
func (p *Policy) Fit(ctx context.Context, req *llm.Request, info llm.ModelInfo) (*llm.Request, error) {
	budget, window := p.Limits(info)
	if budget <= 0 {
		return req, nil
	}
	counter := p.CounterFor(info)
	tools := 0
	if len(req.Tools) > 0 {
		tools = counter.CountTools(req.Tools)
	}
	n := p.countMessages(counter, req.Messages)
	if n+tools <= budget {
		p.noteFit(req, n+tools)
		return req, nil
	}
	strategy := p.strategy()
	if strategy == Off {
		p.noteFit(req, n+tools)
		p.logger().LogAttrs(ctx, slog.LevelDebug, "compact: compaction is off; sending the request over the budget",
			slog.Int("tokens", n), slog.Int("tools", tools), slog.Int("budget", budget), slog.Int("window", window))
		return req, nil
	}
	msgBudget := max(budget-tools, 0)

	var (
		out []llm.Message
		rep Report
		err error
	)
	switch {
	case p.Open():
		err = &CannotFitError{Strategy: "policy", Tokens: n, Budget: msgBudget,
			Reason: fmt.Sprintf("compression is suspended after %d failures in a row", p.Failures())}
	default:
		out, rep, err = compress(ctx, strategy, req.Messages, n, msgBudget, counter)
		if err == nil {
			p.failures.Store(0)
			p.logger().LogAttrs(ctx, slog.LevelDebug, "compact: request compressed",
				slog.Int("tokens", n), slog.Int("tools", tools), slog.Int("budget", budget),
				slog.Int("tokens_after", rep.TokensAfter), slog.Int("messages", len(req.Messages)),
				slog.Int("messages_after", len(out)), slog.String("strategy", rep.Strategy), slog.String("detail", rep.Detail))
			return withMessages(req, out), nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, llm.Cancelled("compact", ctxErr)
		}
		p.failures.Add(1)
	}

	send, after := req, n
	if out != nil && errors.Is(err, ErrCannotFit) && keepsNewestUser(req.Messages, out) {
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
	p.logger().LogAttrs(ctx, slog.LevelWarn, "compact: compression failed; sending the request over the budget",
		slog.Int("tokens", n), slog.Int("tools", tools), slog.Int("budget", budget),
		slog.Int("tokens_after", after), slog.Int("failures_in_a_row", p.Failures()), slog.Any("error", err))
	return send, nil
}

// Count returns the input tokens of req (messages and tool definitions)
// as the policy counts them for a model described by info: with its
// counter, and, for an additive counter, from what it remembers of recent
// requests, so counting a request Fit has just seen (or one that extends
// it) costs a count of its new messages only, and counting the very
// request Fit has just passed on as it was costs nothing. Spending limits
// (package budget) count what is sent with it.
func (p *Policy) Count(req *llm.Request, info llm.ModelInfo) int {
	p.fitMu.Lock()
	if req == p.fitReq {
		n := p.fitN
		p.fitMu.Unlock()
		return n
	}
	p.fitMu.Unlock()
	counter := p.CounterFor(info)
	n := p.countMessages(counter, req.Messages)
	if len(req.Tools) > 0 {
		n += counter.CountTools(req.Tools)
	}
	return n
}

// noteFit remembers that Fit sent req, of n tokens, as it was given.
func (p *Policy) noteFit(req *llm.Request, n int) {
	p.fitMu.Lock()
	p.fitReq, p.fitN = req, n
	p.fitMu.Unlock()
}

// countMessages returns counter's count of msgs. An additive counter's
// count is taken from what the policy remembers of recent requests for
// the messages they share with msgs from the start, so a request that
// extends an earlier one costs a count of its new messages (a tool loop's
// next step, an agent's next turn over the same history).
func (p *Policy) countMessages(counter TokenCounter, msgs []llm.Message) int {
	if a, ok := counter.(AdditiveCounter); ok {
		return p.counts.count(a, msgs)
	}
	return counter.CountMessages(msgs)
}

// compress runs the strategy on msgs (n tokens) for a budget, in a
// compaction span when ctx carries an observe.Observer, and checks its
// result: not empty, the user's newest message kept.
func compress(ctx context.Context, strategy Strategy, msgs []llm.Message, n, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	ctx, span := observe.Start(ctx, observe.PhaseCompaction)
	// The strategy gets its own slice: a strategy must not modify its
	// input, but the caller's request is not ours to risk.
	out, rep, err := Apply(ctx, strategy, slices.Clone(msgs), budget, counter)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("compact: %s returned no messages", rep.Strategy)
	}
	if err == nil && !keepsNewestUser(msgs, out) {
		err = &CannotFitError{Strategy: rep.Strategy, Tokens: rep.TokensAfter, Budget: budget, Reason: "the result dropped the user's newest message"}
		out = nil
	}
	span.SetString(observe.AttrCompactionStrategy, rep.Strategy)
	span.SetInt(observe.AttrCompactionBudget, budget)
	span.SetInt(observe.AttrCompactionTokensBefore, n)
	span.SetInt(observe.AttrCompactionMessagesBefore, len(msgs))
	if out != nil {
		span.SetInt(observe.AttrCompactionTokensAfter, rep.TokensAfter)
		span.SetInt(observe.AttrCompactionMessagesAfter, len(out))
	}
	span.End(err)
	return out, rep, err
}

func (p *Policy) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// withMessages returns a shallow copy of req with msgs as its messages.
func withMessages(req *llm.Request, msgs []llm.Message) *llm.Request {
	r := *req
	r.Messages = msgs
	return &r
}

// keepsNewestUser reports whether out still holds the newest user message
// of in that is the user's own words (not a carrier of tool results),
// unchanged.
func keepsNewestUser(in, out []llm.Message) bool {
	i := newestUser(in)
	if i < 0 {
		return true
	}
	j := newestUser(out)
	return j >= 0 && sameMessage(in[i], out[j])
}

func newestUser(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && !onlyToolResults(msgs[i].Content) {
			return i
		}
	}
	return -1
}

func onlyToolResults(bs []llm.Block) bool {
	if len(bs) == 0 {
		return false
	}
	for _, b := range bs {
		if _, ok := b.(llm.ToolResult); !ok {
			return false
		}
	}
	return true
}

// sameMessage compares two messages: the same content array (a strategy
// that keeps a message keeps its blocks) or deeply equal content.
func sameMessage(a, b llm.Message) bool {
	if a.Role != b.Role || len(a.Content) != len(b.Content) {
		return false
	}
	if len(a.Content) > 0 && &a.Content[0] == &b.Content[0] {
		return true
	}
	return commonPrefix([]llm.Message{a}, []llm.Message{b}) == 1
}
