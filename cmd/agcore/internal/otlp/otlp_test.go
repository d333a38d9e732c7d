package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var (
	t0  = time.Unix(1700000000, 123)
	tid = trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid = trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}
	pid = trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}
)

func testSpans() []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", "svc"))
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, Remote: true})
	stub := tracetest.SpanStub{
		Name: "chat m", SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0.Add(time.Second),
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		Parent:      parent,
		Attributes: []attribute.KeyValue{
			attribute.String("s", "v"), attribute.Bool("b", true), attribute.Int64("i", -7), attribute.Float64("f", 0.5),
			attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}),
		},
		Events:               []sdktrace.Event{{Name: "agcore.retry", Time: t0.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}}},
		Links:                []sdktrace.Link{{SpanContext: parent, Attributes: []attribute.KeyValue{attribute.String("l", "x")}}},
		Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
		Resource:             res,
		InstrumentationScope: instrumentation.Scope{Name: "agcore", Version: "1"},
	}
	other := stub
	other.Name, other.SpanKind, other.Status, other.Events, other.Links = "execute_tool t", trace.SpanKindInternal, sdktrace.Status{}, nil, nil
	other.InstrumentationScope = instrumentation.Scope{Name: "other"}
	return tracetest.SpanStubs{stub, other, stub}.Snapshots()
}

// TestTraceRequestDecodes: what the encoder writes is the OTLP message the
// generated types read, field for field.
func TestTraceRequestDecodes(t *testing.T) {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(traceRequest(testSpans()), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("grouping: %s", protojson.Format(&req))
	}
	rs := req.ResourceSpans[0]
	if a := rs.Resource.Attributes; len(a) != 1 || a[0].Key != "service.name" || a[0].Value.GetStringValue() != "svc" {
		t.Errorf("resource %v", a)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.Name != "agcore" || ss.Scope.Version != "1" || len(ss.Spans) != 2 || rs.ScopeSpans[1].Scope.Name != "other" || len(rs.ScopeSpans[1].Spans) != 1 {
		t.Fatalf("scopes: %s", protojson.Format(&req))
	}
	s := ss.Spans[0]
	if !bytes.Equal(s.TraceId, tid[:]) || !bytes.Equal(s.SpanId, sid[:]) || !bytes.Equal(s.ParentSpanId, pid[:]) {
		t.Errorf("ids %x %x %x", s.TraceId, s.SpanId, s.ParentSpanId)
	}
	if s.Name != "chat m" || s.Kind.String() != "SPAN_KIND_CLIENT" || s.StartTimeUnixNano != uint64(t0.UnixNano()) || s.EndTimeUnixNano != uint64(t0.Add(time.Second).UnixNano()) {
		t.Errorf("span %s", protojson.Format(s))
	}
	if s.Flags != 0x301 || s.Status.GetCode().String() != "STATUS_CODE_ERROR" || s.Status.GetMessage() != "boom" {
		t.Errorf("flags %x status %v", s.Flags, s.Status)
	}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[kv.Key] = anyString(kv.Value)
	}
	want := map[string]string{"s": "v", "b": "true", "i": "-7", "f": "0.5", "ss": "[a b]", "is": "[1 2]"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
	if len(s.Events) != 1 || s.Events[0].Name != "agcore.retry" || s.Events[0].Attributes[0].Value.GetIntValue() != 2 || s.Events[0].TimeUnixNano != uint64(t0.Add(time.Millisecond).UnixNano()) {
		t.Errorf("events %v", s.Events)
	}
	if len(s.Links) != 1 || !bytes.Equal(s.Links[0].SpanId, pid[:]) || s.Links[0].Flags != 0x300 {
		t.Errorf("links %v", s.Links)
	}
	if o := rs.ScopeSpans[1].Spans[0]; o.Kind.String() != "SPAN_KIND_INTERNAL" || o.Status != nil {
		t.Errorf("second span %s", protojson.Format(o))
	}
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, anyString(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "?"
}

func TestMetricsRequestDecodes(t *testing.T) {
	set := attribute.NewSet(attribute.String("gen_ai.operation.name", "chat"))
	rm := &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "svc")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "agcore"},
			Metrics: []metricdata.Metrics{
				{Name: "sum", Unit: "{token}", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: t0, Time: t0.Add(time.Second), Value: 0}}}},
				{Name: "gauge", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: t0, Value: 1.5}}}},
				{Name: "hist", Description: "d", Data: metricdata.Histogram[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: set, StartTime: t0, Time: t0, Count: 3, Sum: 6,
						Bounds: []float64{1, 5}, BucketCounts: []uint64{1, 1, 1}, Min: metricdata.NewExtrema(0.5), Max: metricdata.NewExtrema(4.5)}}}},
			},
		}},
	}
	var req colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(metricsRequest(rm), &req); err != nil {
		t.Fatal(err)
	}
	ms := req.ResourceMetrics[0].ScopeMetrics[0].Metrics
	if len(ms) != 3 {
		t.Fatalf("%s", protojson.Format(&req))
	}
	sum := ms[0].GetSum()
	if ms[0].Unit != "{token}" || sum == nil || !sum.IsMonotonic || sum.AggregationTemporality.String() != "AGGREGATION_TEMPORALITY_CUMULATIVE" ||
		len(sum.DataPoints) != 1 || sum.DataPoints[0].Value == nil || sum.DataPoints[0].GetAsInt() != 0 || sum.DataPoints[0].Attributes[0].Value.GetStringValue() != "chat" {
		t.Errorf("sum %s", protojson.Format(ms[0]))
	}
	if g := ms[1].GetGauge(); g == nil || g.DataPoints[0].GetAsDouble() != 1.5 {
		t.Errorf("gauge %s", protojson.Format(ms[1]))
	}
	h := ms[2].GetHistogram()
	if h == nil || h.AggregationTemporality.String() != "AGGREGATION_TEMPORALITY_DELTA" || ms[2].Description != "d" {
		t.Fatalf("histogram %s", protojson.Format(ms[2]))
	}
	p := h.DataPoints[0]
	if p.Count != 3 || p.GetSum() != 6 || p.GetMin() != 0.5 || p.GetMax() != 4.5 || len(p.BucketCounts) != 3 || len(p.ExplicitBounds) != 2 || p.ExplicitBounds[1] != 5 {
		t.Errorf("histogram point %s", protojson.Format(p))
	}
}

