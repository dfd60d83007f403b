package graph

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/graph/syncer"
)

// Resolver is the root resolver: it holds what every resolver shares. The
// reads go through the operation's loaders (For), which hold the clock.
type Resolver struct {
	Store *dynamo.Store
	subs  *subscription.Server // Subscription.projectEvents (graph/subscription)
	live  liveRules            // what the pipeline runs for subscriptions (live.go)
	sync  *syncer.Syncer       // Query.sync (package syncer)
}

// NewResolver returns the resolvers of the server o configures: the
// store's, the subscriptions' on o.Live (its hub) with their limits, their
// events charged to rates (the pipeline's token buckets,
// pipeline.NewRateLimiter; nil: none), and Query.sync's. The wiring
// (app.NewHandler) gives them to the schema (NewExecutableSchema) and
// their live rules to the operation pipeline (Subscriptions).
func NewResolver(o pipeline.Options, rates *pipeline.RateLimiter) *Resolver {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Resolver{Store: o.Store, subs: newSubscriptions(o, rates), live: liveRules{operations: liveOperations(o)}, sync: newSyncer(o)}
}

// Subscriptions returns the live rules of r's subscriptions, which the
// operation pipeline runs around them (pipeline.New).
func (r *Resolver) Subscriptions() pipeline.Subscriptions { return r.live }

// For returns the loaders a field reads through: the operation's
// (loaders.For) or, below a live event's field, the event's for this
// subscriber (live.go's event slot).
func For(ctx context.Context) *loaders.Loaders {
	if s, ok := ctx.Value(eventSlotKey{}).(*eventSlot); ok && s.scope != nil {
		return s.scope.loaders()
	}
	return loaders.For(ctx)
}

// newSyncer makes Query.sync's Syncer: its tokens sealed with the hub's
// cursor key, and a final one continued by a subscription, or without a
// hub (no live updates) with the process's key.
func newSyncer(o pipeline.Options) *syncer.Syncer {
	if o.Live != nil {
		return syncer.New(o.Live.Cursors(), o.Live)
	}
	return syncer.New(nil, nil)
}
