package otelagent

import (
	"context"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
)

// executeTool runs one tool call in its execute_tool span.
func (t *Telemetry) executeTool(ctx context.Context, call tool.Call, next tool.Handler) (string, error) {
	ctx, span := t.tracer.Start(ctx, "execute_tool "+call.Name, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(call.Name),
			semconv.GenAIToolCallID(call.ID),
			semconv.GenAIToolType("function"),
		)
		if call.Tool != nil {
			if d := call.Tool.Description(); d != "" {
				span.SetAttributes(semconv.GenAIToolDescription(d))
			}
		}
		if t.content {
			span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(call.Input)))
		}
	}
	if observe.From(ctx) == nil {
		ctx = observe.With(ctx, t) // a bare tool call: propagate its trace context
	}
	out, err := next(ctx, call)
	if span.IsRecording() {
		if t.content && err == nil {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(out))
		}
		fail(span, err)
	}
	span.End()
	return out, err
}
