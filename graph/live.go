package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/policy"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Live updates: Subscription.projectEvents. The hub (package live) checks
// visibility and hands each event to its subscribers; here each delivery
// becomes a ProjectEvent whose nested fields resolve through loaders shared
// by all of this instance's recipients of the event (one read per event per
// instance, however many subscribers), seen through each subscriber's own
// viewer for what depends on the viewer.

// eventSlotKey marks the context of a ProjectEvent field: its resolver puts
// the event's scope in the slot, and the field's children, which inherit
// the context (gqlgen passes a field middleware's context on to them), find
// their loaders there (For).
type eventSlotKey struct{}

type eventSlot struct{ scope *eventScope }

// eventFields gives every resolved field of a ProjectEvent an empty slot.
func eventFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Object == "ProjectEvent" && fc.IsResolver {
		ctx = context.WithValue(ctx, eventSlotKey{}, &eventSlot{})
	}
	return next(ctx)
}

// enterEvent fills the field's slot with the event's scope.
func enterEvent(ctx context.Context, ev *model.ProjectEvent) {
	if s, ok := ctx.Value(eventSlotKey{}).(*eventSlot); ok {
		s.scope, _ = ev.Scope.(*eventScope)
	}
}

// eventScope is one subscriber's delivery of one event: the event's shared
// loaders (made once per event per instance, for all its recipients, who
// all passed the event's visibility check and whose responses are sent only
// if they pass it again once resolved, liveEvents) seen as this viewer's.
type eventScope struct {
	shared *live.Shared
	mk     func(sh *live.Shared) *eventShared
	viewer string
	// final marks the last event of a viewer who may no longer see the
	// project (policy.FinalEvent): their own MEMBER_REMOVED, or
	// PROJECT_DELETED. It shows the
	// event's scalars only: its project, task and comment are null, and
	// its actor follows the rule of user(id) (visible when the viewer
	// still shares a project with them; otherwise the event resolves to
	// a NOT_FOUND error, actor being non-null).
	final bool
}

// state returns the event's shared part, made at its first resolution on
// this instance.
func (s *eventScope) state() *eventShared {
	return s.shared.Value(func(context.Context) any { return s.mk(s.shared) }).(*eventShared)
}

func (s *eventScope) loaders() *loaders.Loaders { return s.state().view(s.viewer) }

// eventObjects reports whether obj's project, task and comment may be
// shown (not the final event of a viewer who left the project).
func eventObjects(obj *model.ProjectEvent) bool {
	s, _ := obj.Scope.(*eventScope)
	return s == nil || !s.final
}

// isSubscription reports whether ctx's operation is a subscription.
func isSubscription(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}

// liveState is a subscription operation's end: why its stream ended, sent
// to the client as the last response.
type liveState struct {
	mu       sync.Mutex
	err      error
	reported bool
	// sent hands each event the transport took to liveEvents, which runs
	// around its resolution.
	sent chan *model.ProjectEvent
	// stop ends the subscription's goroutine; stopped: liveEvents sends
	// nothing more.
	stop    func()
	stopped bool
}

func newLiveState() *liveState { return &liveState{sent: make(chan *model.ProjectEvent, 1)} }

// end ends the stream with err, sending nothing more.
func (s *liveState) end(err error) {
	s.fail(err)
	s.stopNow()
}

// stopNow ends the subscription's goroutine; nothing more is sent.
func (s *liveState) stopNow() {
	s.mu.Lock()
	s.stopped = true
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (s *liveState) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// setStop records how to end the subscription's goroutine.
func (s *liveState) setStop(stop func()) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.stop = stop
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		stop()
	}
}

// handOff gives the event the transport just took to liveEvents.
func (s *liveState) handOff(pe *model.ProjectEvent) {
	if s == nil {
		return
	}
	select {
	case s.sent <- pe:
	default: // never: one event is resolved at a time
	}
}

type liveStateKey struct{}

