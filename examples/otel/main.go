// Command otel traces an agent turn with OpenTelemetry in the GenAI
// semantic conventions (package otelagent). It runs offline, on a scripted
// model: the first model call is overloaded and retried, the model calls a
// tool, then answers.
//
// By default it prints the turn's span tree and metrics. With an OTLP
// collector (Jaeger, the OpenTelemetry Collector, ...) listening, it
// exports them there instead:
//
//	go run ./examples/otel
//	docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/jaeger:latest
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/otel   # then open http://localhost:16686
package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"the city name"`
}

func main() {
	ctx := context.Background()
	res := resource.NewSchemaless(semconv.ServiceName("agcore-example"))

	// Where the spans and metrics go: a collector when the standard
	// variable names one, else memory, printed below.
	var (
		spanOpt  sdktrace.TracerProviderOption
		reader   metric.Reader
		recorder *tracetest.SpanRecorder
		manual   *metric.ManualReader
	)
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		texp, err := otlptracehttp.New(ctx) // reads OTEL_EXPORTER_OTLP_*
		check(err)
		mexp, err := otlpmetrichttp.New(ctx)
		check(err)
		spanOpt, reader = sdktrace.WithBatcher(texp), metric.NewPeriodicReader(mexp)
	} else {
		recorder, manual = tracetest.NewSpanRecorder(), metric.NewManualReader()
		spanOpt, reader = sdktrace.WithSpanProcessor(recorder), manual
	}
	tp := sdktrace.NewTracerProvider(spanOpt, sdktrace.WithResource(res))
	mp := metric.NewMeterProvider(metric.WithReader(reader), metric.WithResource(res))
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		tp.Shutdown(sctx) // flushes what is left
		mp.Shutdown(sctx)
	}()

	// The Telemetry: give it to agent.Config. Without providers it uses
	// the global ones (otel.SetTracerProvider).
	tel := otelagent.MustNew(otelagent.Config{TracerProvider: tp, MeterProvider: mp})

	weather := tool.MustFunc("get_weather", "Current weather in a city.",
		func(_ context.Context, in cityArgs) (string, error) { return "Sunny, 24°C in " + in.City, nil })
	model := llmtest.New(
		llmtest.Fail(&llm.Error{Kind: llm.KindOverloaded, Provider: "openai", StatusCode: 529, Message: "overloaded"}),
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 120, OutputTokens: 18}).WithID("resp_1"),
		llmtest.Text("It is sunny and 24°C in Paris.").WithUsage(llm.Usage{InputTokens: 160, OutputTokens: 12, CachedInputTokens: 100}).WithID("resp_2"),
	).WithInfo(llm.ModelInfo{Provider: "openai", Name: "gpt-4o-mini", ContextWindow: 128000, Price: &llm.Price{Input: 0.15, Output: 0.6, CacheRead: 0.075}})

	a, err := agent.New(model, agent.Config{
		Name:      "weather-assistant",
		Tools:     []tool.Tool{weather},
		Store:     memstore.New(),
		Telemetry: tel,
		Retry:     middleware.RetryConfig{BaseDelay: 20 * time.Millisecond},
	})
	check(err)
	resp, err := a.Run(ctx, []llm.Message{llm.UserText("What is the weather in Paris?")}, &agent.RunOptions{SessionID: "demo-session"})
	check(err)
	fmt.Printf("answer: %s\n\n", resp.Text())

	if recorder == nil {
		fmt.Println("exported to", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
		return
	}
	printTree(recorder.Ended())
	printMetrics(ctx, manual)
}

// printTree prints the spans as a tree, children in start order, with
// their gen_ai.* and agcore.* attributes and events.
func printTree(spans []sdktrace.ReadOnlySpan) {
	children := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		parent := ""
		if s.Parent().IsValid() {
			parent = s.Parent().SpanID().String()
		}
		children[parent] = append(children[parent], s)
	}
	var walk func(parent, indent string)
	walk = func(parent, indent string) {
		kids := children[parent]
		slices.SortFunc(kids, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		for _, s := range kids {
			status := ""
			if s.Status().Description != "" {
				status = " [" + s.Status().Code.String() + ": " + s.Status().Description + "]"
			}
			fmt.Printf("%s%s (%s)%s\n", indent, s.Name(), s.SpanKind(), status)
			attrs := s.Attributes()
			slices.SortFunc(attrs, func(a, b attribute.KeyValue) int { return cmp.Compare(a.Key, b.Key) })
			for _, kv := range attrs {
				fmt.Printf("%s    %s = %s\n", indent, kv.Key, kv.Value.Emit())
			}
			for _, ev := range s.Events() {
				var parts []string
				for _, kv := range ev.Attributes {
					parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
				}
				sort.Strings(parts)
				fmt.Printf("%s    event %s: %s\n", indent, ev.Name, strings.Join(parts, " "))
			}
			walk(s.SpanContext().SpanID().String(), indent+"  ")
		}
	}
	fmt.Println("spans:")
	walk("", "  ")
}

// printMetrics prints each metric's data points.
func printMetrics(ctx context.Context, r *metric.ManualReader) {
	var rm metricdata.ResourceMetrics
	check(r.Collect(ctx, &rm))
	fmt.Println("\nmetrics:")
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Printf("  %s (%s)\n", m.Name, m.Unit)
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					fmt.Printf("    count=%d %s\n", p.Count, p.Attributes.Encoded(attribute.DefaultEncoder()))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					fmt.Printf("    count=%d sum=%d %s\n", p.Count, p.Sum, p.Attributes.Encoded(attribute.DefaultEncoder()))
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					fmt.Printf("    sum=%.6f %s\n", p.Value, p.Attributes.Encoded(attribute.DefaultEncoder()))
				}
			}
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
