package dynamo

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Calls counts the DynamoDB calls made on behalf of one context (one
// GraphQL operation), by operation name. Attach it with WithCalls; the
// client must have been made with the CountCalls option.
type Calls struct {
	mu       sync.Mutex
	ops      map[string]int
	rcu, wcu float64 // consumed capacity (capacity.go)
}

type callsKey struct{}

// WithCalls returns a context whose DynamoDB calls are counted in c.
func WithCalls(ctx context.Context, c *Calls) context.Context {
	return context.WithValue(ctx, callsKey{}, c)
}

// CallsFrom returns the counter of ctx, or nil.
func CallsFrom(ctx context.Context) *Calls {
	c, _ := ctx.Value(callsKey{}).(*Calls)
	return c
}

func (c *Calls) add(op string) {
	c.mu.Lock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[op]++
	c.mu.Unlock()
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

// CountCalls is a client option: every call made with a context carrying
// Calls (WithCalls) is counted there, by operation, before the SDK's retries
// (a retried call counts once).
func CountCalls(o *dynamodb.Options) { countInto(o, CallsFrom) }

// Option is a client option that counts every call of the client in c,
// whatever its context (for tests and benchmarks).
func (c *Calls) Option(o *dynamodb.Options) {
	countInto(o, func(context.Context) *Calls { return c })
}

func countInto(o *dynamodb.Options, calls func(context.Context) *Calls) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphCountCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if c := calls(ctx); c != nil {
					c.add(awsmiddleware.GetOperationName(ctx))
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// MaxConnsPerHost is how many connections to DynamoDB the client keeps
// open and idle (TuneHTTP). One GraphQL level can issue a hundred Queries at
// once, and many requests run together; the SDK's default keeps 10 idle, so
// bursts would open and close connections all the time.
const MaxConnsPerHost = 256

// TuneHTTP is a client option: an HTTP client that keeps MaxConnsPerHost
// idle connections to the endpoint and opens at most twice as many; calls
// beyond that wait for a connection rather than storm the endpoint.
func TuneHTTP(o *dynamodb.Options) {
	o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = MaxConnsPerHost
		t.MaxIdleConnsPerHost = MaxConnsPerHost
		t.MaxConnsPerHost = 2 * MaxConnsPerHost
	})
}

type deadlineKey struct{}

// WithDeadline returns a context whose DynamoDB calls (retries included) must
// end by t, without cancelling anything else done with the context. The
// client must have been made with the Deadlines option.
func WithDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, t)
}

// Deadlines is a client option: calls made with a context from WithDeadline
// stop at its deadline (and fail as EUNAVAILABLE).
func Deadlines(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphDeadline",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if t, ok := ctx.Value(deadlineKey{}).(time.Time); ok {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, t)
					defer cancel()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// RetryPolicy is a client option: the SDK's standard retryer (exponential
// backoff with jitter; throttling, 5xx and network errors retried) with the
// given attempts and largest backoff, without the client-side retry quota
// that would fail calls early under a burst of throttling. A request's
// deadline (Deadlines) still bounds the whole.
func RetryPolicy(attempts int, maxBackoff time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = attempts
			so.MaxBackoff = maxBackoff
			so.RateLimiter = ratelimit.None
		})
	}
}
