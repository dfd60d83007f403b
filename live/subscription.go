package live

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// Subscription is one subscriber's stream of a project's events. Its
// buffer is bounded (HubConfig.Buffer): a subscriber that falls further
// behind is cut off with ErrSlow and may resume from its last cursor.
type Subscription struct {
	h       *Hub
	viewer  string
	project string

	mu      sync.Mutex
	queue   []*Delivery // delivered, not yet read
	wake    chan struct{}
	room    chan struct{} // signalled by Next when it takes an event: the replay may go on
	last    uint64        // the stream sequence of the last event queued
	live    bool          // false while replaying: live events wait in pending
	pending []*Delivery   // live events that arrived during the replay
	done    bool
	err     error // why it ended; io.EOF: the stream ended normally
	ended   chan struct{}
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
func (h *Hub) Subscribe(ctx context.Context, viewer, project string, after *string) (*Subscription, error) {
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
	s := &Subscription{h: h, viewer: viewer, project: project, wake: make(chan struct{}, 1), room: make(chan struct{}, 1), ended: make(chan struct{}),
		live: after == nil, last: from, since: membershipStart(p, m), gated: from}
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

// push queues an event unless it is one the subscription already has (by
// stream sequence), then ends the subscription normally when last is set;
// a full queue cuts the subscriber off.
func (s *Subscription) push(d *Delivery, last bool, _ error) {
	s.mu.Lock()
	if s.done || d.Seq <= s.last {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= s.h.cfg.Buffer {
		s.mu.Unlock()
		s.end(ErrSlow)
		return
	}
	s.queue = append(s.queue, d)
	s.last = d.Seq
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if last {
		s.end(io.EOF)
	}
}

// end ends the subscription with err (io.EOF: normally); what was queued
// before stays readable, except after ErrSlow and shutdown, which drop it.
func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done, s.err = true, err
	if err != io.EOF && err != ErrGone {
		s.queue = nil
	}
	s.pending = nil
	close(s.ended)
	s.mu.Unlock()
	s.h.drop(s)
}

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

// Next returns the next event. At the end it returns io.EOF when the
// stream ended normally (the viewer was removed, the project deleted), or
// the reason it was ended: ErrSlow, ENOTFOUND (no longer a member),
// EUNAVAILABLE (shutdown, the table or the broker failed), or ctx's error.
func (s *Subscription) Next(ctx context.Context) (*Delivery, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			d := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			select {
			case s.room <- struct{}{}:
			default:
			}
			return d, nil
		}
		if s.done {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.ended:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Ended is closed when the subscription ends; Err then tells why.
func (s *Subscription) Ended() <-chan struct{} { return s.ended }

// Err returns why the subscription ended (see Next), or nil while it runs.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Queued returns how many events wait for the subscriber to read them
// (for tests and metrics).
func (s *Subscription) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Viewer returns the subscriber's user id.
func (s *Subscription) Viewer() string { return s.viewer }
