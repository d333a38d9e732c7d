package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// tracing is --otel's: a tracer provider exporting over OTLP/HTTP and
// Temporal's tracing interceptor, which carries the trace context from the
// client into the workflow and its activities.
type tracing struct {
	tp          *sdktrace.TracerProvider
	interceptor interceptor.Interceptor
}

// openTracing starts the tracing of --otel URL, or of
// $OTEL_EXPORTER_OTLP_ENDPOINT when the flag is empty; nil when neither is
// set.
func openTracing(ctx context.Context, url, service string) (*tracing, error) {
	if url == "" {
		url = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if url == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(url, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("--otel %s: %w", url, err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	ic, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("agcore-temporal")})
	if err != nil {
		return nil, err
	}
	return &tracing{tp: tp, interceptor: ic}, nil
}

// close flushes what is left, waiting at most two seconds for a collector.
func (t *tracing) close() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = t.tp.Shutdown(ctx)
}

func (t *tracing) interceptors() []interceptor.ClientInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.ClientInterceptor{t.interceptor}
}
