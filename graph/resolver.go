package graph

import (
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/subscription"
)

// Resolver is the root resolver: it holds what every resolver shares. The
// reads go through the request's Loaders (For), which hold the clock.
type Resolver struct {
	Store *dynamo.Store
	subs  *subscription.Server // Subscription.projectEvents (graph/subscription)
	sync  *syncer              // Query.sync (sync.go)
}
