package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const marker = "Zq7Marker"

func TestMetricsCountOperationsCallsAndBatchesExactly(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true, MaxOperationNames: 3})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.Calls.Reset()

	statuses := map[int]int{}
	run := func(viewer, query string, vars map[string]any) *testenv.Response {
		res := e.Query(t, viewer, query, vars)
		statuses[res.Status]++
		return res
	}
	me := "query Me { me { id name } }"
	for range 2 {
		if res := run("alice", me, nil); len(res.Errors) > 0 {
			t.Fatalf("Me: %+v", res.Errors)
		}
	}
	if res := run("", me, nil); !slices.Equal(res.Codes(), []string{codes.Unauthenticated}) {
		t.Fatalf("Me without a token: %v", res.Codes())
	}
	bad := run("alice", "query Bad($d: Date) { me { overdueTasks(asOf: $d) { edges { cursor } } } }", map[string]any{"d": "task#" + marker})
	if len(bad.Errors) == 0 {
		t.Fatalf("Bad answered without an error: %s", bad.Data)
	}
	// The cap is 3 names: Me, Bad, C; D and E are "other".
	for _, name := range []string{"C", "D", "E"} {
		run("alice", "query "+name+" { me { id } }", nil)
	}
	run("alice", "{ me { id } }", nil)

	fams := testenv.Scrape(t, tel)
	t.Run("operations by name, type and outcome", func(t *testing.T) {
		want := map[string]uint64{
			"operation=Me,outcome=OK,type=query":                            2,
			"operation=Me,outcome=UNAUTHENTICATED,type=query":               1,
			"operation=Bad,outcome=" + bad.Errors[0].Code() + ",type=query": 1,
			"operation=C,outcome=OK,type=query":                             1,
			"operation=other,outcome=OK,type=query":                         2,
			"operation=anonymous,outcome=OK,type=query":                     1,
		}
		got := testenv.SampleCounts(fams, "taskgraph_graphql_operation_duration_seconds")
		if !maps.Equal(got, want) {
			t.Errorf("operations:\n got %v\nwant %v", got, want)
		}
	})
	t.Run("DynamoDB calls match the client's count", func(t *testing.T) {
		got := map[string]uint64{}
		for labels, n := range testenv.SampleCounts(fams, "taskgraph_dynamodb_call_duration_seconds") {
			op, _, _ := strings.Cut(strings.TrimPrefix(labels, "operation="), ",")
			if !strings.HasSuffix(labels, "outcome=OK") {
				t.Errorf("a call failed: %s", labels)
			}
			got[op] += n
		}
		want := map[string]uint64{}
		for op, n := range e.Calls.ByOp() {
			want[op] = uint64(n)
		}
		if len(want) == 0 || !maps.Equal(got, want) {
			t.Errorf("DynamoDB calls in the metrics %v, the client counted %v", got, want)
		}
	})
	t.Run("loader batches", func(t *testing.T) {
		// Each of the 7 operations that read the viewer (Bad too, whose
		// malformed date is refused after that) reads one key in one batch
		// of the point-read loader, and the refused request reads nothing.
		for _, m := range fams["taskgraph_loader_batch_keys"].GetMetric() {
			if testenv.Labels(m) != "loader=objects" {
				t.Errorf("unexpected batch: %s", testenv.Labels(m))
				continue
			}
			if h := m.GetHistogram(); h.GetSampleCount() != 7 || h.GetSampleSum() != 7 {
				t.Errorf("objects batches: %d batches of %v keys in all, want 7 of 7", h.GetSampleCount(), h.GetSampleSum())
			}
		}
		if len(fams["taskgraph_loader_batch_keys"].GetMetric()) != 1 {
			t.Errorf("batch histograms: %d, want 1", len(fams["taskgraph_loader_batch_keys"].GetMetric()))
		}
	})
	t.Run("HTTP responses and in-flight requests", func(t *testing.T) {
		want := map[string]float64{}
		for code, n := range statuses {
			want[fmt.Sprintf("code=%d", code)] = float64(n)
		}
		if got := testenv.Values(fams, "taskgraph_http_requests_total"); !maps.Equal(got, want) {
			t.Errorf("responses %v, want %v", got, want)
		}
		if got := testenv.Values(fams, "taskgraph_http_requests_in_flight"); got[""] != 0 || len(got) != 1 {
			t.Errorf("in flight after the requests: %v", got)
		}
		if got := testenv.Values(fams, "taskgraph_graphql_subscriptions_open"); got[""] != 0 || len(got) != 1 {
			t.Errorf("open subscriptions: %v", got)
		}
	})
	t.Run("no variables or ids in labels", func(t *testing.T) {
		for name, f := range fams {
			for _, m := range f.GetMetric() {
				if l := testenv.Labels(m); strings.Contains(l, marker) || strings.Contains(l, "task#") || strings.Contains(l, "alice") {
					t.Errorf("%s has a label from a request: %s", name, l)
				}
			}
		}
	})
	t.Run("Go runtime and process", func(t *testing.T) {
		for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total"} {
			if fams[name] == nil {
				t.Errorf("no %s", name)
			}
		}
	})
}

