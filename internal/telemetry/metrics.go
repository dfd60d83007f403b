package telemetry

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The metrics (docs/operations.md lists them with their labels). They are
// client_golang instruments in a registry of their own: the Prometheus text
// format straight from the library that defines it, with no OpenTelemetry
// metrics SDK between the counters and the scrape.
type metrics struct {
	reg *prometheus.Registry

	opDuration      *prometheus.HistogramVec // operation, type, outcome
	opReadUnits     *prometheus.CounterVec   // operation
	opWriteUnits    *prometheus.CounterVec   // operation
	callDuration    *prometheus.HistogramVec // operation (DynamoDB), outcome
	callReadUnits   *prometheus.CounterVec   // operation (DynamoDB)
	callWriteUnits  *prometheus.CounterVec   // operation (DynamoDB)
	callRetries     *prometheus.CounterVec   // operation (DynamoDB)
	callThrottles   *prometheus.CounterVec   // operation (DynamoDB)
	callUnprocessed *prometheus.CounterVec   // operation (DynamoDB)
	batchKeys       *prometheus.HistogramVec // loader
	inFlight        prometheus.Gauge
	httpRequests    *prometheus.CounterVec // code
	subscriptions   prometheus.Gauge
	streams         *prometheus.GaugeVec   // transport: websocket, sse
	eventsPublished *prometheus.CounterVec // source (commit, sweep), outcome (OK, error)
	eventsDelivered prometheus.Counter
	fanOut          prometheus.Histogram
	refused         prometheus.Counter
	resolutions     prometheus.Counter
}

// Buckets of the histograms.
var (
	durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	keysBuckets     = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500}
	fanOutBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .1, .15, .2, .25, .3, .4, .5, 1, 2.5, 5, 10}
)

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		f(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		f(h)
		return h
	}
	m := &metrics{reg: reg,
		opDuration: histogram("taskgraph_graphql_operation_duration_seconds",
			"GraphQL operations by name, type and outcome (OK or the first error's code), and their duration.",
			durationBuckets, "operation", "type", "outcome"),
		opReadUnits: counter("taskgraph_graphql_consumed_read_units_total",
			"DynamoDB read capacity units consumed by GraphQL operations, by operation name.", "operation"),
		opWriteUnits: counter("taskgraph_graphql_consumed_write_units_total",
			"DynamoDB write capacity units consumed by GraphQL operations, by operation name.", "operation"),
		callDuration: histogram("taskgraph_dynamodb_call_duration_seconds",
			"DynamoDB calls by operation and outcome (OK or the error code), and their duration, retries included.",
			durationBuckets, "operation", "outcome"),
		callReadUnits: counter("taskgraph_dynamodb_consumed_read_units_total",
			"DynamoDB read capacity units consumed, by DynamoDB operation.", "operation"),
		callWriteUnits: counter("taskgraph_dynamodb_consumed_write_units_total",
			"DynamoDB write capacity units consumed, by DynamoDB operation.", "operation"),
		callRetries: counter("taskgraph_dynamodb_retries_total",
			"DynamoDB attempts the SDK retried (attempts beyond the first), by operation.", "operation"),
		callThrottles: counter("taskgraph_dynamodb_throttles_total",
			"DynamoDB attempts refused by throttling, by operation.", "operation"),
		callUnprocessed: counter("taskgraph_dynamodb_unprocessed_keys_total",
			"Keys (BatchGetItem) and items (BatchWriteItem) DynamoDB handed back unprocessed, by operation.", "operation"),
		batchKeys: histogram("taskgraph_loader_batch_keys",
			"Keys per loader batch (one batch: one BatchGetItem, or one round of Queries), by loader.",
			keysBuckets, "loader"),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "taskgraph_http_requests_in_flight",
			Help: "HTTP requests being served, but the WebSocket and server-sent-events streams (taskgraph_live_connections_open)."}),
		httpRequests: counter("taskgraph_http_requests_total", "HTTP responses by status code.", "code"),
		subscriptions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "taskgraph_graphql_subscriptions_open",
			Help: "Open GraphQL subscriptions."}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "taskgraph_live_connections_open",
			Help: "Open WebSocket connections and server-sent-events streams of /query, by transport (websocket, sse)."}, []string{"transport"}),
		eventsPublished: counter("taskgraph_live_events_published_total",
			"Events of committed changes handed to the event stream (NATS), by source (commit: by the mutation; sweep: by the outbox sweep, after a failed or lost publication) and outcome (OK, error).",
			"source", "outcome"),
		eventsDelivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "taskgraph_live_events_delivered_total",
			Help: "Events sent to subscribers (one per subscriber per event)."}),
		fanOut: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "taskgraph_live_event_fanout_seconds",
			Help:    "From an event's arrival at this instance (off the event stream) until it was written to the last of its local subscribers, one observation per event and project feed.",
			Buckets: fanOutBuckets}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "taskgraph_connections_refused_total",
			Help: "Connections refused at accept because the process had no file descriptor left (web.GuardAccept)."}),
		resolutions: prometheus.NewCounter(prometheus.CounterOpts{Name: "taskgraph_live_event_resolutions_total",
			Help: "Events resolved and encoded for subscribers: once per event for every group of its recipients answered alike."}),
	}
	f(m.inFlight)
	f(m.subscriptions)
	f(m.streams)
	f(m.eventsDelivered)
	f(m.fanOut)
	f(m.refused)
	f(m.resolutions)
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// MetricsHandler serves the metrics in the Prometheus text format (GET
// /metrics); 404 when metrics are off.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil || t.m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.m.reg, promhttp.HandlerOpts{})
}

