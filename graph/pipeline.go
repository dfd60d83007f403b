package graph

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The operation pipeline. Every transport (each a row of web's transports,
// web/transport.go) turns what it receives into gqlgen's
// graphql.RawParams and hands them to the one executor; every rule of an
// operation is a step of that executor, so it applies to every transport
// alike, and a transport added later writes none of them:
//
//  1. before the document is parsed (operation-parameter mutators):
//     operationStart (the operation's state), the operation rate limit
//     (rateLimits), trusted documents and persisted-query hashes
//     (trustedDocuments), a document to run (requireQuery), then the
//     document's size limits;
//  2. parsing (the token limit) and validation, cached by document text;
//  3. before anything runs (operation-context mutators): @defer in a
//     mutation or a subscription, or over a transport that answers one
//     JSON body (deferDelivery), the complexity
//     limit, the shape limits and production's introspection ban
//     (shapeLimits), strict inputs, a connection given both first and
//     last (pageArguments), the cost rate limit;
//  4. around the operation (operation middleware): its telemetry span
//     (observeOperations), its scope (operationScope: per-operation
//     loaders, call counter, deadline, idempotency key), its viewer
//     (requireViewer: a valid token, unexpired at the operation's start)
//     and the live rules of subscriptions (liveOperations);
//  5. around each response (response middleware): the log line and
//     -debug's extensions.dynamodb (reportCalls), refusals included (an
//     operation with @defer answers in parts and logs one line, at its
//     last part: logOperation), and the record of a request error
//     (requestErrors).
//
// What stays in HTTP middleware is HTTP's, in package web, which imports
// graph (never the reverse): the method (a GET runs queries only), the
// media type, the body's or the URL's size and shape (web's badRequest),
// CORS, reading the Authorization header and the client's address (web's
// httpScope, WithClientAddr), and turning a refusal the pipeline recorded
// (answerStatus, answerNoData, in the request's Answer) into its HTTP
// status. A WebSocket's transport reads its token from connection_init,
// bounds its messages by the same body limit and keeps its subscription
// ids unique (web's wsGuard).

// opState is one operation's state, whatever its transport: made by the
// first step of the pipeline, before the document is parsed, and kept in
// the operation context's stats, so that every later step (the rate
// limits, the scope, the log line) finds the same one, even for an
// operation refused before it runs.
type opState struct {
	// calls counts the operation's DynamoDB calls (reportCalls, -debug).
	calls *client.Calls
	// rateKey is whose token buckets pay for it: the viewer's, or the
	// client address's without a valid token.
	rateKey string

	mu sync.Mutex
	// parts and partErrors count the parts answered so far of an operation
	// with @defer and hold their errors, for its one log line
	// (logOperation); logged: the line is written.
	parts      int
	partErrors gqlerror.List
	logged     bool
}

const opStateName = "taskgraph.operation"

// operationState returns the state of ctx's operation, or nil outside one.
func operationState(ctx context.Context) *opState {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	st, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(opStateName).(*opState)
	return st
}

// operationStart is the pipeline's first step: it gives the operation its
// state.
type operationStart struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = operationStart{}

func (operationStart) ExtensionName() string                   { return "OperationStart" }
func (operationStart) Validate(graphql.ExecutableSchema) error { return nil }

func (operationStart) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	graphql.GetOperationContext(ctx).Stats.SetExtension(opStateName, &opState{calls: &client.Calls{}, rateKey: rateKeyOf(ctx)})
	return nil
}

// MutateOperationContext is the first step after validation: an operation
// with @defer where its parts cannot be delivered is refused
// (deferDelivery).
func (operationStart) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	return deferDelivery(ctx, oc)
}

// rateKeyOf is the rate-limit key of ctx's operation: its viewer when the
// token is valid, otherwise the client's address (WithClientAddr; forwarded
// headers are not trusted, see docs/security.md).
func rateKeyOf(ctx context.Context) string {
	if v, err := auth.Viewer(ctx); err == nil {
		return "viewer:" + v
	}
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	return "ip:" + addr
}