func TestSubscriptionGauge(t *testing.T) {
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	tel.SubscriptionOpened()
	tel.SubscriptionOpened()
	tel.SubscriptionClosed()
	if got := testenv.Values(testenv.Scrape(t, tel), "taskgraph_graphql_subscriptions_open"); got[""] != 1 {
		t.Errorf("open subscriptions %v, want 1", got)
	}
	var off *telemetry.Telemetry // off: nothing to count, nothing panics
	off.SubscriptionOpened()
	off.SubscriptionClosed()
	if rec := httptest.NewRecorder(); func() int {
		off.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Code
	}() != http.StatusNotFound {
		t.Errorf("metrics off: /metrics answered %d, want 404", rec.Code)
	}
}

func TestOperationLabelsAreBounded(t *testing.T) {
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true, MaxOperationNames: 2})
	for _, c := range []struct{ name, want string }{
		{"", telemetry.LabelAnonymous},
		{"A", "A"},
		{"not-a-name", telemetry.LabelOther},
		{"9lives", telemetry.LabelOther},
		{strings.Repeat("x", 65), telemetry.LabelOther},
		{"_ok9", "_ok9"}, // the second name: the cap
		{"B", telemetry.LabelOther},
		{"A", "A"},
		{"_ok9", "_ok9"},
	} {
		if got := tel.OperationLabel(c.name); got != c.want {
			t.Errorf("OperationLabel(%.10q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// traceparent is a W3C header with a sampled trace.
const (
	traceIDHex    = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpanHex = "00f067aa0ba902b7"
	traceparent   = "00-" + traceIDHex + "-" + parentSpanHex + "-01"
)

func TestTraceSpanTree(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	exp := tracetest.NewInMemoryExporter()
	tel := testenv.MustTelemetry(t, telemetry.Config{SpanExporter: exp})
	var logBuf bytes.Buffer
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel, Log: slog.New(slog.NewJSONHandler(&logBuf, nil))}})
	e.Calls.Reset()

	query := `query Dash($n: Int!) { me { projects(first: $n) { nodes { name members { user { name } } tasks(first: 3) { nodes { title } } } } } }`
	raw := e.Send(t, map[string]any{"query": query, "variables": map[string]any{"n": 2, "x": marker}}, e.As("alice"),
		testenv.Header("Traceparent", traceparent))
	if raw.Status != http.StatusOK || strings.Contains(string(raw.Body), `"errors"`) {
		t.Fatalf("Dash: %d %s", raw.Status, raw.Body)
	}

	spans := exp.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
		if s.SpanContext.TraceID().String() != traceIDHex {
			t.Errorf("span %q is in trace %s, want the traceparent's %s", s.Name, s.SpanContext.TraceID(), traceIDHex)
		}
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.Emit(), marker) || strings.Contains(a.Value.Emit(), "members {") {
				t.Errorf("span %q attribute %s holds the variables or the document", s.Name, a.Key)
			}
		}
	}
	find := func(name string) tracetest.SpanStub {
		t.Helper()
		for _, s := range spans {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no span %q in %d spans", name, len(spans))
		return tracetest.SpanStub{}
	}
	httpSpan := find("POST /query")
	if httpSpan.SpanKind != trace.SpanKindServer || httpSpan.Parent.SpanID().String() != parentSpanHex || !httpSpan.Parent.IsRemote() {
		t.Errorf("HTTP span: kind %v, parent %s (remote %v), want server span under the traceparent's %s",
			httpSpan.SpanKind, httpSpan.Parent.SpanID(), httpSpan.Parent.IsRemote(), parentSpanHex)
	}
	op := find("query Dash")
	if op.Parent.SpanID() != httpSpan.SpanContext.SpanID() {
		t.Errorf("operation span's parent is %s, want the HTTP span", op.Parent.SpanID())
	}
	attrs := map[string]string{}
	for _, a := range op.Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["graphql.operation.name"] != "Dash" || attrs["graphql.operation.type"] != "query" ||
		attrs["graphql.operation.complexity"] == "" || attrs["graphql.outcome"] != "OK" {
		t.Errorf("operation span attributes: %v", attrs)
	}

	// Every DynamoDB call is a client span under the operation or one of
	// its loader batches; every batch is under the operation, or under the
	// batch whose results started it (the projects' members and tasks are
	// asked for as soon as the memberships are listed), and says how many
	// keys it read.
	calls, batches := map[string]int{}, 0
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "DynamoDB."):
			calls[strings.TrimPrefix(s.Name, "DynamoDB.")]++
			parent := byID[s.Parent.SpanID()]
			if s.SpanKind != trace.SpanKindClient || (parent.Name != "query Dash" && !strings.HasPrefix(parent.Name, "loader ")) {
				t.Errorf("%s: kind %v under %q, want a client span under the operation or a batch", s.Name, s.SpanKind, parent.Name)
			}
			a := map[string]string{}
			for _, kv := range s.Attributes {
				a[string(kv.Key)] = kv.Value.Emit()
			}
			if a["rpc.method"] != strings.TrimPrefix(s.Name, "DynamoDB.") || a["aws.dynamodb.table_names"] != `["`+e.Store.Table()+`"]` || a["aws.dynamodb.attempts"] != "1" {
				t.Errorf("%s attributes: %v", s.Name, a)
			}
		case strings.HasPrefix(s.Name, "loader "):
			batches++
			up := s
			for strings.HasPrefix(up.Name, "loader ") {
				up = byID[up.Parent.SpanID()]
			}
			if up.SpanContext.SpanID() != op.SpanContext.SpanID() {
				t.Errorf("%s is not under the operation (but %q)", s.Name, up.Name)
			}
			keys := -1
			for _, kv := range s.Attributes {
				if kv.Key == "taskgraph.loader.keys" {
					keys = int(kv.Value.AsInt64())
				}
			}
			if keys < 1 {
				t.Errorf("%s: keys %d", s.Name, keys)
			}
		}
	}
	want := e.Calls.ByOp()
	if len(want) == 0 || !maps.Equal(calls, want) {
		t.Errorf("DynamoDB spans %v, calls %v", calls, want)
	}
	if batches < 3 { // the viewer, the projects, their members and tasks
		t.Errorf("%d batch spans, want one per level at least", batches)
	}
	t.Run("traceparent out and in the log", func(t *testing.T) {
		if got := raw.Header.Get("Traceparent"); !strings.Contains(got, traceIDHex) {
			t.Errorf("response traceparent %q, want trace %s", got, traceIDHex)
		}
		lines := mustOpLines(t, &logBuf)
		if len(lines) != 1 || lines[0]["trace_id"] != traceIDHex {
			t.Errorf("log lines %v, want one with trace_id %s", lines, traceIDHex)
		}
	})
	t.Run("a new trace without traceparent, its id in the log", func(t *testing.T) {
		exp.Reset()
		logBuf.Reset()
		e.MustQuery(t, "alice", "query Me { me { id } }", nil, nil)
		lines := mustOpLines(t, &logBuf)
		spans := exp.GetSpans()
		if len(lines) != 1 || len(spans) == 0 {
			t.Fatalf("%d log lines, %d spans", len(lines), len(spans))
		}
		id := spans[0].SpanContext.TraceID().String()
		if id == traceIDHex || lines[0]["trace_id"] != id {
			t.Errorf("log trace_id %v, spans' trace %s", lines[0]["trace_id"], id)
		}
	})
}

