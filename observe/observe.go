package observe

import "context"

// Phase names an internal phase of a run that gets its own span.
type Phase string

// The phases agcore reports through [Start].
const (
	// PhaseCompaction is one compression of a request by the budget policy
	// (compact.Policy.Fit): it runs only when a request is over its budget.
	PhaseCompaction Phase = "compaction"
	// PhasePersistence is the append of a finished turn to its session's
	// store (agent, after the model's last answer).
	PhasePersistence Phase = "persistence"
)

// Attribute keys the phases set on their spans. They are agcore's own
// names (the OpenTelemetry GenAI conventions have none for these phases),
// except gen_ai.conversation.id.
const (
	// AttrCompactionStrategy is the strategy that compressed the request.
	AttrCompactionStrategy = "agcore.compaction.strategy"
	// AttrCompactionBudget is the token budget the messages had to fit.
	AttrCompactionBudget = "agcore.compaction.budget"
	// AttrCompactionTokensBefore and AttrCompactionTokensAfter count the
	// request's message tokens before and after.
	AttrCompactionTokensBefore = "agcore.compaction.tokens_before"
	AttrCompactionTokensAfter  = "agcore.compaction.tokens_after"
	// AttrCompactionMessagesBefore and AttrCompactionMessagesAfter count
	// its messages.
	AttrCompactionMessagesBefore = "agcore.compaction.messages_before"
	AttrCompactionMessagesAfter  = "agcore.compaction.messages_after"
	// AttrConversationID is the session a turn is persisted to (the GenAI
	// conventions' conversation id).
	AttrConversationID = "gen_ai.conversation.id"
	// AttrRunID is the id of the run (agent.Response.RunID).
	AttrRunID = "agcore.run.id"
	// AttrMessages is how many messages a persisted turn holds.
	AttrMessages = "agcore.persistence.messages"
)

// Observer receives the phases of a run and propagates its trace context.
// Implementations must be safe for concurrent use.
type Observer interface {
	// Start opens a span for phase as a child of the span in ctx and
	// returns the context for the phase's work and the span, which the
	// caller ends.
	Start(ctx context.Context, phase Phase) (context.Context, Span)
	// Inject writes the trace context of ctx (the current span, baggage)
	// as text headers, calling set once per header.
	Inject(ctx context.Context, set func(key, value string))
}

// Span is an open phase span.
type Span interface {
	// SetInt and SetString record an attribute.
	SetInt(key string, value int)
	SetString(key, value string)
	// End closes the span; a non-nil err marks it failed.
	End(err error)
}

type ctxKey struct{}

// With returns a copy of ctx that carries o. A nil o returns ctx.
func With(ctx context.Context, o Observer) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, o)
}

// From returns the Observer ctx carries, or nil.
func From(ctx context.Context) Observer {
	o, _ := ctx.Value(ctxKey{}).(Observer)
	return o
}

// Start opens a span for phase with the Observer of ctx. Without one it
// returns ctx and a Span that does nothing (and allocates nothing).
func Start(ctx context.Context, phase Phase) (context.Context, Span) {
	if o := From(ctx); o != nil {
		return o.Start(ctx, phase)
	}
	return ctx, nopSpan{}
}

// Inject writes the trace context of ctx as text headers through set, with
// the Observer of ctx; without one it does nothing. An http.Header's Set
// method is a set function:
//
//	observe.Inject(ctx, req.Header.Set)
func Inject(ctx context.Context, set func(key, value string)) {
	if o := From(ctx); o != nil {
		o.Inject(ctx, set)
	}
}

type nopSpan struct{}

func (nopSpan) SetInt(string, int)       {}
func (nopSpan) SetString(string, string) {}
func (nopSpan) End(error)                {}

// Eventer is implemented by an Observer that records events: points in
// time on the span of a context (otelagent's span events). An MCP server's
// progress and log messages during a tool call are events on the call's
// span.
type Eventer interface {
	// AddEvent records the event name on the span of ctx, with attrs
	// (string, int, float64 and bool values).
	AddEvent(ctx context.Context, name string, attrs map[string]any)
}

// AddEvent records an event on the span of ctx with the Observer of ctx,
// when it is an [Eventer]; otherwise it does nothing.
func AddEvent(ctx context.Context, name string, attrs map[string]any) {
	if e, ok := From(ctx).(Eventer); ok {
		e.AddEvent(ctx, name, attrs)
	}
}

// Event names and attributes agcore records (agcore's own names: the
// OpenTelemetry conventions have none for MCP notifications).
const (
	// EventMCPProgress is a progress notification of an MCP server about
	// a tool call, on the call's span.
	EventMCPProgress = "agcore.mcp.progress"
	// EventMCPLog is a log message of an MCP server while a tool call of
	// it runs, on the call's span.
	EventMCPLog = "agcore.mcp.log"
	// AttrMCPServer and AttrMCPTool name the server and its tool.
	AttrMCPServer = "agcore.mcp.server"
	AttrMCPTool   = "agcore.mcp.tool"
	// AttrMCPProgress and AttrMCPTotal are a progress notification's
	// figures (no total when the server gave none).
	AttrMCPProgress = "agcore.mcp.progress"
	AttrMCPTotal    = "agcore.mcp.total"
	// AttrMCPMessage is the server's text: a progress message, a log
	// message's data (one line, at most 300 characters).
	AttrMCPMessage = "agcore.mcp.message"
	// AttrMCPLevel and AttrMCPLogger are a log message's level and logger.
	AttrMCPLevel  = "agcore.mcp.level"
	AttrMCPLogger = "agcore.mcp.logger"
)
