package otelagent

import (
	"context"
	"errors"
	"iter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/observe"
)

// ErrStopped is the error recorded on the chat span of a stream whose
// consumer stopped reading before its completion event (error.type
// "abandoned"); the consumer never sees it.
var ErrStopped = errors.New("otelagent: the stream's consumer stopped before its completion event")

// Middleware returns the model middleware that records, for each call, a
// chat span (kind client) and the gen_ai.client.* metrics: operation
// duration, token usage, time to first chunk (streams) and agcore's cost.
// agent.New puts it in place; for a bare model compose it by hand, with
// [Telemetry.OnRetry] told of the retries inside it:
//
//	model := middleware.Chain(adapter, tel.Middleware(), middleware.Retry(middleware.RetryConfig{OnRetry: tel.OnRetry}))
//
// A call's span covers its retries (each is an agcore.retry event) and is
// the parent of whatever the call does below: the provider requests carry
// its trace context (traceparent). The span is per call, never per chunk:
// a stream passes through one iterator layer and allocates nothing per
// event.
func (t *Telemetry) Middleware() middleware.Middleware {
	return func(next llm.Model) llm.Model { return &chat{t: t, next: next} }
}

type chat struct {
	t    *Telemetry
	next llm.Model
}

func (c *chat) Info() llm.ModelInfo { return c.next.Info() }

// call is one model call in progress.
type call struct {
	t        *Telemetry
	span     trace.Span
	start    time.Time
	info     llm.ModelInfo
	provider string
	model    string // the request model
	stream   bool
	retries  int     // counted by OnRetry (sequential)
	ttfc     float64 // seconds to the first event of a stream; < 0 before it
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// begin opens the call's span and returns the context for the call.
func (c *chat) begin(ctx context.Context, req *llm.Request, stream bool) (context.Context, *call) {
	t := c.t
	cl := &call{t: t, start: t.clock.Now(), info: c.next.Info(), stream: stream, ttfc: -1}
	cl.provider = providerName(cl.info.Provider)
	cl.model = req.Model
	if cl.model == "" {
		cl.model = cl.info.Name
	}
	name := "chat"
	if cl.model != "" {
		name += " " + cl.model
	}
	ctx, cl.span = t.tracer.Start(ctx, name, clientSpan...)
	if cl.span.IsRecording() {
		cl.span.SetAttributes(requestAttrs(ctx, cl, req)...)
		if t.content {
			setMessages(cl.span, req.Messages)
			setToolDefinitions(cl.span, req.Tools)
		}
	}
	if observe.From(ctx) == nil {
		ctx = observe.With(ctx, t) // a bare model's call: propagate its trace context
	}
	if !cl.span.IsRecording() {
		return ctx, cl // nothing for OnRetry to record
	}
	return context.WithValue(ctx, callKey{}, cl), cl
}

func requestAttrs(ctx context.Context, cl *call, req *llm.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(cl.provider), semconv.GenAIRequestStream(cl.stream))
	if cl.model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(cl.model))
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if req.TopP != nil {
		attrs = append(attrs, semconv.GenAIRequestTopP(*req.TopP))
	}
	if len(req.StopSequences) > 0 {
		attrs = append(attrs, semconv.GenAIRequestStopSequences(req.StopSequences...))
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text" {
		attrs = append(attrs, semconv.GenAIOutputTypeJSON)
	}
	if s := scopeOf(ctx); s != nil && s.conversation != "" {
		attrs = append(attrs, semconv.GenAIConversationID(s.conversation))
	}
	return attrs
}

// end closes the call's span and records its metrics.
func (cl *call) end(ctx context.Context, resp *llm.Response, err error) {
	t, span := cl.t, cl.span
	elapsed := t.since(cl.start)
	var usd float64
	known := false
	if resp != nil {
		usd, known = costOf(cl.info, resp.Usage)
	}
	if span.IsRecording() {
		if resp != nil {
			attrs := make([]attribute.KeyValue, 0, 4)
			if resp.ID != "" {
				attrs = append(attrs, semconv.GenAIResponseID(resp.ID))
			}
			if resp.Model != "" {
				attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
			}
			attrs = append(attrs, semconv.GenAIResponseFinishReasons(string(resp.FinishReason)))
			if known {
				attrs = append(attrs, attribute.Float64(AttrCostUSD, usd))
			}
			span.SetAttributes(attrs...)
			setUsage(span, resp.Usage)
			if t.content {
				setOutput(span, resp.Message, resp.FinishReason)
			}
		}
		if cl.ttfc >= 0 {
			span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(cl.ttfc))
		}
		span.SetAttributes(attribute.Int(AttrAttempts, cl.retries+1))
		fail(span, err)
	}
	span.End()
	cl.record(ctx, elapsed, resp, err, usd, known)
}

