package pipeline

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"
)

// Defaults of the rate limits the server's flags start from (Options
// leaves them off when zero). A dashboard load costs about 12,000, so a
// viewer may load it eight times at once and four times a second for good;
// an IDE or a UI sends far fewer than 20 operations a second.
const (
	DefaultRateOps       = 20
	DefaultRateOpsBurst  = 40
	DefaultRateCost      = 50_000
	DefaultRateCostBurst = 100_000
	// DefaultRateKeys is how many viewers and addresses keep a bucket;
	// the least recently seen beyond it lose theirs (and start afresh).
	DefaultRateKeys = 10_000
)

// RateLimits bound each viewer's operations and query cost by token
// buckets: one pair per viewer, or per client address for requests without
// a valid token. Over a limit the request is refused (RefusedRateLimited:
// over HTTP a 429 with Retry-After) with a RATE_LIMITED error, and runs
// nothing.
type RateLimits struct {
	// RateOps is the operations per second a viewer may send; 0 turns the
	// operation limit off. RateOpsBurst is how many it may send at once; 0
	// means twice RateOps.
	RateOps      float64
	RateOpsBurst int
	// RateCost is the query cost (the complexity the complexity limit
	// computes) per second a viewer may spend; 0 turns the cost limit off.
	// RateCostBurst is how much it may spend at once; 0 means twice
	// RateCost.
	RateCost      float64
	RateCostBurst int
	// RateKeys caps the viewers and addresses that keep buckets; 0 means
	// DefaultRateKeys.
	RateKeys int
}

// RateLimiter holds the token buckets of RateLimits, one pair per viewer
// or address, in an LRU cache so that many addresses cannot grow memory
// without bound: the pipeline's two steps (operations before parsing,
// cost after the complexity limit) and the subscriptions' events
// (ChargeEvent) take from the same buckets. The wiring makes one
// (NewRateLimiter) and gives it to both (app.NewHandler).
type RateLimiter struct {
	ops, cost           rate.Limit
	opsBurst, costBurst int
	now                 func() time.Time

	mu      sync.Mutex // makes get-or-create atomic
	buckets *lru.Cache[string, *rateBuckets]
}

type rateBuckets struct{ ops, cost *rate.Limiter }

// NewRateLimiter returns the token buckets of o's RateLimits, or nil when
// both limits are off.
func NewRateLimiter(o Options) *RateLimiter {
	if o.RateOps <= 0 && o.RateCost <= 0 {
		return nil
	}
	burst := func(b int, r float64) int {
		if b > 0 {
			return b
		}
		return max(1, int(math.Ceil(2*r)))
	}
	l := &RateLimiter{ops: rate.Inf, cost: rate.Inf, now: o.Now}
	if o.RateOps > 0 {
		l.ops, l.opsBurst = rate.Limit(o.RateOps), burst(o.RateOpsBurst, o.RateOps)
	}
	if o.RateCost > 0 {
		l.cost, l.costBurst = rate.Limit(o.RateCost), burst(o.RateCostBurst, o.RateCost)
	}
	if l.now == nil {
		l.now = time.Now
	}
	size := o.RateKeys
	if size <= 0 {
		size = DefaultRateKeys
	}
	l.buckets, _ = lru.New[string, *rateBuckets](size) // size > 0: no error
	return l
}

func (l *RateLimiter) bucketsFor(key string) *rateBuckets {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Get(key); ok {
		return b
	}
	b := &rateBuckets{ops: rate.NewLimiter(l.ops, l.opsBurst), cost: rate.NewLimiter(l.cost, l.costBurst)}
	l.buckets.Add(key, b)
	return b
}

// take takes n tokens from lim at now, or none and returns how long to wait
// until n would be there. n is capped at the burst, so that a single
// operation within the complexity limit can always run eventually.
func take(lim *rate.Limiter, now time.Time, n int) time.Duration {
	if lim.Limit() == rate.Inf || n <= 0 {
		return 0
	}
	r := lim.ReserveN(now, min(n, lim.Burst()))
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = (*RateLimiter)(nil)

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = rateCost{}

// rateCost is the cost side of the rate limits: a step of its own, after
// the complexity limit has computed the operation's cost.
type rateCost struct{ l *RateLimiter }

func (rateCost) ExtensionName() string                   { return "RateCost" }
func (rateCost) Validate(graphql.ExecutableSchema) error { return nil }

func (l *RateLimiter) ExtensionName() string                   { return "RateLimits" }
func (l *RateLimiter) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters takes one operation token of the operation's
// key (its viewer, or its client address) before the document is even
// parsed, on every transport, and refuses the operation when there is
// none: RATE_LIMITED (RefusedRateLimited, over HTTP a 429 with
// Retry-After).
func (l *RateLimiter) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	st := operationState(ctx)
	if d := take(l.bucketsFor(st.rateKey).ops, l.now(), 1); d > 0 {
		return rateLimited(ctx, d)
	}
	return nil
}

// MutateOperationContext takes the operation's cost (its complexity as the
// complexity limit computed it, which must run before; introspection alone
// costs nothing) from the key's cost bucket before the operation runs, and
// refuses it when the bucket holds too little.
func (c rateCost) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	l := c.l
	st := operationState(ctx)
	stats := extension.GetComplexityStats(ctx)
	if st == nil || stats == nil || oc.Operation == nil || introspectionOnly(oc.Doc, oc.Operation.SelectionSet) {
		return nil
	}
	if d := take(l.bucketsFor(st.rateKey).cost, l.now(), stats.Complexity); d > 0 {
		return rateLimited(ctx, d)
	}
	return nil
}

// rateLimited is the refusal of an operation over a limit, retryable after d.
func rateLimited(ctx context.Context, d time.Duration) *gqlerror.Error {
	refuse(ctx, RefusedRateLimited, d, false)
	return rateLimitedErrors(d)[0]
}

func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func rateLimitedErrors(d time.Duration) gqlerror.List {
	return gqlerror.List{{Message: fmt.Sprintf("rate limit exceeded; retry after %d s", retrySeconds(d)),
		Extensions: map[string]any{"code": codes.RateLimited}}}
}
