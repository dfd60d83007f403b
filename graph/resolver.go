package graph

import (
	"time"

	"github.com/taskgraph/taskgraph/dynamo"
)

// Resolver is the root resolver: it holds what every resolver shares.
type Resolver struct {
	Store *dynamo.Store
	// Now is the clock (overdue depends on today).
	Now func() time.Time
}