// record records the call's metrics.
func (cl *call) record(ctx context.Context, elapsed float64, resp *llm.Response, err error, usd float64, known bool) {
	t := cl.t
	if !t.duration.Enabled(ctx) && !t.tokens.Enabled(ctx) && !t.ttfc.Enabled(ctx) && !t.cost.Enabled(ctx) {
		return
	}
	var buf [6]attribute.KeyValue
	attrs := append(buf[:0], semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(cl.provider))
	if cl.model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(cl.model))
	}
	if resp != nil && resp.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
	}
	// One attribute set for what shares it: sets are what recording costs.
	common := attribute.NewSet(attrs...)
	if cl.stream && cl.ttfc >= 0 {
		t.ttfc.RecordSet(ctx, cl.ttfc, common)
	}
	if resp != nil {
		n := len(attrs)
		t.tokens.RecordSet(ctx, int64(resp.Usage.InputTokens), attribute.NewSet(append(attrs[:n], semconv.GenAITokenTypeInput)...))
		t.tokens.RecordSet(ctx, int64(resp.Usage.OutputTokens), attribute.NewSet(append(attrs[:n], semconv.GenAITokenTypeOutput)...))
		attrs = attrs[:n]
		if known {
			t.cost.Add(ctx, usd, metric.WithAttributeSet(common))
		}
	}
	if err != nil {
		t.duration.RecordSet(ctx, elapsed, attribute.NewSet(append(attrs, semconv.ErrorTypeKey.String(ErrorType(err)))...))
		return
	}
	t.duration.RecordSet(ctx, elapsed, common)
}

func (c *chat) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(c.wrap(ctx, req, llm.Next{Model: c.next, Blocking: true}))
}

func (c *chat) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return c.wrap(ctx, req, llm.Next{Model: c.next})
}

// wrap is the chat span and its metrics, for both calls (a blocking
// call has no time to first chunk).
func (c *chat) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		ctx, cl := c.begin(ctx, req, !next.Blocking)
		var resp *llm.Response
		var failed error
		defer func() {
			if resp == nil && failed == nil {
				// The consumer stopped early, or the stream broke its
				// contract by ending without its completion event.
				failed = ErrStopped
				if ctx.Err() != nil {
					failed = llm.Cancelled("", ctx.Err())
				}
			}
			cl.end(ctx, resp, failed)
		}()
		for ev, err := range next.Stream(ctx, req) {
			if err != nil {
				failed = err
				yield(ev, err)
				return
			}
			if cl.ttfc < 0 && !next.Blocking {
				cl.ttfc = c.t.since(cl.start)
			}
			if ev.Type == llm.EventComplete {
				resp = ev.Response
			}
			if !yield(ev, nil) {
				return
			}
		}
		if resp == nil {
			failed = llm.IncompleteStream("", "")
		}
	}
}

// OnRetry implements [agent.Telemetry]: it records a retry of the model
// call whose context ctx is as an agcore.retry event of its chat span
// (the failed attempt's number, error.type, error text and the wait before
// the next attempt) and counts it in the span's agcore.attempts. agent.New
// calls it from its retries; for a bare model give it to the Retry inside
// [Telemetry.Middleware]:
//
//	middleware.Chain(adapter, tel.Middleware(), middleware.Retry(middleware.RetryConfig{OnRetry: tel.OnRetry}))
func (t *Telemetry) OnRetry(ctx context.Context, attempt int, delay time.Duration, err error) {
	cl := callOf(ctx)
	if cl == nil {
		return
	}
	cl.retries++
	if !cl.span.IsRecording() {
		return
	}
	cl.span.AddEvent(EventRetry, trace.WithAttributes(
		attribute.Int(AttrAttempt, attempt),
		semconv.ErrorTypeKey.String(ErrorType(err)),
		attribute.String(AttrErrorMessage, err.Error()),
		attribute.Float64(AttrRetryDelay, delay.Seconds()),
	))
}
