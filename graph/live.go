package graph

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/live"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Live updates: Subscription.projectEvents runs in package subscription
// (graph/subscription: opening, the path of an event, one resolution per
// group of subscribers answered alike). What an event's fields read is
// here: loaders made once per event per instance, shared by all its
// recipients (who all passed the event's visibility check, and whose
// answers are sent only if they pass it again once resolved), seen
// through each recipient's viewer for what depends on the viewer, and
// dispatched by level as a query's are, one count for all the event's
// resolutions (eventScope.Enter).

// CloseTryAgainLater is the WebSocket close code of a connection whose
// subscriber fell behind (subscription.CloseTryAgainLater).
const CloseTryAgainLater = subscription.CloseTryAgainLater

// newSubscriptions returns the handler's subscription server: its events
// charged to rates, the pipeline's token buckets (nil: no rate limits).
func newSubscriptions(o pipeline.Options, rates *pipeline.RateLimiter) *subscription.Server {
	var charge func(string, int) error
	if rates != nil {
		charge = rates.ChargeEvent
	}
	shared := eventLoaders{store: o.Store, cfg: pipeline.LoaderConfig(o), now: o.Now, timeout: o.EventTimeout, hub: o.Live}
	return subscription.New(subscription.Config{Hub: o.Live, Store: o.Store, Log: o.Log, Now: o.Now,
		Present: pipeline.ErrorPresenter(o.Log), Recover: pipeline.Recover(o.Log),
		// A stream's end (cut off, shut down, token expired) is expected:
		// one debug line, not the error line of a failed request, which a
		// shutdown would print once per subscriber.
		PresentEnd: pipeline.ErrorPresenter(slog.New(slog.DiscardHandler)),
		Scope: func(sh *live.Shared, viewer string, final bool) subscription.Scope {
			return &eventScope{shared: sh, mk: shared.make, viewer: viewer, final: final}
		},
		Charge:       charge,
		MaxPerSocket: cmp.Or(o.MaxSubscriptionsPerSocket, pipeline.DefaultMaxSubscriptionsPerSocket),
		MaxPerViewer: cmp.Or(o.MaxSubscriptionsPerViewer, pipeline.DefaultMaxSubscriptionsPerViewer)})
}

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

// eventScope is one viewer's resolution of one event: the event's shared
// loaders (made once per event per instance, for all its recipients)
// seen as this viewer's.
type eventScope struct {
	shared *live.Shared
	mk     func(sh *live.Shared) *eventShared
	viewer string
	// final marks the last event of a viewer who may no longer see the
	// project (policy.FinalEvent): their own MEMBER_REMOVED, or
	// PROJECT_DELETED. It shows the event's scalars and its actor only:
	// its project, task and comment are null.
	final bool
}

// state returns the event's shared part, made at its first resolution on
// this instance.
func (s *eventScope) state() *eventShared {
	return s.shared.Value(func(context.Context) any { return s.mk(s.shared) }).(*eventShared)
}

func (s *eventScope) loaders() *loaders.Loaders { return s.state().view(s.viewer) }

// Enter counts one resolution of the event in the dispatch of its loaders
// (subscription.Scope), which all its resolutions share: the event's
// loaders are one operation of the dispatch by level (graph/dispatch), each
// resolution a part of it from now until leave, so that a level of the
// event's reads goes when every resolution entered waits on it (one batch
// per loader for all of them, however busy the machine). The context
// carries the viewer's view of the loaders.
func (s *eventScope) Enter(ctx context.Context) (_ context.Context, leave func()) {
	ctx = loaders.With(ctx, s.loaders())
	d := loaders.DispatchOf(ctx)
	if d == nil || !graphql.HasOperationContext(ctx) { // by window (a benchmark's comparison)
		return ctx, func() {}
	}
	return d.Part(ctx, "Subscription", graphql.GetOperationContext(ctx).Operation.SelectionSet, nil)
}

// Late reports whether the event's read budget is spent
// (subscription.Scope): its answer is then not sent.
func (s *eventScope) Late() bool { return s.state().ctx.Err() != nil }

// eventObjects reports whether obj's project, task and comment may be
// shown (not the final event of a viewer who left the project).
func eventObjects(obj *model.ProjectEvent) bool {
	s, _ := obj.Scope.(*eventScope)
	return s == nil || !s.final
}

// eventShared is what this instance's resolutions of one event share: the
// event's loaders (objects and lists that do not depend on the viewer),
// one view of them per viewer (the lists filtered by the viewer's
// memberships), and the read budget.
type eventShared struct {
	// ctx bounds every read made for the event: the event timeout,
	// counted from the first resolution on this instance.
	ctx     context.Context
	loaders *loaders.Loaders

	mu    sync.Mutex
	views map[string]*loaders.Loaders
}

// view returns the event's loaders as viewer sees them, one per viewer.
func (e *eventShared) view(viewer string) *loaders.Loaders {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.views[viewer]
	if v == nil {
		v = e.loaders.ForViewer(viewer)
		e.views[viewer] = v
	}
	return v
}

// eventLoaders makes each event's shared part.
type eventLoaders struct {
	store   *dynamo.Store
	cfg     loaders.Config
	now     func() time.Time
	timeout time.Duration // Options.EventTimeout; 0: the hub's
	hub     *live.Hub
}

// make returns an event's shared part at its first resolution: its reads
// bounded by the event's budget, not by any subscriber's context.
func (m eventLoaders) make(sh *live.Shared) *eventShared {
	budget := m.timeout
	if budget <= 0 && m.hub != nil {
		budget = m.hub.EventTimeout()
	}
	if budget <= 0 {
		budget = live.DefaultEventTimeout
	}
	// Not a child of sh.Ctx, which counts from when the event was queued;
	// the hub's shutdown ends the subscriptions anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sh.Ctx), budget)
	time.AfterFunc(budget, cancel)
	c := m.cfg
	c.Detached = ctx
	return &eventShared{ctx: ctx, loaders: loaders.New(pipeline.LoaderDeps(m.store, m.now), "", c), views: map[string]*loaders.Loaders{}}
}

// isSubscription reports whether ctx's operation is a subscription.
func isSubscription(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}

// streams reports whether the operation of ctx came over a transport that
// streams responses (its Delivery: ResponseStream): a WebSocket, or a POST
// that accepts text/event-stream.
func streams(ctx context.Context) bool { return pipeline.DeliveryOf(ctx) == pipeline.ResponseStream }

// liveRules are the live rules as the operation pipeline runs them
// (pipeline.Subscriptions): around each operation, a subscription over a
// transport that cannot stream refused (liveOperations); around each
// field, an event's fields given their slot (eventFields).
type liveRules struct{ operations graphql.OperationMiddleware }

func (l liveRules) Operation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return l.operations(ctx, next)
}

func (liveRules) Field(ctx context.Context, next graphql.Resolver) (any, error) {
	return eventFields(ctx, next)
}

// liveOperations refuses a subscription sent over a transport that does
// not stream (a plain POST: BAD_USER_INPUT, pipeline.RefusedNeedsStream,
// at once).
func liveOperations(o pipeline.Options) graphql.OperationMiddleware {
	present := pipeline.ErrorPresenter(o.Log)
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if !isSubscription(ctx) || streams(ctx) {
			return next(ctx)
		}
		pipeline.Refuse(ctx, pipeline.RefusedNeedsStream)
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{present(ctx, subscription.ErrNotAStream)}})
	}
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
