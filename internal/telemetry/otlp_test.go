package telemetry

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// decodeRequest reads an ExportTraceServiceRequest as a collector does:
// field 1, each a ResourceSpans.
func decodeRequest(t *testing.T, b []byte) []*tracepb.ResourceSpans {
	t.Helper()
	var out []*tracepb.ResourceSpans
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			t.Fatalf("field %d of type %d: not an ExportTraceServiceRequest", num, typ)
		}
		b = b[n:]
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			t.Fatal("a cut field")
		}
		rs := &tracepb.ResourceSpans{}
		if err := proto.Unmarshal(v, rs); err != nil {
			t.Fatal(err)
		}
		out = append(out, rs)
		b = b[m:]
	}
	return out
}

// The exporter sends what a collector reads as the spans made: names,
// kinds, parents, attributes, status, the resource; gzip and headers as
// the environment says; a 503 is tried again.
func TestTheOTLPExporterSendsWhatACollectorReads(t *testing.T) {
	var calls atomic.Int32
	got := make(chan []byte, 4)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // tried again
			return
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
			r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Api-Key") != "s3cr=t" {
			t.Errorf("request %s %s %v", r.Method, r.URL.Path, r.Header)
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(zr)
		got <- b
	}))
	defer collector.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
		"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cr%3Dt"}
	exp, err := newOTLPExporter(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "taskgraph-test"))))
	tr := tp.Tracer("taskgraph")
	ctx, parent := tr.Start(context.Background(), "POST /query", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tr.Start(ctx, "DynamoDB.Query", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.Float64("aws.dynamodb.consumed_read_units", 0.5), attribute.StringSlice("aws.dynamodb.table_names", []string{"t"})))
	child.SetStatus(codes.Error, "throttled")
	child.End()
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var spans []*tracepb.Span
	for range 2 { // WithSyncer: one request per span
		for _, rs := range decodeRequest(t, <-got) {
			if rs.Resource.Attributes[0].Value.GetStringValue() != "taskgraph-test" {
				t.Errorf("resource %v", rs.Resource)
			}
			spans = append(spans, rs.ScopeSpans[0].Spans...)
		}
	}
	c, p := spans[0], spans[1]
	if c.Name != "DynamoDB.Query" || c.Kind != tracepb.Span_SPAN_KIND_CLIENT || string(c.ParentSpanId) != string(p.SpanId) ||
		string(c.TraceId) != string(p.TraceId) || c.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c.Status.Message != "throttled" {
		t.Errorf("the child span: %v", c)
	}
	if c.Attributes[0].Value.GetDoubleValue() != 0.5 || c.Attributes[1].Value.GetArrayValue().Values[0].GetStringValue() != "t" {
		t.Errorf("the child's attributes: %v", c.Attributes)
	}
	if p.Name != "POST /query" || p.Kind != tracepb.Span_SPAN_KIND_SERVER || len(p.ParentSpanId) != 0 || p.EndTimeUnixNano < p.StartTimeUnixNano {
		t.Errorf("the parent span: %v", p)
	}
	if calls.Load() != 3 {
		t.Errorf("%d requests, want 3 (the first answered 503, then tried again)", calls.Load())
	}
}

func TestOTLPSettingsAreChecked(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent.pem"},
	} {
		if _, err := newOTLPExporter(func(k string) string { return env[k] }); err == nil {
			t.Errorf("%v: accepted", env)
		}
	}
}
