package live

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// Subscription is one subscriber's registration for a project's events.
// The hub hands each event to its Receiver with the subscriptions it is
// for (Hub.deliver); the subscriber's side (its Subscriber, the owner)
// takes it from there, and learns of the subscription's end through
// Ended.
type Subscription struct {
	h       *Hub
	viewer  string
	project string
	owner   Subscriber

	mu      sync.Mutex
	last    uint64      // the stream sequence of the last event handed on
	live    bool        // false while replaying: live events wait in pending
	pending []*Delivery // live events that arrived during the replay
	done    bool
	err     error // why it ended; io.EOF: the stream ended normally
	// checked is when a check found the viewer a member, during the
	// replay (recentlyChecked).
	checked time.Time

	// The replay's membership gate (admit), used by the replay's
	// goroutine only. since is when the viewer's membership began, as
	// Subscribe read it; gated is the sequence of the last event admit
	// decided on; out is set by the viewer's own MEMBER_REMOVED in the
	// replay, until their own MEMBER_ADDED.
	since time.Time
	gated uint64
	out   bool
}

// A Subscriber is the receiving side of a subscription (Hub.Subscribe's
// owner): where the Receiver sends its events, at a pace it sets.
type Subscriber interface {
	// Ended is called once, when the subscription ends, with why: io.EOF
	// when the stream ended normally (the viewer's removal, the project's
	// deletion, after that event), ErrSlow, ErrGone, ErrUnchecked, the
	// shutdown's EUNAVAILABLE, or the error given to End.
	Ended(err error)
	// Room waits until the subscriber can take one more event without
	// falling behind; false when it never will (it ended, or ctx did). A
	// replay waits for it before each event; live delivery never waits.
	Room(ctx context.Context) bool
}

// A Receiver takes the events the hub delivers (Hub.SetReceiver): the
// GraphQL side, which resolves and sends them.
type Receiver interface {
	// Deliver hands d to the subscriptions to, all of its project, all of
	// which passed its visibility check (or whose final event it is), in
	// stream order for each. It returns once each has been sent what it
	// may see, or ended; the hub then ends those whose stream the event
	// ends (Recipient.Last).
	Deliver(d *Delivery, to []Recipient)
}

// Recipient is one subscription an event is delivered to.
type Recipient struct {
	Sub *Subscription
	// Last: the event ends the subscription normally once delivered (the
	// viewer's own removal, the project's deletion).
	Last bool
}

// replayRecheck is how long, during a replay, one visibility check of the
// resuming subscriber stands for the following replayed events: a replay of
// thousands of events costs a check a second, not one per event. An event
// that may change what the viewer sees (their removal, the project's
// deletion) is always checked, and live delivery always checks each event.
const replayRecheck = time.Second

