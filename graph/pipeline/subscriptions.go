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
// (package graph's, over graph/subscription and the hub of package live),
// each in its place among the steps (New): the pipeline's own rules apply
// to a subscription as to any operation, these add what a stream of
// events needs.
type Subscriptions interface {
	// Operation runs around each operation (after its viewer is
	// required): a subscription over a transport that cannot stream it is
	// refused (Refuse, RefusedNeedsStream).
	Operation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler
	// Field runs around each field (after the root fields' steps): an
	// event's fields find the event's loaders.
	Field(ctx context.Context, next graphql.Resolver) (any, error)
}

// The cost of subscriptions. A query is charged once; a subscription's
// selection runs again for every event, for every subscriber. So:
//
//   - a subscription's selection is bounded before it opens, by its cost
//     (the complexity of the query cost functions, graph's priced),
//     at most Options.MaxSubscriptionComplexity: far below a query's
//     limit, since it is paid per event (subscriptionSteps);
//   - every event resolved for a subscriber is charged that cost against
//     the subscriber's cost bucket, as a query of that selection would be
//     (RateLimiter.ChargeEvent); a viewer whose bucket is empty has their
//     subscription ended with RATE_LIMITED (retry later with after: the
//     last cursor received), rather than events piling up.
//
// Each event's reads are also shared: by all of the instance's recipients
// for what does not depend on the viewer, by one viewer's subscriptions
// for what does (package graph's live rules), and resolved once for all
// the subscribers answered alike (graph/subscription).

// subscriptionSteps is the executor extension of a subscription's cost
// bound (MutateOperationContext, after the complexity limit, which
// computes the cost).
type subscriptionSteps struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
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

// ChargeEvent takes the cost of an event resolved for viewer's
// subscription (its complexity, as a query's) from the viewer's cost
// bucket, and returns the RATE_LIMITED error that ends the subscription
// when the bucket holds too little (nil: charged; on a nil RateLimiter,
// always).
func (l *RateLimiter) ChargeEvent(viewer string, cost int) error {
	if l == nil || cost <= 0 {
		return nil
	}
	if wait := take(l.bucketsFor("viewer:" + viewer)[costLimit], l.now(), cost); wait > 0 {
		return &gqlerror.Error{Message: fmt.Sprintf("rate limit exceeded by the cost of this subscription's events; subscribe again after %d s with after: the last cursor received",
			retrySeconds(wait)), Extensions: map[string]any{"code": codes.RateLimited}}
	}
	return nil
}
