// Package otlp exports the command's telemetry over OTLP, http/protobuf or
// gRPC: a span exporter for the OpenTelemetry SDK's batch processor and a
// metric exporter for its periodic reader.
//
// It replaces OpenTelemetry's own OTLP exporters in the command because
// they link google.golang.org/grpc, and grpc's import of
// golang.org/x/net/trace (html/template) makes the linker keep every
// exported method of every type: tens of megabytes. Here the messages are
// written with protowire and a gRPC call is one HTTP/2 POST of net/http.
// The standard exporter variables it reads are listed in [Config].
package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The protocols.
const (
	HTTPProtobuf = "http/protobuf"
	GRPC         = "grpc"
)

// Config says where and how one signal is exported.
type Config struct {
	// Protocol is HTTPProtobuf (the default) or GRPC.
	Protocol string
	// URL is the endpoint: for http/protobuf the signal's full URL (e.g.
	// http://localhost:4318/v1/traces), for gRPC the collector's (its
	// path is not used; https means TLS).
	URL string
	// Timeout bounds one export, its retries included (default 10 s).
	Timeout time.Duration
	// Retry: the first delay between attempts and the longest (defaults
	// 200 ms and 1 s); failures that may pass (unavailable, throttled,
	// no connection) are retried until Timeout.
	RetryInitial, RetryMax time.Duration
	// Getenv reads the standard exporter variables (nil: none), each
	// signal's own taking precedence (OTEL_EXPORTER_OTLP_TRACES_HEADERS over
	// OTEL_EXPORTER_OTLP_HEADERS): _HEADERS (k=v,... URL-encoded),
	// _COMPRESSION (gzip or none), _CERTIFICATE (the CA file to trust),
	// _CLIENT_CERTIFICATE and _CLIENT_KEY (PEM files), and for metrics
	// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE (cumulative,
	// delta or lowmemory).
	Getenv func(string) (string, bool)
}

// client sends one signal's requests.
type client struct {
	signal   string // "traces" or "metrics"
	grpcPath string
	cfg      Config
	url      string
	header   http.Header
	gzip     bool
	http     *http.Client
	closeIdl func()

	closing   chan struct{} // closed by Closing: the program is exiting
	closeOnce sync.Once
}

// beginClose says the program is exiting: a collector that cannot be
// reached is not tried again (see TraceExporter.Closing).
func (c *client) beginClose() { c.closeOnce.Do(func() { close(c.closing) }) }

func newClient(cfg Config, signal, service string) (*client, error) {
	if cfg.Protocol == "" {
		cfg.Protocol = HTTPProtobuf
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RetryInitial <= 0 {
		cfg.RetryInitial = 200 * time.Millisecond
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = time.Second
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) (string, bool) { return "", false }
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the OTLP endpoint %q is not an http or https URL", cfg.URL)
	}
	c := &client{signal: signal, cfg: cfg, header: http.Header{}, closing: make(chan struct{})}
	env := func(name string) string {
		if v, ok := cfg.Getenv("OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_" + name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		if v, ok := cfg.Getenv("OTEL_EXPORTER_OTLP_" + name); ok {
			return strings.TrimSpace(v)
		}
		return ""
	}
	if err := parseHeaders(env("HEADERS"), c.header); err != nil {
		return nil, err
	}
	switch comp := env("COMPRESSION"); comp {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%s is not supported (gzip or none)", comp)
	}
	tlsConf, err := tlsConfig(env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	switch cfg.Protocol {
	case HTTPProtobuf:
		c.url = cfg.URL
	case GRPC:
		// gRPC is HTTP/2 only: with TLS for https, in the clear (prior
		// knowledge) for http.
		var p http.Protocols
		if u.Scheme == "https" {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true)
		}
		tr.Protocols = &p
		c.grpcPath = "/opentelemetry.proto.collector." + service + "/Export"
		c.url = u.Scheme + "://" + u.Host + c.grpcPath
	default:
		return nil, fmt.Errorf("OTLP protocol %q is not supported (grpc or http/protobuf)", cfg.Protocol)
	}
	c.http = &http.Client{Transport: tr}
	c.closeIdl = tr.CloseIdleConnections
	return c, nil
}

// parseHeaders adds the headers of an OTEL_EXPORTER_OTLP_HEADERS value to h.
func parseHeaders(v string, h http.Header) error {
	for pair := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", strings.TrimSpace(pair))
		}
		if dec, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
			val = dec
		}
		h.Set(k, strings.TrimSpace(val))
	}
	return nil
}

// tlsConfig is the TLS configuration the certificate files ask for (nil
// for none).
func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTLP certificate: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTLP certificate %s: no PEM certificate", ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTLP client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// errRetry marks a failure worth another attempt.
type errRetry struct {
	err    error
	after  time.Duration // the server's Retry-After, 0 if none
	noConn bool          // no connection was made (refused, no route, DNS)
}

func (e *errRetry) Error() string { return e.err.Error() }
func (e *errRetry) Unwrap() error { return e.err }

// send exports one encoded request, retrying what may pass, within the
// timeout. A timeout is an error wrapping context.DeadlineExceeded.
func (c *client) send(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	delay := c.cfg.RetryInitial
	for {
		err := c.once(ctx, msg)
		var r *errRetry
		if err == nil || !errors.As(err, &r) {
			return err
		}
		if r.noConn && c.isClosing() {
			return r.err // exiting: a collector that is not there will not come in time
		}
		wait := max(delay, r.after)
		delay = min(2*delay, c.cfg.RetryMax)
		t := time.NewTimer(wait)
		closing := c.closing
		if !r.noConn {
			closing = nil // an answering collector gets its retries, within the timeout
		}
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(r.err, ctx.Err()) {
				return r.err
			}
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), r.err)
		case <-closing:
			t.Stop()
			return r.err
		case <-t.C:
		}
	}
}