// operationScope gives each operation what a request of its own would
// have, on every transport: its call counter, and for a query or mutation
// its own loaders (never shared with another operation, however long the
// connection), its deadline (o.Timeout from the operation's start) and its
// idempotency key. A subscription gets no loaders: each event's reads go
// through the event's own (live.go), and each event's reads have their
// own time limit.
func operationScope(o Options, timeout time.Duration) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if st := operationState(ctx); st != nil {
			ctx = client.WithObserver(ctx, st.calls)
		}
		if isSubscription(ctx) {
			return next(loaders.With(ctx, nil))
		}
		viewer, _ := auth.Viewer(ctx)
		ctx = dynamo.WithConsistency(ctx, readsOf(oc))
		ctx = loaders.With(ctx, loaders.New(loaderDeps(o.Store, o.Now), viewer, o.Loaders))
		start := oc.Stats.OperationStart
		if start.IsZero() {
			start = time.Now()
		}
		// The deadline bounds the DynamoDB calls, not the operation's own
		// context: gqlgen answers nothing at all for a cancelled one.
		ctx = client.WithDeadline(ctx, start.Add(timeout))
		// A WebSocket's operations all carry its upgrade request's headers:
		// a key there is no one operation's.
		if k := oc.Headers.Get(IdempotencyHeader); k != "" && !subscription.OnSocket(ctx) {
			ctx = context.WithValue(ctx, idemHeaderKey{}, k)
		}
		responses, st := next(ctx), operationState(ctx)
		if st == nil {
			return responses
		}
		// An operation with @defer whose client went away before its last
		// part still gets its one log line, when its responses end.
		return func(ctx context.Context) *graphql.Response {
			res := responses(ctx)
			if res == nil {
				logUnfinished(ctx, o.Log, st)
			}
			return res
		}
	}
}

// answerStatus records the HTTP status of a refusal, where the operation
// came in a JSON request; on a stream or a socket it does nothing (their
// refusals are messages of the stream).
func answerStatus(ctx context.Context, status int, retryAfter time.Duration) {
	if a := AnswerOf(ctx); a != nil {
		a.mu.Lock()
		a.status, a.retryAfter = status, retryAfter
		a.mu.Unlock()
	}
}

// answerRequestError records that the operation was refused as a request
// error before it was parsed: over HTTP a 400 whose body has no data
// entry.
func answerRequestError(ctx context.Context) {
	if a := AnswerOf(ctx); a != nil {
		a.mu.Lock()
		a.status, a.noData = http.StatusBadRequest, true
		a.mu.Unlock()
	}
}

// answerNoData records that the operation's answer is a request error: it
// failed before it ran (parsing, validation, variable coercion, the
// operation not found, the limits checked after parsing). Its status is
// then the HTTP side's for a request error, unless a step chose one.
func answerNoData(ctx context.Context) {
	if a := AnswerOf(ctx); a != nil {
		a.mu.Lock()
		a.noData = true
		a.mu.Unlock()
	}
}

// requestErrors is the response middleware that records a request error:
// a response with errors and no data, which only an operation refused
// before it ran has (gqlgen's DispatchError).
func requestErrors(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	res := next(ctx)
	if res != nil && res.Data == nil && len(res.Errors) > 0 {
		answerNoData(ctx)
	}
	return res
}

// requireQuery refuses, as a request error (400), an operation with no
// document to run once the trusted-documents step has had its say: no
// query, documentId or persisted-query hash at all.
type requireQuery struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = requireQuery{}

func (requireQuery) ExtensionName() string                   { return "RequireQuery" }
func (requireQuery) Validate(graphql.ExecutableSchema) error { return nil }

func (requireQuery) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if strings.TrimSpace(p.Query) == "" {
		return refusal(ctx, CodeBadRequest, "the request has no query: send query (or documentId) with the GraphQL document to run")
	}
	return nil
}

// readsOf is how an operation reads (dynamo.Consistency): a mutation's
// guards and answer and a sync strongly (dynamo.Guard, dynamo.SyncRead), a
// query's screen eventually consistent (dynamo.Screen).
func readsOf(oc *graphql.OperationContext) dynamo.Consistency {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return dynamo.Guard
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		if f.Name == "sync" {
			return dynamo.SyncRead
		}
	}
	return dynamo.Screen
}
