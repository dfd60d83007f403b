package pipeline

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/taskgraph/taskgraph/graph/dispatch"
	"github.com/taskgraph/taskgraph/graph/incremental"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// opState is one operation's state, whatever its transport: made by the
// first step of the pipeline, before the document is parsed, and kept in
// the operation context's stats, so that every later step (the rate
// limits, the scope, the log line) finds the same one, even for an
// operation refused before it runs.
type opState struct {
	// calls counts the operation's DynamoDB calls (reportCalls, -debug).
	calls *client.Calls
	// actual counts its actual cost (countFields, reportCost).
	actual cost.Counter
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
// through the event's own (package graph's live rules), and each event's
// reads have their own time limit.
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
		ctx = loaders.With(ctx, loaders.New(LoaderDeps(o.Store, o.Now), viewer, o.Loaders))
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

// LoaderDeps are what the loaders of an operation, or of a live event,
// work with: the store, the clock now, and the executor's view of the
// selections (a query with @defer: its plan, graph/incremental).
func LoaderDeps(store *dynamo.Store, now func() time.Time) loaders.Deps {
	return loaders.Deps{Store: store, Now: now, Lookahead: incremental.LookaheadFields, Defers: incremental.Defers}
}

// LoaderConfig is o's loaders' configuration: every query's, mutation's
// and live event's batches are read level by level, not by a window
// (package graph/dispatch), unless a benchmark asks for a window
// (Loaders.Wait) or no batching at all. app.NewHandler gives the same
// dispatcher to the pipeline and to the live events' loaders (graph).
func LoaderConfig(o Options) loaders.Config {
	c := o.Loaders
	if c.Dispatch == nil && c.Wait == 0 && !c.NoBatch {
		c.Dispatch = &dispatch.Levels{Log: o.Log}
	}
	return c
}

// isSubscription reports whether ctx's operation is a subscription.
func isSubscription(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}

// requireQuery refuses, as a request error (RefusedRequest), an operation
// with no document to run once the trusted-documents step has had its
// say: no query, documentId or persisted-query hash at all.
type requireQuery struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = requireQuery{}

func (requireQuery) ExtensionName() string                   { return "RequireQuery" }
func (requireQuery) Validate(graphql.ExecutableSchema) error { return nil }

func (requireQuery) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if strings.TrimSpace(p.Query) == "" {
		return refusal(ctx, codes.BadRequest, "the request has no query: send query (or documentId) with the GraphQL document to run")
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
