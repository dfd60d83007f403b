package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Counter counts the DynamoDB calls of a client by operation name (GetItem,
// BatchGetItem, Query, …), once per call before the SDK's retries: its
// Option is a client option. The server's own per-request counter
// (client.Calls in each request's context) is the same type; this one sees
// every request of the client.
type Counter struct{ client.Calls }

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{} }

// Snapshot returns a copy of the counts.
func (c *Counter) Snapshot() Calls { return Calls(c.ByOp()) }

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
