package pipeline

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/etag"
)

// OutcomeOK is the outcome of an operation that answered without errors.
const OutcomeOK = "OK"

// OutcomeNotModified is the outcome of a GET query answered 304 Not
// Modified (HTTP caching): it did not run; its calls are its check's.
const OutcomeNotModified = "NOT_MODIFIED"

// operationAttrs are the attributes of an operation's log line (reportCalls):
// its name, type, duration, DynamoDB calls, outcome and, when the request
// carried a valid W3C traceparent header, its trace id. They name nothing the
// client sent but the operation's name: no token, variable, document or body.
func operationAttrs(ctx context.Context, oc *graphql.OperationContext, res *graphql.Response, calls *client.Calls) []slog.Attr {
	byOp, total := calls.ByOp(), calls.Total()
	read, write := calls.Capacity()
	name, typ := oc.OperationName, ""
	if oc.Operation != nil {
		name, typ = oc.Operation.Name, string(oc.Operation.Operation)
	}
	if byOp == nil {
		byOp = map[string]int{}
	}
	attrs := []slog.Attr{
		slog.String("operation", name),
		slog.String("type", typ),
		slog.Int64("ms", time.Since(oc.Stats.OperationStart).Milliseconds()),
		slog.Int("dynamodb_calls", total),
		slog.Any("dynamodb_by_op", byOp),
		slog.Float64("rcu", read),
		slog.Float64("wcu", write),
		slog.String("outcome", outcomeOf(ctx, res)),
		slog.Int("errors", len(res.Errors)),
	}
	if id, ok := traceID(ctx, oc.Headers.Get("Traceparent")); ok {
		attrs = append(attrs, slog.String("trace_id", id))
	}
	return attrs
}

// logOperation writes the operation's log line. An operation with @defer
// answers in parts (hasNext true on all but the last): it gets one line, at
// its last part, with all its calls and the errors of every part.
func logOperation(ctx context.Context, log *slog.Logger, res *graphql.Response, calls *client.Calls) {
	oc := graphql.GetOperationContext(ctx)
	if st := operationState(ctx); st != nil {
		st.mu.Lock()
		if res.HasNext != nil && *res.HasNext {
			st.parts++
			st.partErrors = append(st.partErrors, res.Errors...)
			st.mu.Unlock()
			return
		}
		st.logged = true
		if len(st.partErrors) > 0 {
			all := *res
			all.Errors = append(slices.Clip(st.partErrors), res.Errors...)
			res = &all
		}
		st.mu.Unlock()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "graphql", operationAttrs(ctx, oc, res, calls)...)
}

// logNotModified writes the line of a query answered 304 Not Modified
// (HTTP caching: its tag was still valid, so it did not run; outcome
// NOT_MODIFIED), with the calls its check made.
func logNotModified(ctx context.Context, log *slog.Logger, calls *client.Calls) {
	log.LogAttrs(ctx, slog.LevelInfo, "graphql", operationAttrs(ctx, graphql.GetOperationContext(ctx), &graphql.Response{}, calls)...)
}

// logUnfinished writes the log line of an operation with @defer whose
// parts stopped before the last (its client went away), marked
// unfinished=true, unless it is written already.
func logUnfinished(ctx context.Context, log *slog.Logger, st *opState) {
	st.mu.Lock()
	if st.parts == 0 || st.logged {
		st.mu.Unlock()
		return
	}
	st.logged = true
	res := &graphql.Response{Errors: slices.Clone(st.partErrors)}
	st.mu.Unlock()
	attrs := operationAttrs(ctx, graphql.GetOperationContext(ctx), res, st.calls)
	log.LogAttrs(ctx, slog.LevelInfo, "graphql", append(attrs, slog.Bool("unfinished", true))...)
}

// outcomeOf is the outcome of ctx's operation whose response is res:
// OutcomeNotModified for a 304, else outcome(res).
func outcomeOf(ctx context.Context, res *graphql.Response) string {
	if r := etag.From(ctx); r != nil && r.NotModified() {
		return OutcomeNotModified
	}
	return outcome(res)
}

// outcome is OutcomeOK, or the extensions.code of the response's first error
// (ErrorPresenter gives every error one; "UNKNOWN" should one have none).
func outcome(res *graphql.Response) string {
	if len(res.Errors) == 0 {
		return OutcomeOK
	}
	if code, ok := res.Errors[0].Extensions["code"].(string); ok && code != "" {
		return code
	}
	return "UNKNOWN"
}

// TraceID returns the trace-id field of tp, the value of a request's W3C
// traceparent header (version-traceid-parentid-flags, lowercase hex), when
// it is valid: version not ff, a trace id and a parent id that are not all
// zeros; a version 00 header has exactly four fields, later versions may
// add more.
func TraceID(tp string) (string, bool) {
	if len(tp) < 55 || (len(tp) > 55 && tp[55] != '-') {
		return "", false
	}
	version, trace, parent, flags := tp[0:2], tp[3:35], tp[36:52], tp[53:55]
	if tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || !lowerHex(version) || version == "ff" ||
		(version == "00" && len(tp) != 55) || !lowerHex(trace) || !lowerHex(parent) || !lowerHex(flags) ||
		allZeros(trace) || allZeros(parent) {
		return "", false
	}
	return trace, true
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZeros(s string) bool {
	for i := range len(s) {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
