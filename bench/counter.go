package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts the DynamoDB calls of a client by operation name (GetItem,
// BatchGetItem, Query, …), once per call before the SDK's retries. The
// server's own per-request counter (dynamo.Calls) lives in each request's
// context; this one sees every request of the client.
type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{n: map[string]int{}} }

// Option is a dynamodb client option that counts the client's calls here.
func (c *Counter) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("benchCountCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.add(awsmiddleware.GetOperationName(ctx))
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	c.n[op]++
	c.mu.Unlock()
}

// Snapshot returns a copy of the counts.
func (c *Counter) Snapshot() Calls {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// Calls are DynamoDB call counts by operation name.
type Calls map[string]int

// Sub returns c minus earlier, leaving out zeros.
func (c Calls) Sub(earlier Calls) Calls {
	out := Calls{}
	for op, n := range c {
		if d := n - earlier[op]; d != 0 {
			out[op] = d
		}
	}
	return out
}

// Total returns the number of calls.
func (c Calls) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Equal reports whether c and o hold the same non-zero counts.
func (c Calls) Equal(o Calls) bool {
	for op, n := range c {
		if o[op] != n {
			return false
		}
	}
	for op, n := range o {
		if c[op] != n {
			return false
		}
	}
	return true
}

// String formats the counts as "BatchGetItem:3 Query:21", sorted by name.
func (c Calls) String() string {
	ops := slices.Sorted(maps.Keys(c))
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		if c[op] != 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", op, c[op]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
