package graph

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/live"
)

// An event is shown to a subscriber by the rule queries follow (the
// project exists and the viewer is a member now), checked when the event
// is resolved for that subscriber, not when it was queued: the hub's check
// (live.Hub.deliver) decides what is queued, and a subscriber that reads
// late (a stalled client, a long replay) resolves the event's nested
// fields long after it. So every resolved event is checked again once its
// resolution is done, by a strongly consistent read that starts after all
// the reads its fields made; the response is sent only if the viewer is
// still a member (liveEvents). The check is batched across the event's
// local recipients: one read (a BatchGetItem of the project and the
// members, or a Query of the members beside the project for 100 viewers or
// more) for all those who resolve it together.

// How long a batch of membership re-checks waits for the event's other
// recipients (live.Shared.Recipients: those that were keeping up when it
// was queued) once its first one joined: until all have joined; while one
// of them is resolving the event (its transport took it), at most the wait
// (Options.EventRecheckWait, DefaultEventRecheckWait) after the batch
// opened; while none is, the idle time (Options.EventRecheckIdle, 0 by
// default: at once). Recipients that resolve an event together are
// checked in one read; one whose socket is stuck never takes the event, so
// it delays no one (a wait for it would, with every event, until the
// others fell behind).
const DefaultEventRecheckWait = 100 * time.Millisecond

// eventShared is what this instance's recipients of one event share: the
// event's loaders (objects and lists that do not depend on the viewer),
// one view of them per viewer (the lists filtered by the viewer's
// memberships, shared by that viewer's subscriptions), the read budget,
// and the batch of membership re-checks.
type eventShared struct {
	store *dynamo.Store
	// idle and max bound a batch's wait (DefaultEventRecheckWait).
	idle, max time.Duration
	// ctx bounds every read made for the event, its re-checks included:
	// the event timeout, counted from the first resolution on this
	// instance (not from when it was queued).
	ctx        context.Context
	loaders    *loaders.Loaders
	recipients func() int

	mu    sync.Mutex
	views map[string]*loaders.Loaders
	// taken counts the recipients whose transport took the event (it is
	// being resolved for them), joined those who joined a re-check.
	taken, joined int
	open          *memberBatch
}

// took records that a recipient's transport took the event: it is being
// resolved and will join a re-check.
func (e *eventShared) took() {
	e.mu.Lock()
	e.taken++
	e.mu.Unlock()
}

// memberBatch is one read of the memberships of the viewers who finished
// resolving the event while it was open.
type memberBatch struct {
	opened, last time.Time // when it opened, when the last viewer joined
	viewers      []string
	seen         map[string]bool
	closed       bool
	done         chan struct{}
	exists       bool
	member       map[string]bool
	err          error
}

// newEventShared makes an event's shared part at its first resolution.
func (r *liveResolvers) newEventShared(sh *live.Shared) *eventShared {
	budget := r.eventTimeout
	if budget <= 0 && r.hub != nil {
		budget = r.hub.EventTimeout()
	}
	if budget <= 0 {
		budget = live.DefaultEventTimeout
	}
	// Not a child of sh.Ctx, which counts from when the event was queued;
	// the hub's shutdown ends the subscriptions anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sh.Ctx), budget)
	time.AfterFunc(budget, cancel)
	c := r.loaderCfg
	c.Detached = ctx
	c.Steps = nil // step mode counts an operation's work; an event's loaders serve many
	return &eventShared{store: r.store, idle: r.recheckIdle, max: r.recheckWait, ctx: ctx, loaders: loaders.New(pipeline.LoaderDeps(r.store, r.now), "", c), recipients: sh.Recipients,
		views: map[string]*loaders.Loaders{}}
}

// view returns the event's loaders as viewer sees them, one per viewer:
// the subscriptions of one viewer share their reads.
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

// late reports whether the event's read budget is spent.
func (e *eventShared) late() bool { return e.ctx.Err() != nil }