func TestTracingOffWithoutOTELEnvironment(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		on   bool
		err  bool
	}{
		{"nothing set", nil, false, false},
		{"a service name only", map[string]string{"OTEL_SERVICE_NAME": "x"}, false, false},
		{"SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, false},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, false},
		{"an OTLP endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, false},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, false},
		{"gRPC, not built in: refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, true},
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true, false},
		{"an unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
		{"an unknown protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tel, err := telemetry.New(context.Background(), telemetry.Config{Env: func(k string) string { return c.env[k] }})
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			if tel.Tracing() != c.on || (!c.on && tel != nil) {
				t.Errorf("tracing %v (telemetry %v), want %v", tel.Tracing(), tel != nil, c.on)
			}
			_ = tel.Shutdown(context.Background())
		})
	}
	t.Run("metrics on, tracing off: no-op tracer, no traceparent, header's id in the log", func(t *testing.T) {
		tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
		_, span := tel.Tracer().Start(context.Background(), "x")
		if span.IsRecording() || span.SpanContext().IsValid() {
			t.Errorf("tracer off made a live span: recording %v, valid %v", span.IsRecording(), span.SpanContext().IsValid())
		}
		e := testenv.New(t)
		e.MustSeed(t)
		var logBuf bytes.Buffer
		e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel, Log: slog.New(slog.NewJSONHandler(&logBuf, nil))}})
		raw := e.Send(t, map[string]any{"query": "query Me { me { id } }"}, e.As("alice"), testenv.Header("Traceparent", traceparent))
		if raw.Status != http.StatusOK || raw.Header.Get("Traceparent") != "" {
			t.Errorf("status %d, response traceparent %q: want 200 and none", raw.Status, raw.Header.Get("Traceparent"))
		}
		if lines := mustOpLines(t, &logBuf); len(lines) != 1 || lines[0]["trace_id"] != traceIDHex {
			t.Errorf("log lines %v, want the header's trace id", lines)
		}
	})
}

