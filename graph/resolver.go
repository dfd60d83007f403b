package graph

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/graph/syncer"
	"github.com/vektah/gqlparser/v2/ast"
)

// Resolver is the root resolver: it holds what every resolver shares. The
// reads go through the operation's loaders (For), which hold the clock.
type Resolver struct {
	Store *dynamo.Store
	subs  *subscription.Server // Subscription.projectEvents (graph/subscription)
	sync  *syncer.Syncer       // Query.sync (package syncer)
}

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
func newSyncer(o Options) *syncer.Syncer {
	if o.Live != nil {
		return syncer.New(o.Live.Cursors(), o.Live)
	}
	return syncer.New(nil, nil)
}

// loaderDeps are what the loaders of an operation or an event work with:
// the store, the clock, and the executor's view of the selections (a
// query with @defer: its plan, deferrun.go).
func loaderDeps(store *dynamo.Store, now func() time.Time) loaders.Deps {
	return loaders.Deps{Store: store, Now: now, Lookahead: lookaheadFields,
		Defers: func(oc *graphql.OperationContext, set ast.SelectionSet) bool {
			return defers(oc, set, map[string]bool{})
		}}
}
