package otelagent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/otelagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorded is a Telemetry over the SDK with in-memory recorders.
type recorded struct {
	tel    *otelagent.Telemetry
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newRecorded(t *testing.T, cfg otelagent.Config) *recorded {
	t.Helper()
	r := &recorded{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	cfg.TracerProvider, cfg.MeterProvider = tp, mp
	tel, err := otelagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.tel = tel
	return r
}

// ended returns the ended spans, in the order they ended.
func (r *recorded) ended() []sdktrace.ReadOnlySpan { return r.spans.Ended() }

// names returns the names of the ended spans, sorted.
func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	slices.Sort(out)
	return out
}

// find returns the ended spans named name.
func find(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one ended span named name.
func one(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := find(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q; have %q", len(got), name, names(spans))
	}
	return got[0]
}

// attrs returns a span's attributes as a map of their string forms.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	return kvMap(s.Attributes())
}

func kvMap(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// wantAttrs checks that s has each of want (key → value as Emit prints it).
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			t.Errorf("span %q: %s = %q (set: %v), want %q", s.Name(), k, gv, ok, v)
		}
	}
}

// noAttrs checks that s has none of keys.
func noAttrs(t *testing.T, s sdktrace.ReadOnlySpan, keys ...string) {
	t.Helper()
	got := attrs(s)
	for _, k := range keys {
		if v, ok := got[k]; ok {
			t.Errorf("span %q has %s = %q", s.Name(), k, v)
		}
	}
}

// childOf checks that s is a child of parent, in its trace.
func childOf(t *testing.T, s, parent sdktrace.ReadOnlySpan) {
	t.Helper()
	if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("span %q is not a child of %q", s.Name(), parent.Name())
	}
}

// failed checks that s failed with error.type typ.
func failed(t *testing.T, s sdktrace.ReadOnlySpan, typ string) {
	t.Helper()
	if s.Status().Code != codes.Error {
		t.Errorf("span %q status %v, want Error", s.Name(), s.Status())
	}
	wantAttrs(t, s, map[string]string{"error.type": typ})
}

// ok checks that s succeeded.
func ok(t *testing.T, s sdktrace.ReadOnlySpan) {
	t.Helper()
	if s.Status().Code == codes.Error {
		t.Errorf("span %q failed: %v", s.Name(), s.Status())
	}
	noAttrs(t, s, "error.type")
}

// metrics collects the metrics recorded so far, by name.
func (r *recorded) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// points describes each data point of a metric: its attributes (sorted
// key=value) and its count and sum, for comparison.
func points(m metricdata.Metrics) []string {
	var out []string
	desc := func(set attribute.Set) string {
		var kv []string
		for it := set.Iter(); it.Next(); {
			a := it.Attribute()
			kv = append(kv, string(a.Key)+"="+a.Value.Emit())
		}
		return strings.Join(kv, ",")
	}
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s count=%d", desc(p.Attributes), p.Count))
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s count=%d sum=%d", desc(p.Attributes), p.Count, p.Sum))
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s sum=%.6f", desc(p.Attributes), p.Value))
		}
	}
	slices.Sort(out)
	return out
}

// stepClock is a clock.Clock whose every reading is a millisecond
// after the previous one, so durations are deterministic and positive.
type stepClock struct {
	mu sync.Mutex
	n  time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += time.Millisecond
	return time.Unix(1_800_000_000, 0).Add(c.n)
}

func (c *stepClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
