// Package telemetry sets up the server's traces (OpenTelemetry, configured by
// the standard OTEL_* environment variables) and metrics (a Prometheus
// registry served at /metrics), and holds the instruments the GraphQL
// handler, its loaders and the DynamoDB client report to.
//
// A nil *Telemetry is valid and does nothing: that is the server with
// neither traces nor metrics, and it costs the handler nothing but a few
// nil checks. New returns nil when neither is asked for.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/felixge/httpsnoop"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of the server's traces unless
// OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names another.
const ServiceName = "taskgraph"

// InstrumentationName names the tracer of the server's spans.
const InstrumentationName = "github.com/taskgraph/taskgraph"

// Config configures New.
type Config struct {
	// Env reads the environment, as the server read it once at start
	// (nil: no variable set). Tracing is on when it
	// names an exporter: OTEL_TRACES_EXPORTER=otlp or console, or an OTLP
	// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) with OTEL_TRACES_EXPORTER unset;
	// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off. The
	// exporters, the sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG)
	// and the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) read the
	// rest of their OTEL_* settings from the process environment themselves.
	Env func(string) string
	// Metrics turns the Prometheus registry and its instruments on.
	Metrics bool
	// MaxOperationNames caps the distinct operation names that label
	// metrics; later names are counted as "other". 0 means
	// DefaultMaxOperationNames.
	MaxOperationNames int
	// SpanExporter, when set, turns tracing on with this exporter, each span
	// exported as it ends, every trace sampled (tests).
	SpanExporter sdktrace.SpanExporter
}

// Telemetry is the server's tracer and metrics. Its methods do nothing on a
// nil *Telemetry.
type Telemetry struct {
	tracer   trace.Tracer // a no-op tracer when tracing is off
	tracing  bool
	provider *sdktrace.TracerProvider
	prop     propagation.TextMapPropagator
	m        *metrics // nil when metrics are off
	names    *names
}

// New returns the telemetry cfg asks for, or nil when it asks for none.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	env := cfg.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	exporters, err := tracesExporters(env)
	if err != nil {
		return nil, err
	}
	if !cfg.Metrics && len(exporters) == 0 && cfg.SpanExporter == nil {
		return nil, nil
	}
	t := &Telemetry{tracer: noop.NewTracerProvider().Tracer(InstrumentationName), names: newNames(cfg.MaxOperationNames),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	if cfg.Metrics {
		t.m = newMetrics()
	}
	var opts []sdktrace.TracerProviderOption
	if cfg.SpanExporter != nil {
		opts = append(opts, sdktrace.WithSyncer(cfg.SpanExporter), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	}
	for _, name := range exporters {
		exp, err := newExporter(ctx, name, env)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	if len(opts) > 0 {
		res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", ServiceName)),
			resource.WithFromEnv(), resource.WithTelemetrySDK())
		if err != nil {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
		}
		t.provider = sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...)
		t.tracer, t.tracing = t.provider.Tracer(InstrumentationName), true
	}
	return t, nil
}

// tracesExporters returns the span exporters the environment names
// ("otlp", "console"), none when tracing is off.
func tracesExporters(env func(string) string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	list := strings.TrimSpace(env("OTEL_TRACES_EXPORTER"))
	if list == "" {
		if env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
			return []string{"otlp"}, nil
		}
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "none":
			return nil, nil
		case "otlp", "console":
			out = append(out, name)
		default:
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp, console or none", name)
		}
	}
	return out, nil
}

// newExporter makes the named exporter; OTLP over HTTP with protobuf
// (otlp.go; OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the default, the only one
// built in).
func newExporter(_ context.Context, name string, env func(string) string) (sdktrace.SpanExporter, error) {
	if name == "console" {
		return stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	}
	proto := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return newOTLPExporter(env)
	case "grpc":
		return nil, errGRPC
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf", proto)
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracing }

// Metrics reports whether the metrics are on.
func (t *Telemetry) Metrics() bool { return t != nil && t.m != nil }

// Tracer returns the tracer of the server's spans: a no-op one when tracing
// is off.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(InstrumentationName)
	}
	return t.tracer
}

// Shutdown exports the spans still buffered and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

type ctxKey struct{}

// FromContext returns the Telemetry of a request that Handler served, or nil.
func FromContext(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(ctxKey{}).(*Telemetry)
	return t
}

// Handler wraps a request handler: with tracing, a server span per request
// (its parent from a W3C traceparent header, and the response carrying the
// request's traceparent); with metrics, the in-flight gauge and the
// responses by status. The request's context carries t (FromContext) and
// observes its DynamoDB calls (client.WithObserver). streamOf names the
// long-lived stream a request opens, as its transport (chosen before, by
// the HTTP side) says: "websocket", "sse", or "" for a request answered
// at once (nil: none opens one). Such a stream lasts as long as its
// subscriptions (hours): it gets no span of its own (its traceparent, if
// any, is still the parent of its operations' spans) and is no request in
// flight; its transport counts it in taskgraph_live_connections_open while
// it lasts (StreamOpened, by the same name): it outlives its handler.
func (t *Telemetry) Handler(next http.Handler, streamOf func(*http.Request) string) http.Handler {
	if t == nil {
		return next
	}
	stream := func(r *http.Request) string {
		if streamOf == nil {
			return ""
		}
		return streamOf(r)
	}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := client.WithObserver(context.WithValue(r.Context(), ctxKey{}, t), t)
		if t.tracing {
			t.prop.Inject(ctx, propagation.HeaderCarrier(w.Header()))
		}
		if t.m == nil {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		if stream(r) == "" { // a stream is counted by its transport while it lasts (StreamOpened)
			t.m.inFlight.Inc()
			defer t.m.inFlight.Dec()
		}
		code := http.StatusOK
		w = httpsnoop.Wrap(w, httpsnoop.Hooks{WriteHeader: func(f httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
			return func(c int) {
				if c >= 200 || c == http.StatusSwitchingProtocols { // not 1xx informational
					code = c
				}
				f(c)
			}
		}})
		defer func() { t.m.httpRequests.WithLabelValues(statusLabel(code)).Inc() }()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
	if t.tracing {
		inner := h
		traced := otelhttp.NewHandler(inner, "taskgraph", otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.prop),
			otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stream(r) == "" {
				traced.ServeHTTP(w, r)
				return
			}
			inner.ServeHTTP(w, r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
		})
	}
	return h
}

// statusLabel is an HTTP status as a label value, from a bounded set.
func statusLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}