// memberNow reports whether the project exists and viewer is a member,
// by a read that starts after the call: the batch the call joins is read
// when every expected recipient has joined, or the recheck wait after it
// opened.
func (e *eventShared) memberNow(project, viewer string) (bool, error) {
	e.mu.Lock()
	b := e.open
	now := time.Now()
	if b == nil {
		b = &memberBatch{opened: now, seen: map[string]bool{}, done: make(chan struct{})}
		e.open = b
		e.closeLater(b, project, e.idle)
	}
	b.last = now
	if !b.seen[viewer] {
		b.seen[viewer] = true
		b.viewers = append(b.viewers, viewer)
	}
	e.joined++
	all := e.joined >= e.recipients()
	e.mu.Unlock()
	if all {
		e.read(b, project)
	}
	<-b.done
	return b.exists && b.member[viewer], b.err
}

// closeLater reads batch b after d, or later if a viewer joined since.
func (e *eventShared) closeLater(b *memberBatch, project string, d time.Duration) {
	time.AfterFunc(d, func() {
		e.mu.Lock()
		if b.closed {
			e.mu.Unlock()
			return
		}
		now := time.Now()
		wait := b.opened.Add(e.max).Sub(now)
		if e.taken <= e.joined { // nobody is resolving it: wait only for the idle time
			wait = min(wait, b.last.Add(e.idle).Sub(now))
		}
		e.mu.Unlock()
		if wait > 0 {
			e.closeLater(b, project, wait)
			return
		}
		client.Go(func() { e.read(b, project) })
	})
}

// read closes batch b (once) and reads its memberships.
func (e *eventShared) read(b *memberBatch, project string) {
	e.mu.Lock()
	if b.closed {
		e.mu.Unlock()
		return
	}
	b.closed = true
	if e.open == b {
		e.open = nil
	}
	e.mu.Unlock()
	b.exists, b.member, b.err = e.store.Membership(e.ctx, project, b.viewers) // as the hub's check
	close(b.done)
}

// errLate ends a subscription whose event could not be resolved within
// its read budget (the event timeout): a retryable end, as for a
// subscriber that fell behind.
var errLate = &domain.Error{Code: domain.EUNAVAILABLE,
	Message: "an event could not be resolved in time and the subscription was ended; subscribe again with after: the last cursor received"}

// reasonLate is the WebSocket close reason of errLate (at most 123 bytes).
const reasonLate = "event resolved too late; resume with your last cursor"

// liveEvents runs around the resolution of each event of a subscription:
// once the event is resolved (its nested fields read), it checks that the
// viewer may still see the project, and sends the response only then. A
// viewer who may not gets no response: the stream ends with NOT_FOUND. An
// event resolved after its read budget ended (a slow reader, a long
// replay) ends the stream with a retryable error instead of a response
// with errors; on a WebSocket the connection closes with 1013 as for a
// slow consumer. The last event of a removed member or of a deleted
// project is resolved without the project's data (see eventScope.final)
// and needs no check.
func (r *liveResolvers) liveEvents(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	st, _ := ctx.Value(liveStateKey{}).(*liveState)
	if st == nil || !isSubscription(ctx) {
		return next(ctx)
	}
	if st.isStopped() {
		return nil
	}
	res := next(ctx)
	if res == nil {
		return nil
	}
	var pe *model.ProjectEvent
	select {
	case pe = <-st.sent:
	case <-ctx.Done():
		return nil
	}
	sc, _ := pe.Scope.(*eventScope)
	if sc == nil {
		return res
	}
	es := sc.state()
	if es.late() {
		return r.endLate(ctx, st)
	}
	if sc.final {
		return res
	}
	ok, err := es.memberNow(pe.ProjectID, sc.viewer)
	switch {
	case es.late():
		return r.endLate(ctx, st)
	case err != nil:
		st.end(live.ErrUnchecked)
		return nil
	case !ok:
		st.end(live.ErrGone) // as the hub's own end of such a subscription
		return nil
	}
	return res
}

// endLate ends a subscription whose event was resolved too late.
func (r *liveResolvers) endLate(ctx context.Context, st *liveState) *graphql.Response {
	st.stopNow()
	if pipeline.CloseConnection(ctx, CloseTryAgainLater, reasonLate) {
		<-ctx.Done() // as cutOff: no "complete" overtakes the close
		return nil
	}
	st.fail(errLate)
	return nil
}
