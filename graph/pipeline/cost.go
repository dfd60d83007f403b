package pipeline

import (
	"context"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/time/rate"
)

// What an answer cost (docs/limits.md): every answer to a query or a
// mutation, on every transport (under @defer, its last part), whose
// operation got as far as its complexity, carries extensions.cost:
//
//   - requestedQueryCost: the estimate the complexity limit and the cost
//     rate limit charged before it ran, by the schema's cost directives
//     (graph/cost);
//   - actualQueryCost: the same measure of what it did: the weight of each
//     field that ran (countFields), lists priced by the elements they held;
//     introspection, which reads no data, is not counted;
//   - readUnits, writeUnits: the DynamoDB capacity its calls consumed, the
//     one count of its log line and metrics (client.Calls);
//   - throttleStatus: the viewer's cost budget where the cost rate limit is
//     on (RateLimiter.budget), absent otherwise.
//
// A subscription's events carry none: each is charged to the same budget
// (ChargeEvent).

// Cost is extensions.cost, in the contract's shape.
type Cost struct {
	RequestedQueryCost int             `json:"requestedQueryCost"`
	ActualQueryCost    int             `json:"actualQueryCost"`
	ReadUnits          float64         `json:"readUnits"`
	WriteUnits         float64         `json:"writeUnits"`
	ThrottleStatus     *ThrottleStatus `json:"throttleStatus,omitempty"`
}

// ThrottleStatus is a viewer's cost budget: the bucket's size, what is in
// it now, and what it regains per second.
type ThrottleStatus struct {
	MaximumAvailable   int     `json:"maximumAvailable"`
	CurrentlyAvailable int     `json:"currentlyAvailable"`
	RestoreRate        float64 `json:"restoreRate"`
}

// CostExtension is the name of the response extension.
const CostExtension = "cost"

// countFields is the field middleware that counts the actual cost: the
// weight of every field of the schema's own types that runs in a query or
// a mutation (a subscription's fields, once per event, are not).
func countFields(w *cost.Weights) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		oc := graphql.GetOperationContext(ctx)
		if st, _ := oc.Stats.GetExtension(opStateName).(*opState); st != nil && oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
			if fc := graphql.GetFieldContext(ctx); fc != nil && !strings.HasPrefix(fc.Object, "__") && !strings.HasPrefix(fc.Field.Name, "__") {
				st.actual.Add(w.Weight(fc.Object, fc.Field.Name))
			}
		}
		return next(ctx)
	}
}

// reportCost is the response middleware that adds extensions.cost to the
// last response of a query or a mutation whose complexity was computed,
// refusals after it included (a rate limit's: its budget tells when to
// come back).
func reportCost(rates *RateLimiter) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		res := next(ctx)
		if res == nil || (res.HasNext != nil && *res.HasNext) || !graphql.HasOperationContext(ctx) || isSubscription(ctx) {
			return res
		}
		st, stats := operationState(ctx), extension.GetComplexityStats(ctx)
		if st == nil || stats == nil {
			return res
		}
		c := Cost{RequestedQueryCost: stats.Complexity, ActualQueryCost: st.actual.Total()}
		c.ReadUnits, c.WriteUnits = st.calls.Capacity()
		if rates != nil {
			c.ThrottleStatus = rates.budget(st.rateKey)
		}
		if res.Extensions == nil {
			res.Extensions = map[string]any{}
		}
		res.Extensions[CostExtension] = c
		return res
	}
}

// budget is key's cost budget now, or nil when the cost limit is off.
func (l *RateLimiter) budget(key string) *ThrottleStatus {
	r, burst := l.limits[costLimit], l.bursts[costLimit]
	if r == rate.Inf || burst == 0 {
		return nil
	}
	tokens := l.bucketsFor(key)[costLimit].TokensAt(l.now())
	return &ThrottleStatus{MaximumAvailable: burst, CurrentlyAvailable: max(0, int(math.Floor(tokens))), RestoreRate: float64(r)}
}
