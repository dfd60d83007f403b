package pipeline

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Subscriptions are the live rules the pipeline runs for subscriptions
// (package graph's, on the hub of package live), each in its place among
// the steps (New): the pipeline's own rules apply to a subscription as to
// any operation, these add what a stream of events needs.
type Subscriptions interface {
	// Operation runs around each operation (after its viewer is
	// required): a subscription's stream, refused where its transport
	// cannot stream it (Refuse, RefusedNeedsStream), and its end.
	Operation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler
	// Event runs around each response of an operation, outermost: for a
	// subscription, each event's, re-checked once resolved.
	Event(ctx context.Context, next graphql.ResponseHandler) *graphql.Response
	// Field runs around each field (after the root fields' steps): an
	// event's fields find the event's loaders.
	Field(ctx context.Context, next graphql.Resolver) (any, error)
}

// The cost of subscriptions. A query is charged once; a subscription's
// selection runs again for every event, for every subscriber. So:
//
//   - a subscription's selection is bounded before it opens, by its cost
//     (the complexity of the query cost functions, graph's setComplexity),
//     at most Options.MaxSubscriptionComplexity: far below a query's
//     limit, since it is paid per event (subscriptionSteps);
//   - every event resolved for a subscriber is charged that cost against
//     the subscriber's cost bucket (rateLimits), as a query of that
//     selection would be (ChargeEvent); a viewer whose bucket is empty
//     has their subscription ended with RATE_LIMITED (retry later with
//     after: the last cursor received), rather than events piling up.
//
// Each event's reads are also shared: by all of the instance's recipients
// for what does not depend on the viewer, by one viewer's subscriptions for
// what does (package graph's live rules).

// subscriptionSteps is the executor extension of subscriptions: their
// cost bound (MutateOperationContext, after the complexity limit, which
// computes the cost) and the live rules around each event
// (InterceptResponse: Subscriptions.Event).
type subscriptionSteps struct {
	max  int
	subs Subscriptions
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = subscriptionSteps{}

func (subscriptionSteps) ExtensionName() string { return "SubscriptionSteps" }

func (subscriptionSteps) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a subscription whose cost is above the
// limit, before it opens.
func (l subscriptionSteps) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return nil
	}
	stats := extension.GetComplexityStats(graphql.WithOperationContext(ctx, oc))
	if stats == nil || stats.Complexity <= l.max {
		return nil
	}
	return &gqlerror.Error{Message: fmt.Sprintf("the subscription costs %d, which it would cost again for every event; the limit of a subscription is %d",
		stats.Complexity, l.max), Extensions: map[string]any{"code": codes.Complexity}}
}

// InterceptResponse runs the live rules around each event of a
// subscription (Subscriptions.Event).
func (l subscriptionSteps) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if l.subs == nil {
		return next(ctx)
	}
	return l.subs.Event(ctx, next)
}

// ChargeEvent takes the cost of an event resolved for ctx's subscription
// (its complexity, as a query's) from its viewer's cost bucket, and
// returns the RATE_LIMITED error that ends the subscription when the
// bucket holds too little (nil: charged, or no rate limits).
func ChargeEvent(ctx context.Context, cost int) *gqlerror.Error {
	st := operationState(ctx)
	if st == nil || st.rates == nil || cost <= 0 {
		return nil
	}
	if wait := take(st.rates.bucketsFor(st.rateKey).cost, st.rates.now(), cost); wait > 0 {
		return &gqlerror.Error{Message: fmt.Sprintf("rate limit exceeded by the cost of this subscription's events; subscribe again after %d s with after: the last cursor received",
			retrySeconds(wait)), Extensions: map[string]any{"code": codes.RateLimited}}
	}
	return nil
}