// recentlyChecked reports whether, during the replay, a check found the
// viewer a member within replayRecheck and ev changes no membership.
func (s *Subscription) recentlyChecked(ev *domain.Event) bool {
	if ev.Kind == domain.EventMemberRemoved || ev.Kind == domain.EventProjectDeleted {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.live && !s.checked.IsZero() && time.Since(s.checked) < replayRecheck
}

// noteCheck records the outcome of a check of this subscriber alone.
func (s *Subscription) noteCheck(member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checked = time.Time{}
	if member && !s.live {
		s.checked = time.Now()
	}
}

// Subscribe checks that the project exists and that viewer is a member
// (ENOTFOUND otherwise) and subscribes to its events. With after (a cursor
// of this project, cursor.Keys.ParseCursor), every kept event after it is
// replayed first, then the live ones follow with none missed and none
// repeated. The replay starts no earlier than the viewer's current
// membership (membershipStart): the events before it are skipped, as if
// the cursor were there. The subscription ends when ctx does, or Close.
//
// Returns EINVALID for a cursor this server did not make for the project
// (one message for all: malformed, forged, changed, another project's or
// another key's; checked before any read), then, for a cursor of the
// project: one beyond the stream's last event (the stream was reset), or
// one older than the stream keeps (it no longer holds the event that
// followed it, which may have been one of this project's). ENOTFOUND when
// the project does not exist or viewer is no member; EUNAVAILABLE when the
// table or the broker fails, or the hub shuts down.
func (h *Hub) Subscribe(ctx context.Context, viewer, project string, after *string, owner Subscriber) (*Subscription, error) {
	subj, err := subject(project)
	if err != nil {
		return nil, err
	}
	var from uint64
	if after != nil {
		if from, err = h.cursors.ParseCursor(project, *after); err != nil {
			// Or the token of a sync (Query.sync) the client made: the stream
			// goes on where that sync read the project (docs/sync.md).
			tok, serr := h.cursors.OpenSync(viewer, *after)
			switch {
			case serr != nil:
				return nil, err
			case !tok.Final:
				return nil, domain.Errorf(domain.EINVALID,
					"after is the token of a sync that has more pages: ask for them first, then subscribe with the last nextToken")
			}
			from = tok.StreamSeq
		}
	}
	st, err := h.b.readyStream() // no subscription while the broker is down: its client would wait for nothing
	if err == nil && !h.consuming.Load() {
		err = errors.New("the hub's consumer has not started yet")
	}
	if err != nil {
		return nil, errNotReady(err)
	}
	cctx, cancel := context.WithTimeout(ctx, h.cfg.EventTimeout) // a subscription has no request deadline
	defer cancel()
	// The rule's fact (the viewer's profile), with the project and the
	// membership whose start bounds the replay, strongly consistent.
	vals, errs := h.cfg.Store.Get(dynamo.WithConsistency(cctx, dynamo.EventCheck),
		[]dynamo.Ref{dynamo.ProjectRef(project), dynamo.MemberRef(project, viewer), dynamo.UserRef(viewer)})
	for _, err := range errs {
		if err != nil && !domain.IsNotFound(err) {
			return nil, err
		}
	}
	p, _ := vals[0].(*domain.Project)
	m, _ := vals[1].(*domain.Member)
	u, _ := vals[2].(*domain.User)
	if p == nil || m == nil || !policy.SeesProject(u, project) {
		return nil, ErrGone
	}
	if after != nil {
		info, err := st.Info(cctx)
		if err != nil {
			return nil, &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err}
		}
		switch {
		case from > info.State.LastSeq:
			return nil, domain.Errorf(domain.EINVALID, "after is not a cursor of this server's events")
		case from+1 < info.State.FirstSeq: // the event after the cursor was removed: some may be lost
			return nil, domain.Errorf(domain.EINVALID,
				"after is older than the events this server keeps; fetch the project again and subscribe without after")
		}
	}
	s := &Subscription{h: h, viewer: viewer, project: project, owner: owner, live: after == nil, last: from, since: membershipStart(p, m), gated: from}
	h.mu.Lock()
	if h.ctx.Err() != nil {
		h.mu.Unlock()
		return nil, errShutdown
	}
	f := h.feeds[project]
	if f == nil {
		f = &feed{project: project, queue: make(chan *Delivery, feedQueue), quit: make(chan struct{}), subs: map[*Subscription]struct{}{}}
		h.feeds[project] = f
		go h.run(f)
	}
	f.subs[s] = struct{}{}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, s.Close)
	if after != nil {
		go s.replay(ctx, st, subj, from)
	}
	return s, nil
}

// hold keeps a live event for a subscription still replaying and reports
// whether it did; a full hold cuts the subscriber off.
func (s *Subscription) hold(d *Delivery) bool {
	s.mu.Lock()
	if s.live || s.done {
		s.mu.Unlock()
		return false
	}
	if len(s.pending) >= s.h.cfg.Buffer {
		s.mu.Unlock()
		s.end(ErrSlow)
		return true
	}
	s.pending = append(s.pending, d)
	s.mu.Unlock()
	return true
}

// take reports whether d is one the subscription has not been handed yet
// (by stream sequence: an event both replayed and held goes once) while it
// runs, and records it as handed.
func (s *Subscription) take(d *Delivery) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || d.Seq <= s.last {
		return false
	}
	s.last = d.Seq
	return true
}

// end ends the subscription with err (io.EOF: normally) and tells its
// owner, once.
func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done, s.err = true, err
	s.pending = nil
	s.mu.Unlock()
	s.h.drop(s)
	s.owner.Ended(err)
}

// End ends the subscription with err, which its owner's Ended gets (the
// subscriber fell behind: ErrSlow; its viewer is no longer a member:
// ErrGone; the check failed: ErrUnchecked; or its own reasons).
func (s *Subscription) End(err error) { s.end(err) }

// Close ends the subscription (the subscriber left).
func (s *Subscription) Close() { s.end(errClosed) }

var errClosed = errors.New("the subscription was closed")

// drop forgets an ended subscription.
func (h *Hub) drop(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if f := h.feeds[s.project]; f != nil {
		delete(f.subs, s)
		if len(f.subs) == 0 {
			delete(h.feeds, s.project)
			close(f.quit)
		}
	}
}

// Viewer returns the subscriber's user id.
func (s *Subscription) Viewer() string { return s.viewer }

// Owner returns the subscription's Subscriber.
func (s *Subscription) Owner() Subscriber { return s.owner }
