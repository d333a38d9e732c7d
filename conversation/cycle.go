package conversation

import (
	"context"
	"iter"
	"log/slog"
	"slices"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/usage"
)

// DefaultMaxCompactionFailures is how many compressions in a row may fail
// before a Cycle stops trying, unless Compaction.MaxFailures says otherwise.
const DefaultMaxCompactionFailures = 3

// Config configures a Cycle. The zero value sends requests with the model's
// defaults, no hooks and no compaction.
type Config struct {
	// Model is sent as Request.Model; empty means the adapter's default.
	Model string
	// MaxTokens and Temperature go into every request; zero values leave
	// the model's defaults.
	MaxTokens   int
	Temperature *float64
	// Hooks, when set, run around each model call (PreRequest may block
	// it) and, in SubmitWithTools, around each tool call.
	Hooks *middleware.Hooks
	// ToolLoop configures the tool loop of SubmitWithTools.
	ToolLoop middleware.ToolLoop
	// Compaction, when set, compresses a request over the budget.
	Compaction *Compaction
	// Tracker sums the usage and cost of every successful call (the
	// seed's CostTracker), recorded under Name and priced with the model's
	// Info().Price; nil means a tracker of the Cycle's own. Share one
	// between cycles to sum across them.
	Tracker *usage.Tracker
	// Name labels this cycle's calls in the Tracker (its "session").
	Name string
	// Logger receives warnings (failed compressions); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Compaction compresses the conversation before a call when it is over the
// budget. The compressed history is adopted only when the call succeeds.
type Compaction struct {
	Strategy compact.Strategy
	Counter  compact.TokenCounter
	// Budget is the most tokens the messages may hold; 0 means the model's
	// input budget less the tools' count (no compaction when the model's
	// context window is unknown).
	Budget int
	// MaxFailures is how many compressions in a row may fail before the
	// Cycle stops compressing; 0 means DefaultMaxCompactionFailures.
	MaxFailures int
}

// Cycle is a conversation with a model: the history, and the calls that
// extend it (the seed's LlmCycle). Create it with New.
type Cycle struct {
	cfg      Config
	base     llm.Model // the model as given
	model    llm.Model // hooks over base: one model call per Submit
	loop     llm.Model // the tool loop over model
	messages []llm.Message
	failures int // compressions failed in a row
	tracker  *usage.Tracker
}

// New returns a Cycle over model with an empty history. model is the
// pipeline below hooks and tool loop (an adapter, perhaps wrapped in
// middleware.Retry and middleware.Logging); it must not contain a tool loop
// of its own, which would run the tools before SubmitWithTools sees them.
func New(model llm.Model, cfg Config) *Cycle {
	c := &Cycle{cfg: cfg, base: model, model: model, tracker: cfg.Tracker}
	if c.tracker == nil {
		c.tracker = &usage.Tracker{}
	}
	loopCfg := cfg.ToolLoop
	if cfg.Hooks != nil {
		c.model = middleware.Chain(model, cfg.Hooks.Middleware())
		loopCfg.Invoker.Middleware = append(slices.Clip(loopCfg.Invoker.Middleware), cfg.Hooks.ToolMiddleware())
	}
	c.loop = middleware.Chain(c.model, middleware.FunctionInvocation(loopCfg))
	return c
}

// WithMessages replaces the history with msgs (system messages included:
// this is how a system prompt is set) and returns c.
func (c *Cycle) WithMessages(msgs []llm.Message) *Cycle {
	c.messages = slices.Clone(msgs)
	return c
}

// ExtendMessages appends msgs to the history.
func (c *Cycle) ExtendMessages(msgs []llm.Message) {
	c.messages = append(c.messages, msgs...)
}

// PushMessage appends msgs to the history; after SubmitStream, it records
// the turn when Commit is not used.
func (c *Cycle) PushMessage(msgs ...llm.Message) {
	c.messages = append(c.messages, msgs...)
}

// Messages returns the history. The slice is the Cycle's own: read it, do
// not change its elements (appending to it is safe).
func (c *Cycle) Messages() []llm.Message {
	return slices.Clip(c.messages)
}

// Submit sends the history and a user message holding prompt, with tools
// declared to the model, in one model call. On success the user message
// and the response's messages join the history and the usage is counted;
// on failure nothing changes. A response asking for tool calls leaves them
// to the caller (push their results with PushMessage).
func (c *Cycle) Submit(ctx context.Context, prompt string, tools []llm.ToolDefinition) (*llm.Response, error) {
	return c.submit(ctx, c.model, prompt, tools)
}

// SubmitWithTools is Submit through the tool loop: while the model asks for
// tools, they run (see middleware.FunctionInvocation) and the model is
// called again. On success the user message and the whole turn (every
// assistant message and tool result) join the history.
func (c *Cycle) SubmitWithTools(ctx context.Context, prompt string, tools []tool.Tool) (*llm.Response, error) {
	defs := make([]llm.ToolDefinition, len(tools))
	for i, t := range tools {
		defs[i] = tool.Definition(t)
	}
	return c.submit(ctx, c.loop, prompt, defs)
}

func (c *Cycle) submit(ctx context.Context, m llm.Model, prompt string, tools []llm.ToolDefinition) (*llm.Response, error) {
	// Appending never changes c.messages' visible length, so a failure
	// below leaves the history as it was.
	msgs := c.compact(ctx, append(c.messages, llm.UserText(prompt)), tools)
	resp, err := m.Generate(ctx, c.request(msgs, tools))
	if err != nil {
		return nil, err
	}
	c.messages = append(msgs, resp.Messages()...)
	c.record(resp)
	return resp, nil
}

// SubmitMessages sends msgs, not the history, in one model call and
// returns the response. The history does not change; the usage is counted.
func (c *Cycle) SubmitMessages(ctx context.Context, msgs []llm.Message, tools []llm.ToolDefinition) (*llm.Response, error) {
	resp, err := c.model.Generate(ctx, c.request(msgs, tools))
	if err != nil {
		return nil, err
	}
	c.record(resp)
	return resp, nil
}

// SubmitStream streams one model call on the history plus a user message
// holding prompt. It does not change the history or the usage (the seed's
// FIX-E): when the stream's EventComplete arrives, record the turn with
// Commit(prompt, event.Response). A stream that fails or is abandoned thus
// leaves the Cycle as it was. The request is built when ranging starts.
func (c *Cycle) SubmitStream(ctx context.Context, prompt string, tools []llm.ToolDefinition) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		msgs := c.compact(ctx, append(c.messages, llm.UserText(prompt)), tools)
		for ev, err := range c.model.Stream(ctx, c.request(msgs, tools)) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Commit records a turn that SubmitStream completed: a user message holding
// prompt and resp's messages join the history, and resp's usage is counted.
func (c *Cycle) Commit(prompt string, resp *llm.Response) {
	c.messages = append(c.messages, llm.UserText(prompt))
	c.messages = append(c.messages, resp.Messages()...)
	c.record(resp)
}

// Usage returns the totals of this cycle's successful calls (committed
// ones for SubmitStream): tokens, and the cost in USD, complete unless some
// call's model had no known price (see usage.Totals.CostKnown).
func (c *Cycle) Usage() usage.Totals { return c.tracker.Session(c.cfg.Name) }

// Tracker returns the tracker the cycle records its calls in.
func (c *Cycle) Tracker() *usage.Tracker { return c.tracker }

func (c *Cycle) request(msgs []llm.Message, tools []llm.ToolDefinition) *llm.Request {
	return &llm.Request{
		Model:       c.cfg.Model,
		Messages:    msgs,
		Tools:       tools,
		MaxTokens:   c.cfg.MaxTokens,
		Temperature: c.cfg.Temperature,
	}
}

// compact compresses msgs when compaction is configured, has not failed
// too often, and msgs are over the budget; otherwise, or when the strategy
// fails, it returns msgs.
func (c *Cycle) compact(ctx context.Context, msgs []llm.Message, tools []llm.ToolDefinition) []llm.Message {
	cc := c.cfg.Compaction
	if cc == nil || cc.Strategy == nil || cc.Counter == nil {
		return msgs
	}
	maxFail := cc.MaxFailures
	if maxFail <= 0 {
		maxFail = DefaultMaxCompactionFailures
	}
	if c.failures >= maxFail {
		return msgs
	}
	budget := cc.Budget
	if budget <= 0 {
		info := c.base.Info()
		if !info.Known() {
			return msgs
		}
		budget = max(info.InputBudget()-cc.Counter.CountTools(tools), 0)
	}
	if cc.Counter.CountMessages(msgs) <= budget {
		return msgs
	}
	out, err := cc.Strategy.Compress(ctx, msgs, budget, cc.Counter)
	if err != nil {
		c.failures++
		c.logger().LogAttrs(ctx, slog.LevelWarn, "conversation: compression failed; sending the history uncompressed",
			slog.Int("budget", budget), slog.Int("failures_in_a_row", c.failures), slog.Any("error", err))
		return msgs
	}
	c.failures = 0
	return out
}

func (c *Cycle) logger() *slog.Logger {
	if c.cfg.Logger != nil {
		return c.cfg.Logger
	}
	return slog.Default()
}

// record counts a successful call's usage for the model that answered.
func (c *Cycle) record(resp *llm.Response) {
	model := resp.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		model = c.base.Info().Name
	}
	usd, known := usage.CostOf(c.base.Info(), resp.Usage)
	c.tracker.Add(usage.Turn{Session: c.cfg.Name, Model: model, Usage: resp.Usage, CostUSD: usd, Known: known})
}
