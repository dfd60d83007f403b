package client

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Calls counts the DynamoDB calls made on behalf of one context (one
// GraphQL operation), by operation name, and adds up the capacity they
// consumed: an Observer of the calls' records (attach it with WithObserver;
// the client must have the Record option). A retried call counts once.
type Calls struct {
	mu       sync.Mutex
	ops      map[string]int
	rcu, wcu float64
}

// ObserveCall counts c (Observer).
func (c *Calls) ObserveCall(_ context.Context, call *Call) {
	c.mu.Lock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[call.Operation]++
	c.rcu += call.ReadUnits
	c.wcu += call.WriteUnits
	c.mu.Unlock()
}

// CallsFrom returns the first Calls among ctx's observers, or nil.
func CallsFrom(ctx context.Context) *Calls {
	for _, o := range observers(ctx) {
		if c, ok := o.(*Calls); ok {
			return c
		}
	}
	return nil
}

// ByOp returns a copy of the counts by operation name.
func (c *Calls) ByOp() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.ops)
}

// Get returns the count of one operation, e.g. "BatchGetItem".
func (c *Calls) Get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// Capacity returns the read and write capacity units the calls consumed, as
// DynamoDB reported them (the embedded store reports them by DynamoDB's
// rules; zero where a store reports none).
func (c *Calls) Capacity() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rcu, c.wcu
}

// Reset forgets the counts and the consumed capacity.
func (c *Calls) Reset() {
	c.mu.Lock()
	c.ops, c.rcu, c.wcu = nil, 0, 0
	c.mu.Unlock()
}

// String formats the counts as "BatchGetItem:3 Query:21", by name.
func (c *Calls) String() string {
	byOp := c.ByOp()
	parts := make([]string, 0, len(byOp))
	for _, op := range slices.Sorted(maps.Keys(byOp)) {
		parts = append(parts, fmt.Sprintf("%s:%d", op, byOp[op]))
	}
	return strings.Join(parts, " ")
}

// Total returns the number of calls.
func (c *Calls) Total() int {
	n := 0
	for _, v := range c.ByOp() {
		n += v
	}
	return n
}

// Option is a client option that makes c observe every call of the client,
// whatever its context (for tests and benchmarks). It brings the Record
// option if the client has no other.
func (c *Calls) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, addRecord, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphObserveAll",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(WithObserver(ctx, c), in)
			}), middleware.Before)
	})
}
