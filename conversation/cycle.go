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
	// it) and, in SubmitWithTools, around each tool call. Their input
	// guardrails gate each Submit's first model call (the one call, or
	// the tool loop's first), their output guardrails check its final
	// response: a tripped guardrail fails the call with a
	// *middleware.GuardrailError and the history does not change.
	Hooks *middleware.Hooks
	// ToolLoop configures the tool loop of SubmitWithTools (its Tools are
	// offered on every SubmitWithTools call, after the call's own).
	ToolLoop middleware.ToolLoop
	// Compaction, when set, keeps each request inside the model's input
	// budget, the agent's way ([compact.Policy.Fit]: partial results, a
	// circuit breaker, a hard refusal over the context window). The
	// history keeps the view: after a successful call it is what the
	// call's last request sent (compressed, when it was; a compression
	// at any step of SubmitWithTools' loop included), then the messages
	// that followed, so the next call extends the last request byte for
	// byte. A compressed history is adopted only when the call succeeds.
	Compaction *compact.Policy
	// Tracker sums the usage and cost of every successful call, recorded
	// under Name and priced with the model's
	// Info().Price; nil means a tracker of the Cycle's own. Share one
	// between cycles to sum across them.
	Tracker *usage.Tracker
	// Name labels this cycle's calls in the Tracker (its "session").
	Name string
	// Logger receives the compaction policy's warnings when the policy
	// has no Logger of its own (New sets it); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Cycle is a conversation with a model: the history, and the calls that
// extend it. Create it with New.
type Cycle struct {
	cfg      Config
	base     llm.Model // the model as given
	model    llm.Model // hooks over base: one model call per Submit
	messages []llm.Message
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
	if cfg.Compaction != nil && cfg.Compaction.Logger == nil {
		cfg.Compaction.Logger = cfg.Logger
	}
	if cfg.Hooks != nil {
		c.model = middleware.Chain(model, cfg.Hooks.Middleware())
		c.cfg.ToolLoop.Invoker.Middleware = append(slices.Clip(cfg.ToolLoop.Invoker.Middleware), cfg.Hooks.ToolMiddleware())
	}
	return c
}

// WithMessages replaces the history with msgs (system messages included:
// this is how a system prompt is set) and returns c.
func (c *Cycle) WithMessages(msgs []llm.Message) *Cycle {
	c.messages = slices.Clone(msgs)
	return c
}

// PushMessage appends msgs to the history: tool results the caller ran,
// or, after SubmitStream, the streamed answer.
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
	return c.submit(ctx, c.cfg.Hooks.InputGate()(c.model), prompt, tools, nil)
}

// SubmitWithTools is Submit through the tool loop: while the model asks for
// tools, they run (see middleware.FunctionInvocation) and the model is
// called again. On success the user message and the whole turn (every
// assistant message and tool result) join the history.
func (c *Cycle) SubmitWithTools(ctx context.Context, prompt string, tools []tool.Tool) (*llm.Response, error) {
	loopCfg := c.cfg.ToolLoop
	loopCfg.Tools = tool.Merge(tools, loopCfg.Tools)
	var inner llm.Model = c.model
	var last *lastRequest
	if c.cfg.Compaction != nil {
		last = &lastRequest{}
		inner = compact.Guard(c.cfg.Compaction)(llm.Decorate(inner, last.wrap)) // every step of the loop inside the budget
	}
	// The input guardrails gate the turn's first model call, under the
	// tool loop: no tool runs before they passed.
	inner = c.cfg.Hooks.InputGate()(inner)
	return c.submit(ctx, middleware.FunctionInvocation(loopCfg)(inner), prompt, tool.Definitions(loopCfg.Tools), last)
}