func (s *liveState) fail(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// errNotAStream refuses a subscription sent over a transport that cannot
// stream its events.
var errNotAStream = domain.Errorf(domain.EINVALID,
	"a subscription needs a WebSocket (graphql-transport-ws) or server-sent events (POST with Accept: text/event-stream)")

// streams reports whether the operation of ctx came over a transport that
// streams responses (its Delivery: ResponseStream): a WebSocket, or a POST
// that accepts text/event-stream.
func streams(ctx context.Context) bool { return pipeline.DeliveryOf(ctx) == pipeline.ResponseStream }

// CloseTryAgainLater is the WebSocket close code of a connection whose
// subscriber fell behind (RFC 6455's 1013 Try Again Later): the graphql-ws
// client retries it (4400, 4401, 4403 after its attempts, 4406, 4409,
// 4429, 4500 and most 1xxx codes are fatal to it), and a client that
// resubscribes with after: its last cursor misses nothing.
const CloseTryAgainLater = 1013

// reasonFellBehind is the close reason of a subscriber that fell behind
// (at most 123 bytes).
const reasonFellBehind = "subscriber fell behind; resume with your last cursor"

// liveOperations refuses a subscription sent over a transport that does
// not stream (a plain POST: BAD_USER_INPUT, RefusedNeedsStream, at once). It gives a
// subscription operation its liveState and, when its stream ended with an
// error, answers that error (data null) before the end of the stream.
func liveOperations(o pipeline.Options) graphql.OperationMiddleware {
	present := pipeline.ErrorPresenter(o.Log)
	// A stream's end (cut off, shut down, token expired) is expected: one
	// debug line, not the error line of a failed request, which a shutdown
	// would print once per subscriber.
	presentEnd := pipeline.ErrorPresenter(slog.New(slog.DiscardHandler))
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
			return next(ctx)
		}
		if !streams(ctx) {
			pipeline.Refuse(ctx, pipeline.RefusedNeedsStream)
			return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{present(ctx, errNotAStream)}})
		}
		st := newLiveState()
		ctx = context.WithValue(ctx, liveStateKey{}, st)
		h := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			res := h(ctx)
			if res != nil {
				return res
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.err == nil || st.reported || ctx.Err() != nil {
				return nil
			}
			st.reported = true
			gerr := presentEnd(ctx, st.err)
			o.Log.DebugContext(ctx, "subscription ended", "code", gerr.Extensions["code"], "reason", gerr.Message)
			gerr.Path = ast.Path{ast.PathName("projectEvents")}
			return &graphql.Response{Data: json.RawMessage("null"), Errors: gqlerror.List{gerr}}
		}
	}
}

// liveLimits counts subscriptions per viewer on this instance.
type liveLimits struct {
	perSocket, perViewer int
	mu                   sync.Mutex
	byViewer             map[string]int
}

// acquire counts a new subscription of viewer (and of the socket in ctx,
// pipeline.SocketOf), or refuses it past a limit; release undoes it.
func (l *liveLimits) acquire(ctx context.Context, viewer string) (release func(), err error) {
	sock := pipeline.SocketOf(ctx)
	if sock != nil && !sock.Acquire(l.perSocket) {
		return nil, domain.Errorf(domain.EINVALID, "a connection may hold at most %d subscriptions", l.perSocket)
	}
	unSock := func() {
		if sock != nil {
			sock.Release()
		}
	}
	l.mu.Lock()
	if l.byViewer[viewer] >= l.perViewer {
		l.mu.Unlock()
		unSock()
		return nil, domain.Errorf(domain.EINVALID, "a user may hold at most %d subscriptions on one server", l.perViewer)
	}
	l.byViewer[viewer]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			unSock()
			l.mu.Lock()
			if l.byViewer[viewer]--; l.byViewer[viewer] <= 0 {
				delete(l.byViewer, viewer)
			}
			l.mu.Unlock()
		})
	}, nil
}

// errLiveOff answers subscriptions on a handler without a hub.
var errLiveOff = domain.Errorf(domain.EUNAVAILABLE, "live updates are not available on this server")

// projectEvents subscribes the viewer to a project's events
// (Subscription.projectEvents).
func (r *Resolver) projectEvents(ctx context.Context, projectID string, after *string) (<-chan *model.ProjectEvent, error) {
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return nil, err
	}
	if r.live == nil || r.live.hub == nil {
		return nil, errLiveOff
	}
	release, err := r.live.limits.acquire(ctx, viewer)
	if err != nil {
		return nil, err
	}
	cost := 0 // each event is charged the subscription's cost (pipeline.ChargeEvent)
	if stats := extension.GetComplexityStats(ctx); stats != nil {
		cost = stats.Complexity
	}
	tel := telemetry.FromContext(ctx) // metrics: open subscriptions
	tel.SubscriptionOpened()
	sub, err := r.live.hub.Subscribe(ctx, viewer, projectID, after)
	if err != nil {
		tel.SubscriptionClosed()
		release()
		return nil, err
	}
	st, _ := ctx.Value(liveStateKey{}).(*liveState)
	v := auth.TokenOf(ctx)
	out := make(chan *model.ProjectEvent)
	sctx, cancel := context.WithCancel(ctx)
	st.setStop(cancel)
	go func() {
		defer close(out)
		defer release()
		defer sub.Close()
		defer tel.SubscriptionClosed() // before sub.Close: gone from the metrics once gone from the hub
		defer cancel()
		var expired atomic.Bool
		if !v.Exp.IsZero() {
			t := time.AfterFunc(v.Exp.Sub(r.live.now()), func() { expired.Store(true); cancel() })
			defer t.Stop()
		}
		for {
			d, err := sub.Next(sctx)
			if err != nil {
				switch {
				case expired.Load():
					st.fail(pipeline.ErrExpired)
				case errors.Is(err, live.ErrSlow):
					cutOff(ctx, st)
				case err == io.EOF, ctx.Err() != nil, sctx.Err() != nil: // sctx: ended by liveEvents
				default:
					st.fail(err)
				}
				return
			}
			ev := d.Event
			if err := pipeline.ChargeEvent(ctx, cost); err != nil {
				st.fail(err)
				return
			}
			pe := &model.ProjectEvent{Cursor: d.Cursor, Kind: ev.Kind, At: ev.At, ProjectID: ev.ProjectID, SubjectID: ev.SubjectID,
				Event: ev, Scope: &eventScope{shared: d.Shared, mk: r.live.newEventShared, viewer: viewer, final: policy.FinalEvent(viewer, ev)}}
			// The transport may be stuck sending earlier events to a client
			// that does not read: the hub then cuts the subscription off
			// (Ended), and this waits no longer.
			ended := sub.Ended()
		send:
			for {
				select {
				case out <- pe:
					pe.Scope.(*eventScope).state().took()
					st.handOff(pe) // the transport resolves it now; liveEvents checks it
					tel.EventDelivered()
					break send
				case <-sctx.Done():
					if expired.Load() {
						st.fail(pipeline.ErrExpired)
					}
					return
				case <-ended:
					if errors.Is(sub.Err(), live.ErrSlow) {
						cutOff(ctx, st)
						return
					}
					ended = nil // ended normally: what was queued still goes out
				}
			}
		}
	}()
	return out, nil
}