// Operation is one finished GraphQL operation, as the handler reports it.
type Operation struct {
	Name       string  // as the document names it ("" when anonymous)
	Type       string  // query, mutation, subscription; "" when unknown
	Outcome    string  // OK or the first error's code
	Seconds    float64 // its duration
	ReadUnits  float64 // the DynamoDB capacity it consumed
	WriteUnits float64
}

// ObserveOperation counts a finished operation (metrics only).
func (t *Telemetry) ObserveOperation(op Operation) {
	if t == nil || t.m == nil {
		return
	}
	name := t.OperationLabel(op.Name)
	typ := op.Type
	switch typ {
	case "query", "mutation", "subscription":
	default:
		typ = "unknown"
	}
	t.m.opDuration.WithLabelValues(name, typ, codeLabel(op.Outcome)).Observe(op.Seconds)
	if op.ReadUnits > 0 {
		t.m.opReadUnits.WithLabelValues(name).Add(op.ReadUnits)
	}
	if op.WriteUnits > 0 {
		t.m.opWriteUnits.WithLabelValues(name).Add(op.WriteUnits)
	}
}

// SubscriptionOpened counts a subscription as open (taskgraph_graphql_subscriptions_open).
func (t *Telemetry) SubscriptionOpened() {
	if t != nil && t.m != nil {
		t.m.subscriptions.Inc()
	}
}

// SubscriptionClosed counts an open subscription as closed.
func (t *Telemetry) SubscriptionClosed() {
	if t != nil && t.m != nil {
		t.m.subscriptions.Dec()
	}
}

func endNothing() {}

// StartBatch reports a loader batch of keys keys about to be read: the
// batch-size histogram and, with tracing, a span (its end is the returned
// function) that the batch's DynamoDB calls become children of.
func (t *Telemetry) StartBatch(ctx context.Context, loader string, keys int) (context.Context, func()) {
	if t == nil {
		return ctx, endNothing
	}
	if t.m != nil {
		t.m.batchKeys.WithLabelValues(loader).Observe(float64(keys))
	}
	if !t.tracing {
		return ctx, endNothing
	}
	ctx, span := t.tracer.Start(ctx, "loader "+loader, trace.WithAttributes(
		attribute.String("taskgraph.loader", loader), attribute.Int("taskgraph.loader.keys", keys)))
	return ctx, func() { span.End() }
}