func (c *client) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// once makes one attempt.
func (c *client) once(ctx context.Context, msg []byte) error {
	body := msg
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(msg)
		zw.Close()
		body = buf.Bytes()
	}
	if c.grpcPath != "" {
		// The gRPC message frame: compressed flag, big-endian length.
		frame := make([]byte, 5, 5+len(body))
		if c.gzip {
			frame[0] = 1
		}
		binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
		body = append(frame, body...)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "agcore-otlp")
	if c.grpcPath != "" {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if c.gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
		if d, ok := ctx.Deadline(); ok {
			req.Header.Set("Grpc-Timeout", strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10)+"m")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &errRetry{err: err, noConn: true} // no connection: the collector may come
	}
	defer resp.Body.Close()
	if c.grpcPath != "" {
		return c.grpcResult(resp)
	}
	return c.httpResult(resp)
}

// httpResult reads an http/protobuf response.
func (c *client) httpResult(resp *http.Response) error {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err := fmt.Errorf("OTLP %s export to %s: %s", c.signal, c.url, resp.Status)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		var after time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return &errRetry{err: err, after: after}
	}
	return err
}

// grpcResult reads a gRPC response: its status is in the trailers (or, for
// a response with no message, in the headers).
func (c *client) grpcResult(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("OTLP %s export over gRPC to %s: HTTP %s", c.signal, c.url, resp.Status)
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			return &errRetry{err: err}
		}
		return err
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)); err != nil {
		return &errRetry{err: err}
	}
	status, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	code, err := strconv.Atoi(status)
	if err != nil {
		return fmt.Errorf("OTLP %s export over gRPC to %s: no gRPC status in the answer", c.signal, c.url)
	}
	if code == 0 {
		return nil
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	e := fmt.Errorf("OTLP %s export over gRPC to %s: status %d: %s", c.signal, c.url, code, msg)
	switch code {
	case 1, 4, 8, 10, 11, 14, 15: // cancelled, deadline, exhausted, aborted, out of range, unavailable, data loss
		return &errRetry{err: e}
	}
	return e
}

// TraceExporter is an sdktrace.SpanExporter sending spans over OTLP.
type TraceExporter struct {
	c *client

	mu     sync.Mutex
	closed bool
}

// NewTraceExporter returns an exporter sending spans as cfg says.
func NewTraceExporter(cfg Config) (*TraceExporter, error) {
	c, err := newClient(cfg, "traces", "trace.v1.TraceService")
	if err != nil {
		return nil, err
	}
	return &TraceExporter{c: c}, nil
}

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// ExportSpans sends spans in one request.
func (x *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	x.mu.Lock()
	closed := x.closed
	x.mu.Unlock()
	if closed || len(spans) == 0 {
		return nil
	}
	return x.c.send(ctx, traceRequest(spans))
}

// Closing says the program is about to exit (call it before the tracer
// provider's Shutdown flushes what is left): from now on an export that
// cannot connect to the collector fails at once instead of being retried
// until its timeout, so that a collector that refuses the connection does
// not hold the exit. An export to a collector that answers is unchanged.
func (x *TraceExporter) Closing() { x.c.beginClose() }

// Shutdown stops the exporter; later exports send nothing.
func (x *TraceExporter) Shutdown(context.Context) error {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	x.c.closeIdl()
	return nil
}

// MetricExporter is an sdkmetric.Exporter sending metrics over OTLP.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector

	mu     sync.Mutex
	closed bool
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter returns an exporter sending metrics as cfg says.
func NewMetricExporter(cfg Config) (*MetricExporter, error) {
	c, err := newClient(cfg, "metrics", "metrics.v1.MetricsService")
	if err != nil {
		return nil, err
	}
	x := &MetricExporter{c: c, temporality: sdkmetric.DefaultTemporalitySelector}
	pref, ok := c.cfg.Getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE")
	if !ok {
		pref = ""
	}
	switch strings.ToLower(strings.TrimSpace(pref)) {
	case "", "cumulative":
	case "delta":
		x.temporality = func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}
	case "lowmemory":
		x.temporality = func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
				return metricdata.DeltaTemporality
			}
			return metricdata.CumulativeTemporality
		}
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=%s is not supported (cumulative, delta or lowmemory)", pref)
	}
	return x, nil
}

// Temporality is the temporality of an instrument kind's data.
func (x *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return x.temporality(k)
}

// Aggregation is the SDK's default aggregation of an instrument kind.
func (x *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

// Export sends rm in one request.
func (x *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	x.mu.Lock()
	closed := x.closed
	x.mu.Unlock()
	if closed || rm == nil || len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return x.c.send(ctx, metricsRequest(rm))
}

// ForceFlush has nothing to flush: Export sends at once.
func (x *MetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

// Closing is TraceExporter.Closing for metrics.
func (x *MetricExporter) Closing() { x.c.beginClose() }

// Shutdown stops the exporter; later exports send nothing.
func (x *MetricExporter) Shutdown(context.Context) error {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	x.c.closeIdl()
	return nil
}