// TestHTTPExport: http/protobuf with the environment's headers and gzip; a
// 503 is retried.
func TestHTTPExport(t *testing.T) {
	var mu sync.Mutex
	var calls int
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || r.Header.Get("Api-Key") != "a b" || r.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("request %s %v", r.URL.Path, r.Header)
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		got, _ = io.ReadAll(zr)
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"}
	x, err := NewTraceExporter(Config{URL: srv.URL + "/v1/traces", Timeout: 5 * time.Second, RetryInitial: time.Millisecond,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	spans := testSpans()
	if err := x.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 || !bytes.Equal(got, traceRequest(spans)) {
		t.Errorf("%d calls, body %d bytes", calls, len(got))
	}
}

// TestGRPCExport: a gRPC call over cleartext HTTP/2, its status read from
// the trailers; a failing status is an error.
func TestGRPCExport(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.ProtoMajor != 2 || r.Header.Get("Content-Type") != "application/grpc" || len(body) < 5 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
			t.Errorf("request %s %v %d bytes", r.Proto, r.Header, len(body))
		}
		var req colmetricpb.ExportMetricsServiceRequest
		if strings.Contains(r.URL.Path, "Metrics") {
			if err := proto.Unmarshal(body[5:], &req); err != nil {
				t.Error(err)
			}
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		w.Write([]byte{0, 0, 0, 0, 0})
		if r.Header.Get("X-Fail") != "" {
			w.Header().Set("Grpc-Status", "3")
			w.Header().Set("Grpc-Message", "bad%20request")
			return
		}
		w.Header().Set("Grpc-Status", "0")
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()

	x, err := NewTraceExporter(Config{Protocol: GRPC, URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	m, err := NewMetricExporter(Config{Protocol: GRPC, URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rm := &metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{Name: "m", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}}}}}}
	if err := m.Export(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	bad, err := NewTraceExporter(Config{Protocol: GRPC, URL: srv.URL, Timeout: 5 * time.Second,
		Getenv: func(k string) (string, bool) { return "x-fail=1", k == "OTEL_EXPORTER_OTLP_HEADERS" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.ExportSpans(context.Background(), testSpans()); err == nil || !strings.Contains(err.Error(), "status 3: bad request") {
		t.Errorf("err = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/opentelemetry.proto.collector.trace.v1.TraceService/Export", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"}
	if len(paths) != 3 || paths[0] != want[0] || paths[1] != want[1] {
		t.Errorf("paths %q", paths)
	}
}

// TestTimeoutIsDeadlineExceeded: a collector that never answers ends the
// export at the timeout with an error the command reports as such.
func TestTimeoutIsDeadlineExceeded(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	x, err := NewTraceExporter(Config{URL: srv.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.ExportSpans(context.Background(), testSpans()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "localhost:4318"}, "not an http or https URL"},
		{Config{URL: "http://h", Protocol: "http/json"}, "not supported"},
		{Config{URL: "http://h", Getenv: func(k string) (string, bool) { return "zstd", k == "OTEL_EXPORTER_OTLP_COMPRESSION" }}, "not supported"},
		{Config{URL: "http://h", Getenv: func(k string) (string, bool) { return "novalue", k == "OTEL_EXPORTER_OTLP_HEADERS" }}, "not key=value"},
		{Config{URL: "http://h", Getenv: func(k string) (string, bool) { return "/nonexistent.pem", k == "OTEL_EXPORTER_OTLP_CERTIFICATE" }}, "certificate"},
	} {
		if _, err := NewTraceExporter(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg.URL, err, tc.want)
		}
	}
}
