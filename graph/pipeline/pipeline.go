// Package pipeline is the operation pipeline. Every transport (each a row
// of web's transports, web/transport.go) turns what it receives into
// gqlgen's graphql.RawParams and hands them to the one executor; every
// rule of an operation is a step of that executor, so it applies to every
// transport alike, and a transport added later writes none of them:
//
//  1. before the document is parsed (operation-parameter mutators):
//     operationStart (the operation's state), the operation rate limit
//     (RateLimiter), trusted documents and persisted-query hashes
//     (trustedDocuments), a document to run (requireQuery), then the
//     document's size limits;
//  2. parsing (the token limit) and validation, cached by document text;
//  3. before anything runs (operation-context mutators): @defer in a
//     mutation or a subscription, or over a transport that answers one
//     JSON body (deferDelivery), the complexity limit, the shape limits
//     and production's introspection ban (shapeLimits), strict inputs, a
//     connection given both first and last (pageArguments), the cost rate
//     limit, a subscription's own cost limit (subscriptionSteps);
//  4. around the operation (operation middleware): its telemetry span
//     (observeOperations), its scope (operationScope: per-operation
//     loaders, call counter, deadline, idempotency key), its viewer
//     (requireViewer: a valid token, unexpired at the operation's start)
//     and the live rules of subscriptions (Subscriptions.Operation; around
//     each field, Subscriptions.Field);
//  5. around each response (response middleware): the log line and
//     -debug's extensions.dynamodb (reportCalls), refusals included (an
//     operation with @defer answers in parts and logs one line, at its
//     last part: logOperation), extensions.cost (reportCost, from the
//     complexity and the fields counted as they ran: countFields, cost.go),
//     and the record of a request error (requestErrors).
//
// The pipeline wraps an executable schema (New): the generated one
// (graph/exec) on the resolvers (package graph), which the wiring
// (app.NewHandler) composes. What stays in HTTP middleware is HTTP's, in
// package web, which imports the pipeline (never the reverse): the method
// (a GET runs queries only), the media type, the body's or the URL's size
// and shape (web's badRequest), CORS, reading the Authorization header
// and the client's address (web's httpScope, WithClientAddr), and turning
// a refusal the pipeline recorded (a Refusal in the request's Answer,
// never an HTTP status) into its HTTP status (web's refusalStatus). A
// WebSocket's transport reads its token from connection_init, bounds its
// messages by the same body limit and keeps its subscription ids unique
// (web's wsGuard).
package pipeline

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/taskgraph/taskgraph/graph/incremental"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
)

// New returns the GraphQL executor of es (the generated schema on the
// resolvers, graph.NewExecutableSchema) with the operation pipeline, every
// step in the order it runs, and no transport: the HTTP side
// (web.NewHandler) adds its transports, each of which hands its
// operations to this one pipeline, and its own middleware. rates are the
// token buckets of o's rate limits (NewRateLimiter; nil: none), which the
// subscriptions' events are charged to as well; subs are the live rules
// of subscriptions, run in their places among the steps (nil: none).
func New(es graphql.ExecutableSchema, o Options, rates *RateLimiter, subs Subscriptions) *handler.Server {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Loaders = LoaderConfig(o) // dispatch by level (graph/dispatch), unless a benchmark asks otherwise
	// A query with @defer answers in parts (graph/incremental), which end
	// with its request.
	srv := handler.New(incremental.New(es))
	cache := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(cache)
	srv.SetParserTokenLimit(cmp.Or(o.MaxTokens, DefaultMaxTokens))
	if o.Production {
		noSuggestions(srv) // no "Did you mean" where introspection is off (suggestions.go)
	}
	srv.SetErrorPresenter(ErrorPresenter(o.Log))
	srv.SetRecoverFunc(Recover(o.Log))

	// The operation pipeline, in the order it runs: every transport's
	// operations pass through all of it.
	// 1. Before parsing.
	srv.Use(operationStart{})
	if rates != nil {
		srv.Use(rates) // one operation token before parsing; its cost comes after the complexity limit
	}
	if o.TrustedDocuments != nil {
		srv.Use(trustedDocuments{docs: o.TrustedDocuments, enforce: o.Production})
	}
	srv.Use(requireQuery{})              // a document to run: a request error without
	srv.Use(newDocumentLimits(o, cache)) // bounds what parsing and validation cost
	// 2. Parsing and validation (gqlgen's, cached by document text).
	// 3. After parsing and validation.
	if !o.Production {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.FixedComplexityLimit(cmp.Or(o.ComplexityLimit, DefaultComplexityLimit)))
	srv.Use(shapeLimits{MaxDepth: cmp.Or(o.MaxDepth, DefaultMaxDepth), MaxAliases: cmp.Or(o.MaxAliases, DefaultMaxAliases),
		NoIntrospection: o.Production})
	srv.Use(strictInputs{schema: es.Schema()})
	srv.Use(pageArguments{}) // first with last: BAD_USER_INPUT, nothing read
	if rates != nil {
		srv.Use(rateCost{rates})
	}
	// Subscriptions' own cost limit (it reads the complexity).
	srv.Use(subscriptionSteps{max: cmp.Or(o.MaxSubscriptionComplexity, DefaultMaxSubscriptionComplexity)})
	// 4. Around the operation, outermost first.
	if o.Telemetry != nil {
		srv.AroundOperations(observeOperations(o.Telemetry))
	}
	srv.AroundOperations(operationScope(o, cmp.Or(o.Timeout, DefaultTimeout)))
	srv.AroundOperations(requireViewer(o.Log, o.Auth.Clock()))
	if subs != nil {
		srv.AroundOperations(subs.Operation) // a subscription's stream: where it can go, how it ends
	}
	var hc *httpCache
	if o.Store != nil {
		hc = newHTTPCache(o, es) // a GET's query: its tag checked (304: nothing runs), recorded, issued
		srv.AroundOperations(hc.operation)
		srv.AroundFields(hc.field)
	}
	srv.AroundRootFields(idempotent)
	if subs != nil {
		srv.AroundFields(subs.Field) // an event's fields: its loaders
	}
	if o.Loaders.Dispatch != nil {
		srv.AroundFields(loaders.DispatchFields) // dispatch by level: counts the fields that run
	}
	srv.AroundFields(countFields(cost.MustRead(es.Schema()))) // the actual cost (cost.go)
	// 5. Around each response.
	srv.AroundResponses(reportCalls(o.Log, o.Debug))
	srv.AroundResponses(reportCost(rates)) // extensions.cost (cost.go)
	srv.AroundResponses(requestErrors)     // a request error: no data entry
	if hc != nil {
		srv.AroundResponses(hc.response) // inside reportCalls and reportCost: its reads are the operation's
	}
	return srv
}

// reportCalls logs one line per operation (logOperation: name, type,
// duration, DynamoDB calls, outcome, trace id) and, in debug mode, adds them to the response as extensions.dynamodb.
func reportCalls(log *slog.Logger, debug bool) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		res := next(ctx)
		st := operationState(ctx)
		if res == nil || st == nil || isSubscription(ctx) { // not a line per event
			return res
		}
		calls := st.calls
		logOperation(ctx, log, res, calls)
		if debug {
			byOp, total := calls.ByOp(), calls.Total()
			if res.Extensions == nil {
				res.Extensions = map[string]any{}
			}
			read, write := calls.Capacity()
			res.Extensions["dynamodb"] = map[string]any{"calls": byOp, "total": total, "readUnits": read, "writeUnits": write}
		}
		return res
	}
}
