package pipeline

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Traces and metrics of the handler (Options.Telemetry; internal/telemetry).
// The request's HTTP span and metrics are telemetry.Handler's; here are the
// operation's span and metrics and the loaders' batch spans. Resolvers get
// no spans of their own: none does I/O but through a loader or, for a
// mutation, the store, whose batch and DynamoDB spans say where the time
// went; a span per field would add hundreds per dashboard and nothing more.

// observeOperations (registered first, so it sees every response, refusals
// included) gives each operation a span, its parent the request's, named
// "query Dashboard" with the operation's name, type and complexity (never
// its variables or document), and counts it in the metrics with its outcome,
// duration and consumed capacity. A subscription's span covers only its
// start (the subscribe: its viewer, limits and visibility checks, and
// where its replay starts) and ends there, so that no span lasts as long
// as a subscription; its metrics count it when it ends, its duration its
// lifetime (docs/operations.md, "Live updates").
func observeOperations(t *telemetry.Telemetry) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		name, typ := oc.OperationName, ""
		if oc.Operation != nil {
			name, typ = oc.Operation.Name, string(oc.Operation.Operation)
		}
		var span trace.Span
		if t.Tracing() {
			attrs := []attribute.KeyValue{attribute.String("graphql.operation.name", name),
				attribute.String("graphql.operation.type", typ)}
			if st := extension.GetComplexityStats(ctx); st != nil {
				attrs = append(attrs, attribute.Int("graphql.operation.complexity", st.Complexity))
			}
			spanName := typ
			if name != "" {
				spanName += " " + name
			}
			ctx, span = t.Tracer().Start(ctx, spanName, trace.WithAttributes(attrs...))
		}
		rh := next(ctx)
		if span != nil && typ == string(ast.Subscription) {
			span.SetAttributes(attribute.String("graphql.subscription.span", "start"))
			span.End()
			span = nil
		}
		ended := false
		return func(ctx context.Context) *graphql.Response {
			res := rh(ctx)
			// A subscription's last response is nil; a query's or a
			// mutation's is its only one, or the part with hasNext false
			// of one with @defer (nil: its client went away before).
			last := res == nil
			if typ != string(ast.Subscription) && res != nil {
				last = res.HasNext == nil || !*res.HasNext
			}
			if last && !ended {
				ended = true
				endOperation(ctx, t, span, oc, name, typ, res)
			}
			return res
		}
	}
}

// endOperation ends an operation's span and counts it (a subscription's at
// its end, res nil).
func endOperation(ctx context.Context, t *telemetry.Telemetry, span trace.Span, oc *graphql.OperationContext, name, typ string, res *graphql.Response) {
	var read, write float64
	if calls := client.CallsFrom(ctx); calls != nil {
		read, write = calls.Capacity()
	}
	out := OutcomeOK
	if res != nil {
		out = outcomeOf(ctx, res)
	}
	t.ObserveOperation(telemetry.Operation{Name: name, Type: typ, Outcome: out,
		Seconds: time.Since(oc.Stats.OperationStart).Seconds(), ReadUnits: read, WriteUnits: write})
	if span != nil {
		span.SetAttributes(attribute.String("graphql.outcome", out),
			attribute.Float64("aws.dynamodb.consumed_read_units", read),
			attribute.Float64("aws.dynamodb.consumed_write_units", write))
		if out != OutcomeOK && out != OutcomeNotModified {
			span.SetStatus(otelcodes.Error, out)
		}
		span.End()
	}
}

// traceID is the trace id of the operation's log line: the active span's
// when tracing is on (the same id the request's traceparent carried, if
// it carried a valid one), else that of tp, the traceparent header
// (TraceID).
func traceID(ctx context.Context, tp string) (string, bool) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String(), true
	}
	return TraceID(tp)
}