// With an OTLP endpoint in the environment the spans reach it, over
// HTTP/protobuf, by the time the telemetry shuts down.
func TestOTLPExportFromTheEnvironment(t *testing.T) {
	got := make(chan string, 16)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "taskgraph-test")
	tel, err := telemetry.New(context.Background(), telemetry.Config{Env: os.Getenv}) // the server passes what it read at start
	if err != nil || !tel.Tracing() {
		t.Fatalf("tracing %v, error %v", tel.Tracing(), err)
	}
	e := testenv.New(t)
	e.MustSeed(t)
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.MustQuery(t, "alice", "query Me { me { id } }", nil, nil)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-got:
		if req != "POST /v1/traces application/x-protobuf" {
			t.Errorf("collector got %q", req)
		}
	default:
		t.Fatal("nothing was exported")
	}
}

// unprocessedOnce answers the first BatchGetItem itself, every key
// unprocessed, as a throttled table may.
func unprocessedOnce(o *dynamodb.Options) {
	var done atomic.Bool
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("unprocessedOnce", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if req, ok := in.Parameters.(*dynamodb.BatchGetItemInput); ok && done.CompareAndSwap(false, true) {
				return middleware.InitializeOutput{Result: &dynamodb.BatchGetItemOutput{UnprocessedKeys: req.RequestItems}}, middleware.Metadata{}, nil
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After) // inside client.Record, which sees what it answers
	})
}