// cutOff ends a subscription whose subscriber fell behind. On a WebSocket
// it closes the connection with 1013 Try Again Later and the reason
// reasonFellBehind, after whatever the connection had sent, which the
// graphql-ws client retries; it then waits for the transport to end the
// operation, so that no "complete" can overtake the close and end the
// client's subscription for good. Over server-sent events the stream ends
// with the SERVICE_UNAVAILABLE error live.ErrSlow.
func cutOff(ctx context.Context, st *liveState) {
	if pipeline.CloseConnection(ctx, CloseTryAgainLater, reasonFellBehind) {
		<-ctx.Done()
		return
	}
	st.fail(live.ErrSlow)
}

// eventActor resolves ProjectEvent.actor through the event's loaders; the
// other fields come with the event (enterEvent makes their children's
// loaders the event's).
func eventActor(ctx context.Context, obj *model.ProjectEvent) (*domain.User, error) {
	enterEvent(ctx, obj)
	// The last event of a viewer who left (their own MEMBER_REMOVED,
	// PROJECT_DELETED) shows who made the change even when the viewer and
	// the actor now share no project: it is what a removed member learns
	// from their own removal (who removed them), the contract's actor is
	// non-null, and the stream ends after delivering the event. The actor's
	// own lists still go through the viewer's visibility rules, and email
	// is the user's alone, so nothing of the project shows.
	return For(ctx).UserByID(ctx, obj.Event.ActorID)
}

// liveResolvers is what the subscription resolvers share.
type liveResolvers struct {
	hub    *live.Hub
	limits *liveLimits
	now    func() time.Time
	store  *dynamo.Store
	// loaderCfg configures each event's shared loaders, their reads
	// bounded by the event's budget (eventShared.ctx), not by any
	// subscriber's context.
	loaderCfg loaders.Config
	// eventTimeout is Options.EventTimeout: an event's read budget, from
	// its first resolution; 0: the hub's event timeout.
	eventTimeout time.Duration
	// recheckWait and recheckIdle are Options.EventRecheckWait and
	// EventRecheckIdle.
	recheckWait, recheckIdle time.Duration
	// operations is the live rules' step around each operation
	// (liveOperations).
	operations graphql.OperationMiddleware
}

func newLiveResolvers(o pipeline.Options) *liveResolvers {
	return &liveResolvers{hub: o.Live, now: o.Now, store: o.Store, loaderCfg: o.Loaders, eventTimeout: o.EventTimeout, recheckWait: cmp.Or(o.EventRecheckWait, DefaultEventRecheckWait), recheckIdle: o.EventRecheckIdle,
		limits: &liveLimits{perSocket: max(cmp.Or(o.MaxSubscriptionsPerSocket, pipeline.DefaultMaxSubscriptionsPerSocket), 1),
			perViewer: max(cmp.Or(o.MaxSubscriptionsPerViewer, pipeline.DefaultMaxSubscriptionsPerViewer), 1), byViewer: map[string]int{}},
		operations: liveOperations(o)}
}

// The live rules, as the operation pipeline runs them
// (pipeline.Subscriptions): around each operation (liveOperations),
// around each event's response (liveEvents), around each field
// (eventFields).

func (r *liveResolvers) Operation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return r.operations(ctx, next)
}

func (r *liveResolvers) Event(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	return r.liveEvents(ctx, next)
}

func (r *liveResolvers) Field(ctx context.Context, next graphql.Resolver) (any, error) {
	return eventFields(ctx, next)
}
