package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/otlp"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/otelagent"
)

// The export of the run's telemetry (OpenTelemetry over OTLP). A turn never
// waits for it: spans and metrics queue in memory (at most otelQueue spans;
// more are dropped) and a background exporter sends them; on exit what is
// left is flushed for at most otelFlushTimeout.
const (
	otelFlushTimeout = 2 * time.Second
	otelQueue        = 2048
	otelBatchDelay   = time.Second
)

// addOtelFlag adds --otel to the commands that run turns.
func addOtelFlag(fs *pflag.FlagSet) {
	fs.String("otel", "", "export traces and metrics of every turn over OTLP to this collector URL (e.g. http://localhost:4318); also enabled by $OTEL_EXPORTER_OTLP_ENDPOINT")
}

// otelExport is where and how a command exports its telemetry.
type otelExport struct {
	protocol        string // "grpc" or "http/protobuf"
	traces, metrics string // the endpoint URL of each signal; "" exports none
	service         string // service.name
	content         bool   // record message contents (opt-in)
	getenv          func(string) (string, bool)
}

// config is the exporter configuration of one signal's endpoint: every
// export (retries included) bounded by otelFlushTimeout.
func (p *otelExport) config(endpoint string) otlp.Config {
	return otlp.Config{Protocol: p.protocol, URL: endpoint, Timeout: otelFlushTimeout,
		RetryInitial: 200 * time.Millisecond, RetryMax: time.Second, Getenv: p.getenv}
}

// otelPlan decides from --otel (flag) and the standard OpenTelemetry
// environment whether the command exports, and where. It returns nil for
// no export: no --otel and no OTLP endpoint in the environment, or
// OTEL_SDK_DISABLED=true without --otel.
//
//   - --otel URL: the base URL of an OTLP collector, like
//     OTEL_EXPORTER_OTLP_ENDPOINT, for both signals; it exports even with
//     OTEL_SDK_DISABLED set.
//   - OTEL_EXPORTER_OTLP_ENDPOINT: the base URL (http/protobuf appends
//     /v1/traces and /v1/metrics); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
//     OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: one signal's full URL.
//   - OTEL_EXPORTER_OTLP_PROTOCOL (and the per-signal
//     OTEL_EXPORTER_OTLP_TRACES_PROTOCOL): grpc or http/protobuf (the
//     default); http/json is not supported.
//   - OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER: otlp (the default) or
//     none.
//   - OTEL_SERVICE_NAME: service.name (default agcore).
//   - OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: record
//     message contents (gen_ai.input.messages, ...).
func otelPlan(flag string, getenv func(string) (string, bool)) (*otelExport, error) {
	env := func(k string) string {
		v, _ := getenv(k)
		return strings.TrimSpace(v)
	}
	if flag == "" && strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	base := flag
	if base == "" {
		base = env("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	tracesURL, metricsURL := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if flag != "" {
		tracesURL, metricsURL = "", ""
	}
	if base == "" && tracesURL == "" && metricsURL == "" {
		return nil, nil
	}
	p := &otelExport{getenv: getenv, service: env("OTEL_SERVICE_NAME"), content: strings.EqualFold(env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true")}
	if p.service == "" {
		p.service = "agcore"
	}
	p.protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p.protocol == "" {
		p.protocol = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p.protocol {
	case "":
		p.protocol = "http/protobuf"
	case "grpc", "http/protobuf":
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported (grpc or http/protobuf)", p.protocol)
	}
	signal := func(full, path, exporterVar string) (string, error) {
		switch e := env(exporterVar); e {
		case "", "otlp":
		case "none":
			return "", nil
		default:
			return "", fmt.Errorf("%s=%s is not supported (otlp or none)", exporterVar, e)
		}
		if full == "" {
			if base == "" {
				return "", nil
			}
			full = base
			if p.protocol == "http/protobuf" {
				full = strings.TrimRight(base, "/") + path
			}
		}
		u, err := url.Parse(full)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("the OTLP endpoint %q is not an http or https URL", full)
		}
		return full, nil
	}
	var err error
	if p.traces, err = signal(tracesURL, "/v1/traces", "OTEL_TRACES_EXPORTER"); err != nil {
		return nil, err
	}
	if p.metrics, err = signal(metricsURL, "/v1/metrics", "OTEL_METRICS_EXPORTER"); err != nil {
		return nil, err
	}
	if p.traces == "" && p.metrics == "" {
		return nil, nil
	}
	return p, nil
}

// telemetry is a command's exporting telemetry.
type telemetry struct {
	tel      *otelagent.Telemetry
	closing  []func() // the exporters' Closing, before shutdown
	shutdown []func(context.Context) error

	mu       sync.Mutex
	firstErr error // the first export error, reported on exit
}

// openTelemetry sets up the export --otel and the environment ask for. It
// returns the agent's Telemetry (nil for none) and the closer that flushes
// what is left on exit. Setting up never fails a command: a bad
// configuration is reported on stderr and the command runs untraced.
func (a *app) openTelemetry(logger *slog.Logger) (agent.Telemetry, middleware.Middleware, func() error) {
	none := func() error { return nil }
	plan, err := otelPlan(a.otelURL, a.env.Getenv)
	if err == nil && plan != nil {
		var t *telemetry
		if t, err = plan.start(logger); err == nil {
			return t.tel, t.tel.Middleware(), func() error { t.close(a); return nil }
		}
	}
	if err != nil {
		fmt.Fprintf(a.env.Stderr, "agcore: telemetry not exported: %v\n", err)
	}
	return nil, nil, none
}

func (p *otelExport) start(logger *slog.Logger) (*telemetry, error) {
	t := &telemetry{}
	ctx := context.Background()
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(p.service), semconv.ServiceVersion(version())), resource.WithTelemetrySDK())
	if err != nil {
		return nil, err
	}
	// The SDK reports export failures to the global error handler: they go
	// to the log, and the first is told on stderr on exit.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("telemetry export failed", "error", err.Error())
		t.mu.Lock()
		if t.firstErr == nil {
			t.firstErr = err
		}
		t.mu.Unlock()
	}))
	var tp trace.TracerProvider
	if p.traces != "" {
		exp, err := otlp.NewTraceExporter(p.config(p.traces))
		if err != nil {
			return nil, err
		}
		sdk := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp,
			sdktrace.WithMaxQueueSize(otelQueue), sdktrace.WithBatchTimeout(otelBatchDelay)))
		t.closing = append(t.closing, exp.Closing)
		t.shutdown = append(t.shutdown, sdk.Shutdown)
		tp = sdk
	}
	var mp metric.MeterProvider
	if p.metrics != "" {
		exp, err := otlp.NewMetricExporter(p.config(p.metrics))
		if err != nil {
			t.close(nil)
			return nil, err
		}
		sdk := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		t.closing = append(t.closing, exp.Closing)
		t.shutdown = append(t.shutdown, sdk.Shutdown)
		mp = sdk
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t.tel, err = otelagent.New(otelagent.Config{TracerProvider: tp, MeterProvider: mp, RecordContent: p.content})
	if err != nil {
		t.close(nil)
		return nil, err
	}
	return t, nil
}

