package otlp

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP messages are written field by field (the field numbers of
// opentelemetry/proto/{collector,trace,metrics,common,resource}/v1), so the
// command links neither the generated message types nor the protobuf
// runtime. encode_test.go decodes what is written here with the generated
// types and compares.

// enc appends protobuf fields to b. Like proto3, it omits a scalar field
// holding its zero value, except where a method says otherwise.
type enc struct{ b []byte }

func (e *enc) tag(num protowire.Number, typ protowire.Type) {
	e.b = protowire.AppendTag(e.b, num, typ)
}

func (e *enc) str(num protowire.Number, s string) {
	if s != "" {
		e.tag(num, protowire.BytesType)
		e.b = protowire.AppendString(e.b, s)
	}
}

func (e *enc) bytes(num protowire.Number, p []byte) {
	if len(p) > 0 {
		e.tag(num, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, p)
	}
}

func (e *enc) varint(num protowire.Number, v uint64) {
	if v != 0 {
		e.tag(num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, v)
	}
}

func (e *enc) fixed32(num protowire.Number, v uint32) {
	if v != 0 {
		e.tag(num, protowire.Fixed32Type)
		e.b = protowire.AppendFixed32(e.b, v)
	}
}

func (e *enc) fixed64(num protowire.Number, v uint64) {
	if v != 0 {
		e.tag(num, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, v)
	}
}

// double writes v even when it is zero (the oneof and optional fields).
func (e *enc) double(num protowire.Number, v float64) {
	e.tag(num, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, math.Float64bits(v))
}

// msg writes the embedded message that fill appends.
func (e *enc) msg(num protowire.Number, fill func()) {
	start := len(e.b)
	fill()
	body := append([]byte(nil), e.b[start:]...)
	e.b = e.b[:start]
	e.tag(num, protowire.BytesType)
	e.b = protowire.AppendBytes(e.b, body)
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes.
func (e *enc) anyValue(v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		e.tag(2, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		e.tag(3, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.double(4, v.AsFloat64())
	case attribute.STRING:
		e.tag(1, protowire.BytesType)
		e.b = protowire.AppendString(e.b, v.AsString())
	case attribute.BYTESLICE:
		e.tag(7, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		e.array(len(v.AsBoolSlice()), func(i int) attribute.Value { return attribute.BoolValue(v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		e.array(len(s), func(i int) attribute.Value { return attribute.Int64Value(s[i]) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		e.array(len(s), func(i int) attribute.Value { return attribute.Float64Value(s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		e.array(len(s), func(i int) attribute.Value { return attribute.StringValue(s[i]) })
	case attribute.SLICE:
		s := v.AsSlice()
		e.array(len(s), func(i int) attribute.Value { return s[i] })
	case attribute.MAP:
		kvs := v.AsMap()
		e.msg(6, func() { e.keyValues(1, kvs) })
	}
	// EMPTY: an AnyValue with no value set.
}

// array writes an ArrayValue (field 5 of AnyValue; its values are field 1).
func (e *enc) array(n int, at func(int) attribute.Value) {
	e.msg(5, func() {
		for i := range n {
			e.msg(1, func() { e.anyValue(at(i)) })
		}
	})
}

// keyValues writes each KeyValue (1 key, 2 value) as field num.
func (e *enc) keyValues(num protowire.Number, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		e.msg(num, func() {
			e.str(1, string(kv.Key))
			e.msg(2, func() { e.anyValue(kv.Value) })
		})
	}
}

// resource writes a Resource (1 attributes).
func (e *enc) resource(num protowire.Number, r *resource.Resource) {
	e.msg(num, func() {
		if r != nil {
			e.keyValues(1, r.Attributes())
		}
	})
}

// scope writes an InstrumentationScope (1 name, 2 version, 3 attributes).
func (e *enc) scope(num protowire.Number, s instrumentation.Scope) {
	e.msg(num, func() {
		e.str(1, s.Name)
		e.str(2, s.Version)
		e.keyValues(3, s.Attributes.ToSlice())
	})
}

// scopeKey identifies an instrumentation scope in a batch.
type scopeKey struct {
	name, version, schema string
	attrs                 attribute.Distinct
}

func keyOf(s instrumentation.Scope) scopeKey {
	return scopeKey{s.Name, s.Version, s.SchemaURL, s.Attributes.Equivalent()}
}

// traceRequest encodes an ExportTraceServiceRequest (1 resource_spans) of
// spans, grouped by resource and then by scope, in the order they came.
func traceRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
		index  map[scopeKey]*scopeGroup
	}
	var groups []*resGroup
	byRes := map[attribute.Distinct]*resGroup{}
	for _, s := range spans {
		r := s.Resource()
		rk := r.Equivalent()
		g := byRes[rk]
		if g == nil {
			g = &resGroup{res: r, index: map[scopeKey]*scopeGroup{}}
			byRes[rk] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		sk := keyOf(sc)
		sg := g.index[sk]
		if sg == nil {
			sg = &scopeGroup{scope: sc}
			g.index[sk] = sg
			g.scopes = append(g.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	e := &enc{}
	for _, g := range groups {
		// ResourceSpans: 1 resource, 2 scope_spans, 3 schema_url.
		e.msg(1, func() {
			e.resource(1, g.res)
			for _, sg := range g.scopes {
				// ScopeSpans: 1 scope, 2 spans, 3 schema_url.
				e.msg(2, func() {
					e.scope(1, sg.scope)
					for _, s := range sg.spans {
						e.msg(2, func() { e.span(s) })
					}
					e.str(3, sg.scope.SchemaURL)
				})
			}
			if g.res != nil {
				e.str(3, g.res.SchemaURL())
			}
		})
	}
	return e.b
}

// The Span.flags bits saying whether the parent is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// span writes a Span's fields.
func (e *enc) span(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.bytes(1, tid[:])
	e.bytes(2, sid[:])
	e.str(3, sc.TraceState().String())
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		e.bytes(4, psid[:])
		if p.IsRemote() {
			flags |= flagIsRemote
		}
	}
	e.str(5, s.Name())
	kind := s.SpanKind()
	if kind == trace.SpanKindUnspecified {
		kind = trace.SpanKindInternal
	}
	e.varint(6, uint64(kind)) // the API's kinds are numbered as OTLP's
	e.fixed64(7, unixNano(s.StartTime()))
	e.fixed64(8, unixNano(s.EndTime()))
	e.keyValues(9, s.Attributes())
	e.varint(10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		// Event: 1 time, 2 name, 3 attributes, 4 dropped_attributes_count.
		e.msg(11, func() {
			e.fixed64(1, unixNano(ev.Time))
			e.str(2, ev.Name)
			e.keyValues(3, ev.Attributes)
			e.varint(4, uint64(ev.DroppedAttributeCount))
		})
	}
	e.varint(12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		// Link: 1 trace_id, 2 span_id, 3 trace_state, 4 attributes,
		// 5 dropped_attributes_count, 6 flags.
		e.msg(13, func() {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			e.bytes(1, ltid[:])
			e.bytes(2, lsid[:])
			e.str(3, l.SpanContext.TraceState().String())
			e.keyValues(4, l.Attributes)
			e.varint(5, uint64(l.DroppedAttributeCount))
			lf := uint32(l.SpanContext.TraceFlags()) | flagHasIsRemote
			if l.SpanContext.IsRemote() {
				lf |= flagIsRemote
			}
			e.fixed32(6, lf)
		})
	}
	e.varint(14, uint64(s.DroppedLinks()))
	// Status: 2 message, 3 code (UNSET 0, OK 1, ERROR 2).
	if st := s.Status(); st.Code != codes.Unset {
		e.msg(15, func() {
			switch st.Code {
			case codes.Ok:
				e.varint(3, 1)
			case codes.Error:
				e.str(2, st.Description)
				e.varint(3, 2)
			}
		})
	}
	e.fixed32(16, flags)
}

// metricsRequest encodes an ExportMetricsServiceRequest (1
// resource_metrics) of rm.
func metricsRequest(rm *metricdata.ResourceMetrics) []byte {
	e := &enc{}
	// ResourceMetrics: 1 resource, 2 scope_metrics, 3 schema_url.
	e.msg(1, func() {
		e.resource(1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			// ScopeMetrics: 1 scope, 2 metrics, 3 schema_url.
			e.msg(2, func() {
				e.scope(1, sm.Scope)
				for _, m := range sm.Metrics {
					e.metric(m)
				}
				e.str(3, sm.Scope.SchemaURL)
			})
		}
		if rm.Resource != nil {
			e.str(3, rm.Resource.SchemaURL())
		}
	})
	return e.b
}

// metric writes a Metric (1 name, 2 description, 3 unit, 5 gauge, 7 sum,
// 9 histogram, 10 exponential_histogram, 11 summary) as field 2 of
// ScopeMetrics.
func (e *enc) metric(m metricdata.Metrics) {
	e.msg(2, func() {
		e.str(1, m.Name)
		e.str(2, m.Description)
		e.str(3, m.Unit)
		switch d := m.Data.(type) {
		case metricdata.Gauge[int64]:
			e.msg(5, func() { numberPoints(e, d.DataPoints) })
		case metricdata.Gauge[float64]:
			e.msg(5, func() { numberPoints(e, d.DataPoints) })
		case metricdata.Sum[int64]:
			e.msg(7, func() { numberPoints(e, d.DataPoints); e.sumTail(d.Temporality, d.IsMonotonic) })
		case metricdata.Sum[float64]:
			e.msg(7, func() { numberPoints(e, d.DataPoints); e.sumTail(d.Temporality, d.IsMonotonic) })
		case metricdata.Histogram[int64]:
			e.msg(9, func() { histogramPoints(e, d.DataPoints); e.varint(2, temporality(d.Temporality)) })
		case metricdata.Histogram[float64]:
			e.msg(9, func() { histogramPoints(e, d.DataPoints); e.varint(2, temporality(d.Temporality)) })
		case metricdata.ExponentialHistogram[int64]:
			e.msg(10, func() { expHistogramPoints(e, d.DataPoints); e.varint(2, temporality(d.Temporality)) })
		case metricdata.ExponentialHistogram[float64]:
			e.msg(10, func() { expHistogramPoints(e, d.DataPoints); e.varint(2, temporality(d.Temporality)) })
		case metricdata.Summary:
			e.msg(11, func() { summaryPoints(e, d.DataPoints) })
		}
	})
}

// sumTail writes Sum's 2 aggregation_temporality and 3 is_monotonic.
func (e *enc) sumTail(t metricdata.Temporality, monotonic bool) {
	e.varint(2, temporality(t))
	if monotonic {
		e.varint(3, 1)
	}
}

// temporality maps the SDK's temporality to OTLP's (DELTA 1, CUMULATIVE 2).
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// numberPoints writes NumberDataPoints (7 attributes, 2 start, 3 time,
// 4 as_double, 6 as_int, 5 exemplars) as field 1.
func numberPoints[N int64 | float64](e *enc, points []metricdata.DataPoint[N]) {
	for _, p := range points {
		e.msg(1, func() {
			e.fixed64(2, unixNano(p.StartTime))
			e.fixed64(3, unixNano(p.Time))
			e.number(4, 6, p.Value)
			exemplars(e, 5, p.Exemplars)
			e.keyValues(7, p.Attributes.ToSlice())
		})
	}
}

// number writes v as the double field or, for an integer, the sfixed64
// field.
func (e *enc) number(double, integer protowire.Number, v any) {
	switch v := v.(type) {
	case int64:
		e.tag(integer, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, uint64(v))
	case float64:
		e.double(double, v)
	}
}

// exemplars writes Exemplars (7 filtered_attributes, 2 time, 3 as_double,
// 6 as_int, 4 span_id, 5 trace_id) as field num.
func exemplars[N int64 | float64](e *enc, num protowire.Number, xs []metricdata.Exemplar[N]) {
	for _, x := range xs {
		e.msg(num, func() {
			e.fixed64(2, unixNano(x.Time))
			e.number(3, 6, x.Value)
			e.bytes(4, x.SpanID)
			e.bytes(5, x.TraceID)
			e.keyValues(7, x.FilteredAttributes)
		})
	}
}

// histogramPoints writes HistogramDataPoints (9 attributes, 2 start,
// 3 time, 4 count, 5 sum, 6 bucket_counts, 7 explicit_bounds, 8 exemplars,
// 11 min, 12 max) as field 1.
func histogramPoints[N int64 | float64](e *enc, points []metricdata.HistogramDataPoint[N]) {
	for _, p := range points {
		e.msg(1, func() {
			e.fixed64(2, unixNano(p.StartTime))
			e.fixed64(3, unixNano(p.Time))
			e.fixed64(4, p.Count)
			e.double(5, float64(p.Sum))
			if len(p.BucketCounts) > 0 {
				e.tag(6, protowire.BytesType)
				e.b = protowire.AppendVarint(e.b, uint64(8*len(p.BucketCounts)))
				for _, c := range p.BucketCounts {
					e.b = protowire.AppendFixed64(e.b, c)
				}
			}
			if len(p.Bounds) > 0 {
				e.tag(7, protowire.BytesType)
				e.b = protowire.AppendVarint(e.b, uint64(8*len(p.Bounds)))
				for _, b := range p.Bounds {
					e.b = protowire.AppendFixed64(e.b, math.Float64bits(b))
				}
			}
			exemplars(e, 8, p.Exemplars)
			e.keyValues(9, p.Attributes.ToSlice())
			if v, ok := p.Min.Value(); ok {
				e.double(11, float64(v))
			}
			if v, ok := p.Max.Value(); ok {
				e.double(12, float64(v))
			}
		})
	}
}

// expHistogramPoints writes ExponentialHistogramDataPoints (1 attributes,
// 2 start, 3 time, 4 count, 5 sum, 6 scale, 7 zero_count, 8 positive,
// 9 negative, 11 exemplars, 12 min, 13 max, 14 zero_threshold) as field 1.
func expHistogramPoints[N int64 | float64](e *enc, points []metricdata.ExponentialHistogramDataPoint[N]) {
	buckets := func(num protowire.Number, b metricdata.ExponentialBucket) {
		// Buckets: 1 offset (zigzag), 2 bucket_counts (packed varints).
		e.msg(num, func() {
			e.varint(1, protowire.EncodeZigZag(int64(b.Offset)))
			if len(b.Counts) > 0 {
				var packed []byte
				for _, c := range b.Counts {
					packed = protowire.AppendVarint(packed, c)
				}
				e.bytes(2, packed)
			}
		})
	}
	for _, p := range points {
		e.msg(1, func() {
			e.keyValues(1, p.Attributes.ToSlice())
			e.fixed64(2, unixNano(p.StartTime))
			e.fixed64(3, unixNano(p.Time))
			e.fixed64(4, p.Count)
			e.double(5, float64(p.Sum))
			e.varint(6, protowire.EncodeZigZag(int64(p.Scale)))
			e.fixed64(7, p.ZeroCount)
			buckets(8, p.PositiveBucket)
			buckets(9, p.NegativeBucket)
			exemplars(e, 11, p.Exemplars)
			if v, ok := p.Min.Value(); ok {
				e.double(12, float64(v))
			}
			if v, ok := p.Max.Value(); ok {
				e.double(13, float64(v))
			}
			if p.ZeroThreshold != 0 {
				e.double(14, p.ZeroThreshold)
			}
		})
	}
}

// summaryPoints writes SummaryDataPoints (7 attributes, 2 start, 3 time,
// 4 count, 5 sum, 6 quantile_values) as field 1.
func summaryPoints(e *enc, points []metricdata.SummaryDataPoint) {
	for _, p := range points {
		e.msg(1, func() {
			e.fixed64(2, unixNano(p.StartTime))
			e.fixed64(3, unixNano(p.Time))
			e.fixed64(4, p.Count)
			if p.Sum != 0 {
				e.double(5, p.Sum)
			}
			for _, q := range p.QuantileValues {
				// ValueAtQuantile: 1 quantile, 2 value.
				e.msg(6, func() {
					if q.Quantile != 0 {
						e.double(1, q.Quantile)
					}
					if q.Value != 0 {
						e.double(2, q.Value)
					}
				})
			}
			e.keyValues(7, p.Attributes.ToSlice())
		})
	}
}
