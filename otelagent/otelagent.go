package otelagent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/usage"
)

// ScopeName is the instrumentation scope of every span and metric this
// package records.
const ScopeName = "github.com/agcore/agcore/otelagent"

// agcore's own attributes, events and metrics, for what the GenAI
// conventions (semconv v1.41.0) have no name for. Everything else this
// package records uses the conventions' names.
const (
	// AttrCostUSD is the price of a model call (chat spans) or of a whole
	// run (invoke_agent spans) in US dollars, from the model's known price
	// (llm.ModelInfo.Price); absent when the price is unknown.
	AttrCostUSD = "agcore.cost.usd"
	// AttrAttempts is how many attempts a model call made: 1 plus its
	// retries (chat spans; the retries are counted by [Telemetry.OnRetry],
	// which agent.New wires).
	AttrAttempts = "agcore.attempts"
	// AttrAttempt numbers the failed attempt, from 1, in an EventRetry.
	AttrAttempt = "agcore.attempt"
	// AttrErrorMessage is the failed attempt's error text, in an
	// EventRetry.
	AttrErrorMessage = "agcore.error.message"
	// AttrRetryDelay is the wait before the next attempt, in seconds, in an
	// EventRetry.
	AttrRetryDelay = "agcore.retry.delay"
	// EventRetry is the chat span event of an attempt that failed and is
	// retried: AttrAttempt, error.type, AttrErrorMessage, AttrRetryDelay.
	// The last attempt's failure is the span's own error.
	EventRetry = "agcore.retry"
	// AttrBudgetRemaining prefixes what is left of a run's spending
	// limits after it (invoke_agent spans of runs with limits):
	// agcore.budget.remaining.SCOPE.KIND, SCOPE run, session or
	// principal, KIND tokens, input_tokens, output_tokens or cost_usd.
	AttrBudgetRemaining = "agcore.budget.remaining."
	// AttrBudgetExceeded names the limit that stopped a run, SCOPE.KIND
	// ("run.cost"); its error.type is then budget_exceeded.
	AttrBudgetExceeded = "agcore.budget.exceeded"
	// AttrRunID is the agent run's id (invoke_agent spans).
	AttrRunID = observe.AttrRunID
	// MetricCost is the counter of the price of model calls, in USD, with
	// the same attributes as gen_ai.client.token.usage minus the token
	// type; calls whose price is unknown are not counted.
	MetricCost = "agcore.client.cost"
)

// The options of every span start, made once.
var (
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
)

// Bucket boundaries the GenAI conventions advise for their histograms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// Config configures [New]. The zero value traces and measures through the
// global providers (otel.GetTracerProvider, otel.GetMeterProvider), without
// message contents.
type Config struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context onto outgoing provider requests
	// and MCP calls; nil means W3C trace context and baggage
	// (propagation.TraceContext and propagation.Baggage), whatever the
	// global propagator is.
	Propagator propagation.TextMapPropagator
	// RecordContent opts in to the conventions' content attributes:
	// gen_ai.system_instructions, gen_ai.input.messages and
	// gen_ai.output.messages on chat and invoke_agent spans,
	// gen_ai.tool.definitions on chat spans, gen_ai.tool.call.arguments
	// and gen_ai.tool.call.result on execute_tool spans. Off by default:
	// contents may be private. API keys are never recorded either way
	// (they are not part of any message, and errors are redacted).
	RecordContent bool
	// Clock measures durations; nil means the system clock.
	Clock clock.Clock
}

// Telemetry records OpenTelemetry spans and metrics for agents, bare
// models and tools. It implements [agent.Telemetry], agcore's one
// telemetry seam (an [observe.Observer] that also wraps the pipeline):
// give it to agent.Config.Telemetry. It is safe for concurrent use.
type Telemetry struct {
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	content bool
	clock   clock.Clock

	duration genaiconv.ClientOperationDuration
	tokens   genaiconv.ClientTokenUsage
	ttfc     genaiconv.ClientOperationTimeToFirstChunk
	cost     metric.Float64Counter
}

var _ agent.Telemetry = (*Telemetry)(nil)