func (c *Cycle) submit(ctx context.Context, m llm.Model, prompt string, tools []llm.ToolDefinition, last *lastRequest) (*llm.Response, error) {
	if c.cfg.Compaction != nil {
		// What the policy's strategy remembers belongs to this call: the
		// history is the view the last call sent.
		ctx = compact.WithState(ctx, &compact.State{})
	}
	// Appending never changes c.messages' visible length, so a failure
	// below leaves the history as it was.
	req, err := c.fit(ctx, c.request(append(c.messages, llm.UserText(prompt)), tools))
	if err != nil {
		return nil, err
	}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := c.checkOutput(ctx, req, resp); err != nil {
		return nil, err
	}
	c.messages = append(req.Messages, resp.Messages()...)
	if last != nil && last.req != nil {
		// The history is the view the last step of the loop sent (a
		// compression inside the loop included), then what followed it.
		tr := resp.Messages()
		k := len(tr)
		for k > 0 && tr[k-1].Role != llm.RoleAssistant {
			k--
		}
		if k > 0 {
			c.messages = append(slices.Clip(last.req.Messages), tr[k-1:]...)
		}
	}
	c.record(resp)
	return resp, nil
}

// checkOutput runs the output guardrails on a call's final response.
func (c *Cycle) checkOutput(ctx context.Context, req *llm.Request, resp *llm.Response) error {
	if !c.cfg.Hooks.HasOutputGuardrails() {
		return nil
	}
	return c.cfg.Hooks.RunOutputGuardrails(ctx, req, resp)
}

// lastRequest keeps the last request a tool loop's step sent, below the
// budget policy.
type lastRequest struct {
	req *llm.Request
}

// wrap keeps req, when the call is made, and passes it on.
func (l *lastRequest) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	l.req = req
	return next.Stream(ctx, req)
}

// SubmitMessages sends msgs, not the history, in one model call and
// returns the response. The history does not change; the usage is counted.
func (c *Cycle) SubmitMessages(ctx context.Context, msgs []llm.Message, tools []llm.ToolDefinition) (*llm.Response, error) {
	req := c.request(msgs, tools)
	resp, err := c.cfg.Hooks.InputGate()(c.model).Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := c.checkOutput(ctx, req, resp); err != nil {
		return nil, err
	}
	c.record(resp)
	return resp, nil
}

// SubmitStream streams one model call on the history plus a user message
// holding prompt. When ranging starts, the request is built (compressed by
// the Compaction policy, as Submit's is) and becomes the history, prompt
// included; when EventComplete arrives its usage is counted. The caller
// then adds the answer, the one way to finish a streamed turn:
//
//	var final *llm.Response
//	for ev, err := range c.SubmitStream(ctx, prompt, nil) {
//		if err != nil {
//			return err // the history is as it was
//		}
//		if ev.Type == llm.EventComplete {
//			final = ev.Response
//		}
//	}
//	c.PushMessage(final.Message)
//
// A stream that fails, or that the caller abandons before its
// EventComplete, takes the prompt back out: the history is as it was
// before the call, compression included.
func (c *Cycle) SubmitStream(ctx context.Context, prompt string, tools []llm.ToolDefinition) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		req, err := c.fit(ctx, c.request(append(c.messages, llm.UserText(prompt)), tools))
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		before := c.messages
		c.messages = slices.Clip(req.Messages)
		completed := false
		defer func() {
			if !completed {
				c.messages = before
			}
		}()
		for ev, err := range c.cfg.Hooks.InputGate()(c.model).Stream(ctx, req) {
			if err == nil && ev.Type == llm.EventComplete {
				if err := c.checkOutput(ctx, req, ev.Response); err != nil {
					yield(llm.Event{}, err) // in place of the completion
					return
				}
				completed = true
				c.record(ev.Response)
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Usage returns the totals of this cycle's successful calls (completed
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

// fit applies the compaction policy to req, when there is one.
func (c *Cycle) fit(ctx context.Context, req *llm.Request) (*llm.Request, error) {
	if c.cfg.Compaction == nil {
		return req, nil
	}
	if compact.StateFrom(ctx) == nil {
		ctx = compact.WithState(ctx, &compact.State{}) // the history is the last view sent
	}
	return c.cfg.Compaction.Fit(ctx, req, c.base.Info())
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
