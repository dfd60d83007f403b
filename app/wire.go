// The wiring of the server's parts, in one place: the store on a DynamoDB
// client, the GraphQL handler in front of it, the live-updates broker and
// hub. The App opens a server with them, and the test harness
// (internal/testenv) and the benchmarks (bench/) make their handlers with
// them, so that what they measure and test is what runs in production. The
// client's options are client.Options; callers add what they need after
// them (call counters, a gate, fault injection), and one that needs another
// retry policy appends its own client.RetryPolicy, which replaces the
// production one, and says why.

package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// NewStore returns the store on the named table through db, logging to log
// (nil: slog.Default()) and reading the clock now (nil: time.Now): the clock
// of the whole server, as NewHandler passes it on to the handler.
func NewStore(db dynamo.API, table string, log *slog.Logger, now func() time.Time) *dynamo.Store {
	s := dynamo.New(db, table)
	if log != nil {
		s.Log = log
	}
	if now != nil {
		s.Now = now
	}
	return s
}

// NewHandler returns the GraphQL handler (/query) on store, its tokens
// checked by authn, its options o, whose Store and Auth it sets and whose
// clock and log default to the store's (o.Now, o.Log): the resolvers
// (graph.NewResolver) in the generated executor (graph.NewExecutableSchema),
// wrapped in the operation pipeline with the subscriptions' live rules
// (pipeline.New), both charging the same rate limits' buckets
// (pipeline.NewRateLimiter), behind the HTTP side's transports
// (web.NewHandler). The
// App's handler is made here, and so are the tests' and the benchmarks'.
func NewHandler(store *dynamo.Store, authn *auth.Authenticator, o web.Options) http.Handler {
	o.Store, o.Auth = store, authn
	if o.Now == nil {
		o.Now = store.Now
	}
	if o.Log == nil {
		o.Log = store.Log
	}
	rates := pipeline.NewRateLimiter(o.Options)  // queries' and subscriptions' events' buckets alike
	o.Loaders = pipeline.LoaderConfig(o.Options) // one dispatch by level for queries' and events' loaders
	r := graph.NewResolver(o.Options, rates)
	return web.NewHandler(pipeline.New(graph.NewExecutableSchema(r), o.Options, rates, r.Subscriptions()), o)
}

// OpenLive opens the live-updates broker c names (NATS_URL, or the
// embedded server), makes it the store's event sink (store.Events: every
// committed change is published to it through the outbox) and starts this
// instance's hub on store, whose visibility checks it uses. The hub runs
// until ctx ends; close the broker after the server stops.
func OpenLive(ctx context.Context, store *dynamo.Store, c live.Config, h live.HubConfig) (*live.Broker, *live.Hub, error) {
	if c.Log == nil {
		c.Log = store.Log
	}
	b, err := live.Open(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	h.Store = store
	hub, err := b.StartHub(ctx, h)
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	store.Events = b
	b.OnReady(store.KickOutbox) // after an outage, the events left in the outbox go out at once
	return b, hub, nil
}
