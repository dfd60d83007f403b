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

// A rateLimit is one rate limit, a token bucket per viewer: its flags
// (-rate-<name>, -rate-<name>-burst), its production defaults, its fields
// in RateLimits, and what an operation takes from it, before its document
// is parsed (oc nil) or once the complexity limit has computed its cost.
// A new limit is one row of rateLimits (and its fields in RateLimits): the
// flags, the production defaults, the steps and the 429 follow.
type rateLimit struct {
	name, what  string // the flags' name; what it counts, per second
	prod        float64
	prodBurst   int
	fields      func(*RateLimits) (*float64, *int)
	beforeParse bool
	charge      func(ctx context.Context, oc *graphql.OperationContext) int
}

// rateLimits are the rate limits, in the order their buckets are taken.
var rateLimits = []rateLimit{
	{name: "ops", what: "operations", prod: DefaultRateOps, prodBurst: DefaultRateOpsBurst, beforeParse: true,
		fields: func(r *RateLimits) (*float64, *int) { return &r.RateOps, &r.RateOpsBurst },
		charge: func(context.Context, *graphql.OperationContext) int { return 1 }},
	{name: "cost", what: "query cost (the -max-complexity measure)", prod: DefaultRateCost, prodBurst: DefaultRateCostBurst,
		fields: func(r *RateLimits) (*float64, *int) { return &r.RateCost, &r.RateCostBurst },
		charge: costOf},
}

// costLimit is the cost limit's row, which a subscription's events are
// charged from (ChargeEvent).
const costLimit = 1

// costOf is an operation's cost: its complexity as the complexity limit
// computed it (which runs before); introspection alone costs nothing.
func costOf(ctx context.Context, oc *graphql.OperationContext) int {
	stats := extension.GetComplexityStats(ctx)
	if stats == nil || oc.Operation == nil || introspectionOnly(oc.Doc, oc.Operation.SelectionSet) {
		return 0
	}
	return stats.Complexity
}

// RateFlag is the pair of flags of one rate limit, over its fields of a
// RateLimits: the server defines one pair per limit (app's config).
type RateFlag struct {
	Name, Usage, BurstUsage string
	Rate                    *float64
	Burst                   *int
	Default                 float64 // with -production
	DefaultBurst            int
}

// Flags returns the flags of every rate limit over r's fields.
func (r *RateLimits) Flags() []RateFlag {
	out := make([]RateFlag, len(rateLimits))
	for i, l := range rateLimits {
		rt, b := l.fields(r)
		out[i] = RateFlag{Name: "rate-" + l.name, Rate: rt, Burst: b, Default: l.prod, DefaultBurst: l.prodBurst,
			Usage:      fmt.Sprintf("%s per second per viewer (per client address without a valid token); 0: no limit (default %v with -production, no limit otherwise)", l.what, l.prod),
			BurstUsage: fmt.Sprintf("%s a viewer may spend at once (default %d with -production, twice -rate-%s otherwise)", l.what, l.prodBurst, l.name)}
	}
	return out
}

// RateLimiter holds the token buckets of RateLimits, one per limit and
// viewer or address, in an LRU cache so that many addresses cannot grow
// memory without bound: the pipeline's two steps (the limits taken before
// parsing, then those taken after the complexity limit) and the
// subscriptions' events (ChargeEvent) take from the same buckets. The
// wiring makes one (NewRateLimiter) and gives it to both (app.NewHandler).
type RateLimiter struct {
	limits []rate.Limit // rateLimits' rates; rate.Inf: off
	bursts []int
	now    func() time.Time

	mu      sync.Mutex // makes get-or-create atomic
	buckets *lru.Cache[string, rateBuckets]
}

// rateBuckets are one key's buckets, one per limit.
type rateBuckets []*rate.Limiter

// NewRateLimiter returns the token buckets of o's RateLimits, or nil when
// every limit is off.
func NewRateLimiter(o Options) *RateLimiter {
	l := &RateLimiter{now: o.Now}
	on := false
	for _, rl := range rateLimits {
		r, b := rl.fields(&o.RateLimits)
		if *r <= 0 {
			l.limits, l.bursts = append(l.limits, rate.Inf), append(l.bursts, 0)
			continue
		}
		on = true
		burst := *b
		if burst <= 0 {
			burst = max(1, int(math.Ceil(2**r)))
		}
		l.limits, l.bursts = append(l.limits, rate.Limit(*r)), append(l.bursts, burst)
	}
	if !on {
		return nil
	}
	if l.now == nil {
		l.now = time.Now
	}
	size := o.RateKeys
	if size <= 0 {
		size = DefaultRateKeys
	}
	l.buckets, _ = lru.New[string, rateBuckets](size) // size > 0: no error
	return l
}

func (l *RateLimiter) bucketsFor(key string) rateBuckets {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Get(key); ok {
		return b
	}
	b := make(rateBuckets, len(l.limits))
	for i := range b {
		b[i] = rate.NewLimiter(l.limits[i], l.bursts[i])
	}
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

// takeStep takes what the operation owes each limit of one step (before
// parsing or not), all or none: a refusal by one limit gives back what the
// others of the step took. It returns the longest wait of a refusal.
func (l *RateLimiter) takeStep(ctx context.Context, key string, oc *graphql.OperationContext, beforeParse bool) time.Duration {
	b, now := l.bucketsFor(key), l.now()
	var taken []*rate.Reservation
	var wait time.Duration
	for i, rl := range rateLimits {
		if rl.beforeParse != beforeParse || b[i].Limit() == rate.Inf {
			continue
		}
		n := rl.charge(ctx, oc)
		if n <= 0 {
			continue
		}
		r := b[i].ReserveN(now, min(n, b[i].Burst()))
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			wait = max(wait, d)
			continue
		}
		taken = append(taken, r)
	}
	if wait > 0 {
		for _, r := range taken {
			r.CancelAt(now)
		}
	}
	return wait
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

// MutateOperationParameters takes what the operation owes the limits
// taken before parsing (one operation token) from its key's buckets (its
// viewer's, or its client address's) before the document is even parsed,
// on every transport, and refuses the operation when a bucket holds too
// little: RATE_LIMITED (RefusedRateLimited, over HTTP a 429 with
// Retry-After).
func (l *RateLimiter) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	st := operationState(ctx)
	if d := l.takeStep(ctx, st.rateKey, nil, true); d > 0 {
		return rateLimited(ctx, d)
	}
	return nil
}

// MutateOperationContext takes what the operation owes the limits taken
// after parsing (its cost: its complexity as the complexity limit computed
// it, which must run before) before the operation runs, and refuses it
// when a bucket holds too little.
func (c rateCost) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	st := operationState(ctx)
	if st == nil || oc.Operation == nil {
		return nil
	}
	if d := c.l.takeStep(ctx, st.rateKey, oc, false); d > 0 {
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