// close flushes and stops the export, within otelFlushTimeout in all, and
// tells the first export error on stderr (a nil a tells nothing). A
// collector that refuses the connection is tried once, not for the whole
// timeout: the exit is not held for it.
func (t *telemetry) close(a *app) {
	ctx, cancel := context.WithTimeout(context.Background(), otelFlushTimeout)
	defer cancel()
	for _, closing := range t.closing {
		closing()
	}
	var errs []error
	for _, shutdown := range t.shutdown {
		errs = append(errs, shutdown(ctx))
	}
	if a == nil {
		return
	}
	t.mu.Lock()
	first := t.firstErr
	t.mu.Unlock()
	if msg := exportFailure(append([]error{first}, errs...)); msg != "" {
		fmt.Fprintf(a.env.Stderr, "agcore: telemetry export failed: %s\n", msg)
	}
}

// exportFailure says in one line what went wrong in errs (nil entries
// ignored): each distinct message once, so two signals timing out against
// a collector that never answers are one "no answer" (errors.Join would
// print one line per signal).
func exportFailure(errs []error) string {
	var msgs []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		msg := strings.Join(strings.Fields(err.Error()), " ")
		var ue *url.Error
		switch {
		case errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &ue):
			// Both signals' exports say the same: one message.
			host := ue.URL
			if u, perr := url.Parse(ue.URL); perr == nil {
				host = u.Host
			}
			msg = fmt.Sprintf("the collector at %s refused the connection", host)
		case errors.Is(err, context.DeadlineExceeded):
			msg = fmt.Sprintf("the collector did not answer within %s", otelFlushTimeout)
		}
		if !slices.Contains(msgs, msg) {
			msgs = append(msgs, msg)
		}
	}
	return strings.Join(msgs, "; ")
}
