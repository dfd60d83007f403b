// Package subscription runs the GraphQL subscriptions
// (Subscription.projectEvents): it opens them on a transport's Stream,
// registers them with the hub (package live), and delivers each event the
// hub hands it (deliver.go: the whole path of an event). Nothing of a
// subscription waits in a goroutine of its own: the hub's feed calls in,
// the event is resolved and encoded once for every subscriber that is
// answered alike (group.go), and the same bytes are written to each
// subscriber's stream by the delivering goroutine.
//
// graph's resolver of projectEvents is one line (Server.ProjectEvents);
// what an event's fields read (the loaders each event shares among its
// recipients) stays graph's, made through Config.Scope.
package subscription

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
)

// Config configures a Server.
type Config struct {
	// Hub registers the subscriptions and hands their events in; nil: no
	// live updates (subscriptions are refused).
	Hub *live.Hub
	// Store re-checks the recipients' memberships once an event is
	// resolved.
	Store *dynamo.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Present turns an error into what the client sees; Recover a panic
	// into an error (graph's, as for every operation).
	Present graphql.ErrorPresenterFunc
	Recover graphql.RecoverFunc
	// PresentEnd presents the error that ends a stream (expected: a
	// shutdown ends every one), without the error log line of a failed
	// request; Present when nil.
	PresentEnd graphql.ErrorPresenterFunc
	// Scope makes what resolving an event for viewer reads through (the
	// ProjectEvent's Scope: the event's shared loaders, seen as viewer's);
	// final: the event is the last the viewer sees of a project they
	// left (policy.FinalEvent).
	Scope func(sh *live.Shared, viewer string, final bool) Scope
	// Charge takes an event's cost from viewer's budget; an error ends the
	// subscription with it (RATE_LIMITED). Nil: no rate limits.
	Charge func(viewer string, cost int) error
	// MaxPerSocket and MaxPerViewer bound the subscriptions of one
	// connection and of one viewer on this instance (at least 1).
	MaxPerSocket, MaxPerViewer int
}

// Scope is what an event's resolution for one viewer reads through.
type Scope interface {
	// Enter counts the resolution in the dispatch of the event's reads,
	// which all its resolutions share (a level is read when every
	// resolution entered waits on it), and returns the context to resolve
	// it with; leave is called once it is resolved.
	Enter(ctx context.Context) (_ context.Context, leave func())
	// Late reports whether the event's read budget ran out (its reads
	// failed for that): the event is then not sent.
	Late() bool
}

// Server runs the subscriptions of one handler.
type Server struct {
	cfg    Config
	schema graphql.ExecutableSchema
	limits *limits

	mu     sync.Mutex
	groups map[string]*group // by groupKey
}

// New returns a Server; SetSchema must follow before the first event.
func New(c Config) *Server {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.PresentEnd == nil {
		c.PresentEnd = c.Present
	}
	s := &Server{cfg: c, groups: map[string]*group{},
		limits: &limits{perSocket: max(c.MaxPerSocket, 1), perViewer: max(c.MaxPerViewer, 1), byViewer: map[string]int{}}}
	if c.Hub != nil {
		c.Hub.SetReceiver(s)
	}
	return s
}

// SetSchema sets the executable schema events are resolved with (it holds
// the resolvers, which hold the Server).
func (s *Server) SetSchema(es graphql.ExecutableSchema) { s.schema = es }

// eventKey holds the event a group's resolution runs for (resolve.go).
type eventKey struct{}

// errLiveOff answers subscriptions on a handler without a hub.
var errLiveOff = domain.Errorf(domain.EUNAVAILABLE, "live updates are not available on this server")

// ErrNotAStream refuses a subscription sent over a transport that cannot
// stream its events.
var ErrNotAStream = domain.Errorf(domain.EINVALID,
	"a subscription needs a WebSocket (graphql-transport-ws) or server-sent events (POST with Accept: text/event-stream)")

// ErrExpired ends subscriptions when the token expires, and refuses a
// socket's operations once it has.
var ErrExpired = &auth.Error{Err: errors.New("the token has expired; reconnect with a new token and resume with after: the last cursor received")}

