package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The cost of subscriptions. A query is charged once; a subscription's
// selection runs again for every event, for every subscriber. So:
//
//   - a subscription's selection is bounded before it opens, by its cost
//     (the complexity of the query cost functions, setComplexity), at most
//     Options.MaxSubscriptionComplexity: far below a query's limit, since it
//     is paid per event;
//   - every event resolved for a subscriber is charged that cost against
//     the subscriber's cost bucket (rateLimits), as a query of that
//     selection would be; a viewer whose bucket is empty has their
//     subscription ended with RATE_LIMITED (retry later with after: the
//     last cursor received), rather than events piling up.
//
// Each event's reads are also shared: by all of the instance's recipients
// for what does not depend on the viewer, by one viewer's subscriptions for
// what does (eventShared.view); and resolved once for all the
// subscribers answered alike (graph/subscription).

// DefaultMaxSubscriptionComplexity bounds a subscription's cost (see
// Options.MaxSubscriptionComplexity). The usual event selections cost 5 to
// 30; 100 admits a task with its assignee, tags and a page of comments, or
// the project with a page of 20 tasks.
const DefaultMaxSubscriptionComplexity = 100

// subscriptionLimits is the executor extension of subscriptions' cost
// bound (MutateOperationContext, after the complexity limit, which
// computes the cost).
type subscriptionLimits struct {
	max int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = subscriptionLimits{}

// newSubscriptionLimits returns the extension for o.
func newSubscriptionLimits(o Options) subscriptionLimits {
	l := subscriptionLimits{max: o.MaxSubscriptionComplexity}
	if l.max <= 0 {
		l.max = DefaultMaxSubscriptionComplexity
	}
	return l
}

func (subscriptionLimits) ExtensionName() string { return "SubscriptionLimits" }

func (subscriptionLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a subscription whose cost is above the
// limit, before it opens.
func (l subscriptionLimits) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return nil
	}
	stats := extension.GetComplexityStats(graphql.WithOperationContext(ctx, oc))
	if stats == nil || stats.Complexity <= l.max {
		return nil
	}
	return &gqlerror.Error{Message: fmt.Sprintf("the subscription costs %d, which it would cost again for every event; the limit of a subscription is %d",
		stats.Complexity, l.max), Extensions: map[string]any{"code": CodeComplexity}}
}

// chargeEvent takes an event's cost from the viewer's cost bucket (as a
// query's, AroundOperations) and returns how long to wait when the bucket
// holds too little (0: charged). l nil: no limits.
func (l *rateLimits) chargeEvent(viewer string, cost int) time.Duration {
	if l == nil || cost <= 0 {
		return 0
	}
	return take(l.bucketsFor("viewer:"+viewer).cost, l.now(), cost)
}

// errEventsRateLimited ends a subscription whose viewer spent their cost
// budget on events.
func errEventsRateLimited(wait time.Duration) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf("rate limit exceeded by the cost of this subscription's events; subscribe again after %d s with after: the last cursor received",
		retrySeconds(wait)), Extensions: map[string]any{"code": CodeRateLimited}}
}