// New returns the Telemetry cfg describes. It fails only when the meter
// provider refuses to make an instrument.
func New(cfg Config) (*Telemetry, error) {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &Telemetry{
		tracer:  tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:    cfg.Propagator,
		content: cfg.RecordContent,
		clock:   clock.Or(cfg.Clock),
	}
	if t.prop == nil {
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	m := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err, e error
	t.duration, e = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	t.tokens, e = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...))
	err = errors.Join(err, e)
	t.ttfc, e = genaiconv.NewClientOperationTimeToFirstChunk(m, metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	t.cost, e = m.Float64Counter(MetricCost, metric.WithUnit("USD"),
		metric.WithDescription("Price of GenAI model calls in US dollars, where the model's price is known (an agcore metric)."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("otelagent: making the instruments: %w", err)
	}
	return t, nil
}

// MustNew is [New] for a configuration known to work (the global
// providers, the SDK's): it panics on error.
func MustNew(cfg Config) *Telemetry {
	t, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return t
}

// Inject implements [observe.Observer]: it writes the trace context of ctx
// with the configured propagator.
func (t *Telemetry) Inject(ctx context.Context, set func(key, value string)) {
	t.prop.Inject(ctx, setCarrier(set))
}

// setCarrier is a write-only propagation.TextMapCarrier.
type setCarrier func(key, value string)

func (c setCarrier) Get(string) string     { return "" }
func (c setCarrier) Set(key, value string) { c(key, value) }
func (c setCarrier) Keys() []string        { return nil }

// Start implements [observe.Observer]: a span named "agcore.{phase}"
// (agcore.compaction, agcore.persistence), a child of the span in ctx.
func (t *Telemetry) Start(ctx context.Context, phase observe.Phase) (context.Context, observe.Span) {
	ctx, span := t.tracer.Start(ctx, "agcore."+string(phase), internalSpan...)
	return ctx, phaseSpan{span}
}

// AddEvent implements [observe.Eventer]: an event on the span of ctx
// (an execute_tool span for an MCP server's notifications).
func (t *Telemetry) AddEvent(ctx context.Context, name string, attrs map[string]any) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	kvs := make([]attribute.KeyValue, 0, len(attrs))
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		switch v := attrs[k].(type) {
		case string:
			kvs = append(kvs, attribute.String(k, v))
		case int:
			kvs = append(kvs, attribute.Int(k, v))
		case float64:
			kvs = append(kvs, attribute.Float64(k, v))
		case bool:
			kvs = append(kvs, attribute.Bool(k, v))
		}
	}
	span.AddEvent(name, trace.WithAttributes(kvs...))
}

type phaseSpan struct{ s trace.Span }

func (p phaseSpan) SetInt(key string, v int)       { p.s.SetAttributes(attribute.Int(key, v)) }
func (p phaseSpan) SetString(key, v string)        { p.s.SetAttributes(attribute.String(key, v)) }
func (p phaseSpan) End(err error)                  { endSpan(p.s, err) }
func endSpan(s trace.Span, err error)              { fail(s, err); s.End() }
func (t *Telemetry) since(start time.Time) float64 { return t.clock.Now().Sub(start).Seconds() }

// fail marks s failed with err (nothing when err is nil): error status
// with the error's text, and error.type.
func fail(s trace.Span, err error) {
	if err == nil {
		return
	}
	s.SetStatus(codes.Error, err.Error())
	s.SetAttributes(semconv.ErrorTypeKey.String(ErrorType(err)))
}

// scope is what a run puts in its context: the Telemetry (as the run's
// observe.Observer) and the run's identity for the spans below it.
type scope struct {
	*Telemetry
	agent, agentID, conversation string
}

// scopeOf returns the run scope of ctx, or nil.
func scopeOf(ctx context.Context) *scope {
	s, _ := observe.From(ctx).(*scope)
	return s
}