// ProjectEvents is Subscription.projectEvents: it subscribes the viewer
// to the project's events on ctx's Stream and returns a closed channel (the
// events go to the stream, not through gqlgen's pull loop). While an event
// is resolved for a group (resolve.go), it returns that one event.
func (s *Server) ProjectEvents(ctx context.Context, projectID string, after *string) (<-chan *model.ProjectEvent, error) {
	if pe, ok := ctx.Value(eventKey{}).(*model.ProjectEvent); ok {
		ch := make(chan *model.ProjectEvent, 1)
		ch <- pe
		close(ch)
		return ch, nil
	}
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return nil, err
	}
	if s.cfg.Hub == nil {
		return nil, errLiveOff
	}
	st := streamOf(ctx)
	if st == nil {
		return nil, ErrNotAStream
	}
	release, err := s.limits.acquire(ctx, viewer)
	if err != nil {
		return nil, err
	}
	sub := &subscriber{srv: s, viewer: viewer, stream: st, release: release, tel: telemetry.FromContext(ctx)}
	if stats := extension.GetComplexityStats(ctx); stats != nil {
		sub.cost = stats.Complexity // each event is charged the subscription's cost
	}
	sub.group = s.join(graphql.GetOperationContext(ctx))
	sub.tel.SubscriptionOpened()
	ls, err := s.cfg.Hub.Subscribe(context.WithoutCancel(ctx), viewer, projectID, after, sub)
	if err != nil {
		sub.closed(false)
		return nil, err
	}
	sub.mu.Lock()
	sub.ls = ls
	stopped := sub.stopped
	if exp := auth.TokenOf(ctx).Exp; !exp.IsZero() && !stopped {
		sub.expiry = time.AfterFunc(exp.Sub(s.cfg.Now()), func() { ls.End(ErrExpired) })
	}
	sub.mu.Unlock()
	if stopped { // the transport stopped it meanwhile
		ls.Close()
	}
	st.Opened(sub.stop)
	ch := make(chan *model.ProjectEvent)
	close(ch)
	return ch, nil
}

// subscriber is one subscription as this package holds it: the hub's
// registration's owner (live.Subscriber). It holds no goroutine.
type subscriber struct {
	srv     *Server
	viewer  string
	stream  Stream
	group   *group
	cost    int
	release func()
	tel     *telemetry.Telemetry

	mu      sync.Mutex
	ls      *live.Subscription
	expiry  *time.Timer
	stopped bool // by the transport (the client completed it, or left)
	done    bool
}

// stop ends the subscription from the transport's side: nothing more is
// sent on its stream.
func (sub *subscriber) stop() {
	sub.mu.Lock()
	sub.stopped = true
	ls := sub.ls
	sub.mu.Unlock()
	if ls != nil {
		ls.Close()
	}
}

// Room waits until the stream can take one more event (a replay's pace).
func (sub *subscriber) Room(ctx context.Context) bool { return sub.stream.Room(ctx) }

// Ended is the end of the subscription (live.Subscriber): it is counted
// out and its stream ends, with the error that ended it as the last
// response, or, for a subscriber that fell behind (or whose event came too
// late) on a WebSocket, with the close 1013 that the graphql-ws client
// retries.
func (sub *subscriber) Ended(err error) {
	if !sub.closed(true) {
		return
	}
	sub.mu.Lock()
	stopped := sub.stopped
	sub.mu.Unlock()
	st := sub.stream
	switch {
	case stopped:
		st.End(nil) // the transport knows: it sends nothing more
	case err == io.EOF:
		st.End(nil)
	case errors.Is(err, live.ErrSlow):
		if !st.CutOff(CloseTryAgainLater, reasonFellBehind) {
			st.End(sub.srv.endResponse(live.ErrSlow))
		}
	case errors.Is(err, errLate):
		if !st.CutOff(CloseTryAgainLater, reasonLate) {
			st.End(sub.srv.endResponse(errLate))
		}
	default:
		st.End(sub.srv.endResponse(err))
	}
}

// closed counts the subscription out once (its limits, its metric, its
// group, its expiry timer); false when it was already.
func (sub *subscriber) closed(opened bool) bool {
	sub.mu.Lock()
	if sub.done {
		sub.mu.Unlock()
		return false
	}
	sub.done = true
	if sub.expiry != nil {
		sub.expiry.Stop()
	}
	sub.mu.Unlock()
	sub.tel.SubscriptionClosed()
	sub.release()
	sub.srv.leave(sub.group)
	return opened
}
