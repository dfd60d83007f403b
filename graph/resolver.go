package graph

import "github.com/taskgraph/taskgraph/dynamo"

// Resolver is the root resolver: it holds what every resolver shares. The
// reads go through the request's Loaders (For), which hold the clock.
type Resolver struct {
	Store *dynamo.Store
	live  *liveResolvers // subscriptions (live.go)
	sync  *syncer        // Query.sync (sync.go)
}