// ObserveCall reports a DynamoDB call (client.Observer): the call
// metrics and, with tracing, a client span over the call, retries included.
func (t *Telemetry) ObserveCall(ctx context.Context, c *client.Call) {
	if t == nil {
		return
	}
	outcome := callOutcome(c.Err)
	t.countCall(c, outcome)
	if !t.tracing {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("rpc.system", "aws-api"), attribute.String("rpc.service", "DynamoDB"),
		attribute.String("rpc.method", c.Operation),
		attribute.StringSlice("aws.dynamodb.table_names", []string{c.Table}),
		attribute.Float64("aws.dynamodb.consumed_read_units", c.ReadUnits),
		attribute.Float64("aws.dynamodb.consumed_write_units", c.WriteUnits),
		attribute.Int("aws.dynamodb.attempts", c.Attempts),
		attribute.Int("aws.dynamodb.throttles", c.Throttles),
		attribute.Int("aws.dynamodb.unprocessed", c.Unprocessed),
	}
	if c.Index != "" {
		attrs = append(attrs, attribute.String("aws.dynamodb.index_name", c.Index))
	}
	_, span := t.tracer.Start(ctx, "DynamoDB."+c.Operation, trace.WithTimestamp(c.Start),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if c.Err != nil {
		span.SetStatus(codes.Error, outcome)
	}
	span.End(trace.WithTimestamp(c.End))
}

// callOutcome is "OK", the DynamoDB error code when it is one of a known
// set, "canceled", "timeout", or "error".
func callOutcome(err error) string {
	if err == nil {
		return "OK"
	}
	var api smithy.APIError
	if errors.As(err, &api) && knownCodes[api.ErrorCode()] {
		return api.ErrorCode()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}

// knownCodes are the DynamoDB error codes that label metrics as they are.
var knownCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"ConditionalCheckFailedException": true, "TransactionCanceledException": true,
	"TransactionConflictException": true, "TransactionInProgressException": true,
	"ResourceNotFoundException": true, "ValidationException": true, "InternalServerError": true,
	"ServiceUnavailable": true, "ItemCollectionSizeLimitExceededException": true,
	"AccessDeniedException": true, "UnrecognizedClientException": true,
	"IdempotentParameterMismatchException": true,
}

// callOpLabel keeps the DynamoDB operation label to the API's names.
func callOpLabel(op string) string {
	if len(op) > 40 || !isName(op) {
		return "other"
	}
	return op
}

// codeLabel keeps an outcome label to the shape of an error code.
func codeLabel(code string) string {
	if len(code) == 0 || len(code) > 40 || !isCode(code) {
		return "UNKNOWN"
	}
	return code
}

// isName reports whether s is a GraphQL name: [_A-Za-z][_0-9A-Za-z]*.
func isName(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// isCode reports whether s is shaped as an error code: [A-Z][A-Z0-9_]*.
func isCode(s string) bool {
	for i := range len(s) {
		c := s[i]
		if (c < 'A' || c > 'Z') && (i == 0 || (c != '_' && (c < '0' || c > '9'))) {
			return false
		}
	}
	return s != ""
}

// DefaultMaxOperationNames is how many distinct operation names label the
// metrics (Config.MaxOperationNames).
const DefaultMaxOperationNames = 200

// Operation name labels beyond the names themselves.
const (
	LabelAnonymous = "anonymous" // an operation without a name
	LabelOther     = "other"     // past the cap, or not a GraphQL name
)

// names admits the first max distinct valid operation names as labels.
type names struct {
	max  int
	mu   sync.RWMutex
	seen map[string]bool
}

func newNames(max int) *names {
	if max <= 0 {
		max = DefaultMaxOperationNames
	}
	return &names{max: max, seen: map[string]bool{}}
}

// maxNameLen bounds an operation name label.
const maxNameLen = 64

// OperationLabel returns the label of an operation name: the name itself if
// it is a GraphQL name of at most 64 characters and one of the first
// MaxOperationNames distinct names seen, LabelAnonymous for "", LabelOther
// otherwise. Names come from documents: a client cannot make the set grow
// past the cap.
func (t *Telemetry) OperationLabel(name string) string {
	if name == "" {
		return LabelAnonymous
	}
	n := t.names
	n.mu.RLock()
	ok, full := n.seen[name], len(n.seen) >= n.max
	n.mu.RUnlock()
	if ok {
		return name
	}
	if full || len(name) > maxNameLen || !isName(name) {
		return LabelOther
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.seen) >= n.max {
		return LabelOther
	}
	n.seen[name] = true
	return name
}