// StartRun implements [agent.Telemetry]: the invoke_agent span of a run.
func (t *Telemetry) StartRun(ctx context.Context, run agent.RunInfo) (context.Context, func(agent.RunResult)) {
	start := t.clock.Now()
	name := "invoke_agent"
	if run.Agent != "" {
		name += " " + run.Agent
	}
	provider := providerName(run.Model.Provider)
	ctx, span := t.tracer.Start(ctx, name, internalSpan...)
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 6)
		attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent, semconv.GenAIProviderNameKey.String(provider))
		if run.Agent != "" {
			attrs = append(attrs, semconv.GenAIAgentName(run.Agent))
		}
		if run.AgentID != "" {
			attrs = append(attrs, semconv.GenAIAgentID(run.AgentID))
		}
		if run.Model.Name != "" {
			attrs = append(attrs, semconv.GenAIRequestModel(run.Model.Name))
		}
		if run.SessionID != "" {
			attrs = append(attrs, semconv.GenAIConversationID(run.SessionID))
		}
		span.SetAttributes(attrs...)
		if t.content {
			setMessages(span, run.Input)
		}
	}
	ctx = observe.With(ctx, &scope{Telemetry: t, agent: run.Agent, agentID: run.AgentID, conversation: run.SessionID})
	return ctx, func(res agent.RunResult) {
		t.endRun(ctx, span, start, provider, run, res)
	}
}

func (t *Telemetry) endRun(ctx context.Context, span trace.Span, start time.Time, provider string, run agent.RunInfo, res agent.RunResult) {
	resp := res.Response
	if span.IsRecording() {
		if res.RunID != "" {
			span.SetAttributes(attribute.String(AttrRunID, res.RunID))
		}
		if resp != nil {
			span.SetAttributes(
				semconv.GenAIResponseModel(resp.Model),
				semconv.GenAIResponseFinishReasons(string(resp.FinishReason)),
			)
			setUsage(span, resp.Usage)
			if resp.CostKnown {
				span.SetAttributes(attribute.Float64(AttrCostUSD, resp.CostUSD))
			}
			if resp.Budget != nil {
				setBudget(span, *resp.Budget)
			}
			if t.content {
				setOutput(span, resp.Message, resp.FinishReason)
			}
		}
		var ee *budget.ExceededError
		if errors.As(res.Err, &ee) {
			span.SetAttributes(attribute.String(AttrBudgetExceeded, string(ee.Scope)+"."+string(ee.Kind)))
		}
		fail(span, res.Err)
	}
	span.End()
	if t.duration.Enabled(ctx) {
		attrs := make([]attribute.KeyValue, 0, 3)
		if run.Model.Name != "" {
			attrs = append(attrs, t.duration.AttrRequestModel(run.Model.Name))
		}
		if resp != nil && resp.Model != "" {
			attrs = append(attrs, t.duration.AttrResponseModel(resp.Model))
		}
		if res.Err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(ErrorType(res.Err)))
		}
		t.duration.Record(ctx, t.since(start), genaiconv.OperationNameInvokeAgent, genaiconv.ProviderNameAttr(provider), attrs...)
	}
}

// setBudget records what is left of a run's limits.
func setBudget(span trace.Span, r budget.Remaining) {
	for _, sc := range []struct {
		scope string
		left  *budget.Left
	}{{"run", r.Run}, {"session", r.Session}, {"principal", r.Principal}} {
		l := sc.left
		if l == nil {
			continue
		}
		p := AttrBudgetRemaining + sc.scope + "."
		for _, n := range []struct {
			kind string
			v    *int
		}{{"tokens", l.Tokens}, {"input_tokens", l.InputTokens}, {"output_tokens", l.OutputTokens}} {
			if n.v != nil {
				span.SetAttributes(attribute.Int(p+n.kind, *n.v))
			}
		}
		if l.CostUSD != nil {
			span.SetAttributes(attribute.Float64(p+"cost_usd", *l.CostUSD))
		}
	}
}

// ModelMiddleware implements [agent.Telemetry]: [Telemetry.Middleware].
func (t *Telemetry) ModelMiddleware() middleware.Middleware { return t.Middleware() }

// ToolMiddleware implements [agent.Telemetry]: the execute_tool span of
// each tool call. Give it to a tool.Invoker (or a middleware.ToolLoop's
// Invoker) to trace the tools of a hand-built loop.
func (t *Telemetry) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			return t.executeTool(ctx, call, next)
		}
	}
}

// providerName is gen_ai.provider.name for an llm.ModelInfo.Provider: the
// conventions' well-known value where agcore's name differs, the name as
// it is otherwise.
func providerName(p string) string {
	switch p {
	case "":
		return "unknown"
	case "xai":
		return "x_ai"
	case "azure":
		return "azure.ai.openai"
	case "mistral":
		return "mistral_ai"
	}
	return p
}

// costOf prices u with info's price.
func costOf(info llm.ModelInfo, u llm.Usage) (float64, bool) { return usage.CostOf(info, u) }
