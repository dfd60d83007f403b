package pipeline

import (
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
)

// Options configure the GraphQL server: the operation pipeline (New), and
// the resolvers and their subscriptions (graph.NewResolver), which take
// their part of them. They come in three parts: what it works with
// (Deps), what it allows (Limits, plain values that the flags set) and
// what only tests and benchmarks change (Hooks); and two modes. The HTTP
// side's own options (CORS, the body limit) are in web.Options, which
// embeds these. The server's wiring (package app) fills them in one
// place and composes the parts (app.NewHandler).
type Options struct {
	Deps
	Limits
	// Production turns introspection off, and the suggestions of names in
	// validation errors ("Did you mean …?").
	Production bool
	// Debug adds extensions.dynamodb to every response: the DynamoDB calls
	// the operation made, by operation name. The store's client must count
	// calls (client.Calls). Not for production: it tells how data is
	// stored.
	Debug bool
	Hooks
}

// Deps are what the server works with.
type Deps struct {
	Store *dynamo.Store
	Auth  *auth.Authenticator
	Log   *slog.Logger
	// Now is the clock of the resolvers and loaders (overdueTasks' asOf
	// defaults to today); defaults to time.Now.
	Now func() time.Time
	// Live is the instance's hub of live events; nil turns subscriptions
	// off (they fail with SERVICE_UNAVAILABLE).
	Live *live.Hub
	// Telemetry traces and counts requests, operations, loader batches and
	// DynamoDB calls (internal/telemetry); nil: none.
	Telemetry *telemetry.Telemetry
	// TrustedDocuments, when set, maps documentId requests to their
	// documents; with Production, only its documents run (trusted.go).
	TrustedDocuments *TrustedDocuments
}

// Limits bound what an operation, a viewer or a socket may cost: plain
// values, each 0 for its default (the flags of the server set them).
type Limits struct {
	// ComplexityLimit bounds a query's cost; 0 means DefaultComplexityLimit.
	ComplexityLimit int
	// MaxDepth bounds the object levels of an operation (connection
	// plumbing not counted); 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxAliases bounds the aliased fields of an operation; 0 means
	// DefaultMaxAliases.
	MaxAliases int
	// MaxTokens bounds the tokens the parser reads; 0 means DefaultMaxTokens.
	MaxTokens int
	// MaxNodes bounds a document's nodes, each fragment counted every time
	// it is spread (doclimits.go); 0 means DefaultMaxNodes.
	MaxNodes int
	// MaxRepeats bounds the fields of one response name merged into one
	// selection set (doclimits.go); 0 means DefaultMaxRepeats.
	MaxRepeats int
	// MaxFragments bounds a document's fragment definitions; 0 means
	// DefaultMaxFragments.
	MaxFragments int
	// Timeout bounds one request's work, DynamoDB calls and their retries
	// included; 0 means DefaultTimeout.
	Timeout    time.Duration
	RateLimits // per-viewer token buckets; the zero value: none
	// MaxSubscriptionsPerSocket bounds one WebSocket's subscriptions; 0
	// means DefaultMaxSubscriptionsPerSocket.
	MaxSubscriptionsPerSocket int
	// MaxSubscriptionsPerViewer bounds one viewer's subscriptions on this
	// instance; 0 means DefaultMaxSubscriptionsPerViewer.
	MaxSubscriptionsPerViewer int
	// MaxSubscriptionComplexity bounds a subscription's cost (the complexity
	// limit's measure), paid again for every event; 0 means
	// DefaultMaxSubscriptionComplexity.
	MaxSubscriptionComplexity int
	// HTTPCacheSettle is how long after a change in a project a GET's
	// answer showing it may get an ETag (graph/etag's Checker.Settle); 0
	// means the timeout plus DefaultHTTPCacheSettle.
	HTTPCacheSettle time.Duration
	// EventTimeout bounds the reads of one event's resolution on this
	// instance, from its first resolution; 0 means the hub's
	// (live.HubConfig.EventTimeout).
	EventTimeout time.Duration
}

// Hooks are for tests and benchmarks: the server leaves them zero.
type Hooks struct {
	// Loaders tunes the per-request loaders: a dispatcher of one's own
	// (its idle hook: bench.Gate), a window instead of dispatch by level,
	// a gate, no batching (loaders.Config).
	Loaders loaders.Config
}

// DefaultComplexityLimit admits the contract's dashboard (10 projects ×
// (members + 20 tasks × (assignee, tags, 5 comments × author))), about
// 12,000 by the schema's cost directives (graph's priced), and an
// offline replica's sync page of 100, about 66,000 (each project priced
// with the most members a project may have, 90), and refuses queries that
// multiply pages of 100 three levels deep.
const DefaultComplexityLimit = 100_000

// Defaults of the other limits (see Limits).
const (
	DefaultMaxDepth     = 8
	DefaultMaxAliases   = 30
	DefaultMaxTokens    = 2_000
	DefaultMaxNodes     = 5_000
	DefaultMaxRepeats   = 20
	DefaultMaxFragments = 100
	DefaultTimeout      = 10 * time.Second
)

// Defaults of the subscriptions' limits (Limits.MaxSubscriptionsPerSocket,
// MaxSubscriptionsPerViewer, MaxSubscriptionComplexity). The usual event
// selections cost 5 to 30; 100 admits a task with its assignee, tags and
// a page of comments, or the project with a page of 20 tasks.
const (
	DefaultMaxSubscriptionsPerSocket = 20
	DefaultMaxSubscriptionsPerViewer = 100
	DefaultMaxSubscriptionComplexity = 100
)