func TestMetricsCountRetriesThrottlesAndUnprocessedKeys(t *testing.T) {
	var attempts atomic.Int64
	throttleTwice := testenv.FaultAt("attempt", func(op string, _ any) error {
		if op == "BatchGetItem" && attempts.Add(1) <= 2 {
			return &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
		}
		return nil
	})
	e := testenv.New(t)
	e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	store := dynamo.New(e.Emb.Client(client.Record, unprocessedOnce, throttleTwice, client.Deadlines,
		client.RetryPolicy(5, 5*time.Millisecond)), e.Store.Table())
	store.Now, store.Log = e.Store.Now, slog.New(slog.NewTextHandler(io.Discard, nil))
	e.Store = store
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.MustQuery(t, "alice", "query Me { me { name } }", nil, nil)

	fams := testenv.Scrape(t, tel)
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"taskgraph_dynamodb_unprocessed_keys_total", 1}, // the viewer's key, sent again
		{"taskgraph_dynamodb_throttles_total", 2},        // the second call's first two attempts
		{"taskgraph_dynamodb_retries_total", 2},
	} {
		if got := testenv.Values(fams, c.metric); len(got) != 1 || got["operation=BatchGetItem"] != c.want {
			t.Errorf("%s = %v, want BatchGetItem %v", c.metric, got, c.want)
		}
	}
	if got := testenv.SampleCounts(fams, "taskgraph_dynamodb_call_duration_seconds"); got["operation=BatchGetItem,outcome=OK"] != 2 {
		t.Errorf("calls %v, want 2 BatchGetItem", got)
	}
}

func TestMetricsLabelFailuresByCode(t *testing.T) {
	throttleAlways := testenv.FaultAt("attempt", func(op string, _ any) error {
		if op == "BatchGetItem" {
			return &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
		}
		return nil
	})
	e := testenv.New(t)
	e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	store := dynamo.New(e.Emb.Client(client.Record, throttleAlways, client.Deadlines, client.RetryPolicy(5, 5*time.Millisecond)), e.Store.Table())
	store.Now, store.Log = e.Store.Now, slog.New(slog.NewTextHandler(io.Discard, nil))
	e.Store = store
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.MustFail(t, "alice", codes.ServiceUnavailable, "query Me { me { name } }", nil)

	fams := testenv.Scrape(t, tel)
	if got := testenv.SampleCounts(fams, "taskgraph_dynamodb_call_duration_seconds"); !maps.Equal(got,
		map[string]uint64{"operation=BatchGetItem,outcome=ProvisionedThroughputExceededException": 1}) {
		t.Errorf("calls %v", got)
	}
	if got := testenv.SampleCounts(fams, "taskgraph_graphql_operation_duration_seconds"); !maps.Equal(got,
		map[string]uint64{"operation=Me,outcome=SERVICE_UNAVAILABLE,type=query": 1}) {
		t.Errorf("operations %v", got)
	}
	if got := testenv.Values(fams, "taskgraph_dynamodb_throttles_total"); got["operation=BatchGetItem"] != 5 {
		t.Errorf("throttles %v, want 5 (every attempt of the retry policy)", got)
	}
}

// A GET query answered 304 is counted with outcome NOT_MODIFIED, apart
// from those that ran: an operator sees how often tags hold.
func TestMetricsCountNotModifiedApart(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	q := map[string]any{"query": "query Me { me { id name } }"}
	first := e.Send(t, q, testenv.GET(), e.As("alice"))
	tag := first.Header.Get("ETag")
	if first.Status != http.StatusOK || tag == "" {
		t.Fatalf("the first GET answered %d with ETag %q", first.Status, tag)
	}
	if again := e.Send(t, q, testenv.GET(), e.As("alice"), testenv.Header("If-None-Match", tag)); again.Status != http.StatusNotModified {
		t.Fatalf("the unchanged GET answered %d, want 304", again.Status)
	}
	want := map[string]uint64{"operation=Me,outcome=OK,type=query": 1, "operation=Me,outcome=NOT_MODIFIED,type=query": 1}
	if got := testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_graphql_operation_duration_seconds"); !maps.Equal(got, want) {
		t.Errorf("operations:\n got %v\nwant %v", got, want)
	}
}
