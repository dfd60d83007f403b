package live

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/domain"
)

// replay delivers the kept events after from through a temporary ordered
// consumer of the project's subject, up to the last one the stream held
// when it started, then the live events that arrived meanwhile (those not
// replayed already), then switches to live delivery. It goes at the
// subscriber's pace: each event waits for room at the subscriber (waitRoom), so
// a replay longer than the buffer is not mistaken for a slow consumer;
// live events that arrive meanwhile are held, bounded by the buffer too.
func (s *Subscription) replay(ctx context.Context, st jetstream.Stream, subj string, from uint64) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(s.h.ctx, cancel)
	var upTo uint64
	last, err := st.GetLastMsgForSubject(ctx, subj)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
	case err != nil:
		s.end(&domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err})
		return
	default:
		upTo = last.Sequence
	}
	if upTo > from {
		if err := s.replayRange(ctx, st, subj, from, upTo); err != nil {
			s.end(err)
			return
		}
	}
	for {
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			return
		}
		held := s.pending
		s.pending = nil
		if len(held) == 0 {
			s.live = true
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, d := range held {
			if !s.admit(d) {
				continue
			}
			if !s.waitRoom(ctx) {
				return
			}
			s.h.deliver([]*Subscription{s}, d)
		}
	}
}

func (s *Subscription) replayRange(ctx context.Context, st jetstream.Stream, subj string, from, upTo uint64) error {
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from + 1})
	if err != nil {
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err}
	}
	// At most a buffer's worth of events fetched ahead of the subscriber.
	it, err := cons.Messages(jetstream.PullMaxMessages(min(s.h.cfg.Buffer, 500)), jetstream.PullHeartbeat(consumerHeartbeat))
	if err != nil {
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err}
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return errShutdown
			}
			return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err}
		}
		md, err := msg.Metadata()
		if err != nil {
			continue
		}
		seq := md.Sequence.Stream
		if !s.waitRoom(ctx) {
			if ctx.Err() != nil {
				return errShutdown
			}
			return nil
		}
		if ev, err := decodeEvent(msg.Data()); err == nil {
			if d := (&Delivery{Seq: seq, Cursor: s.h.cursors.Cursor(s.project, seq), Event: ev}); s.admit(d) {
				d.Shared = s.h.newShared()
				s.h.deliver([]*Subscription{s}, d)
			}
		}
		if seq >= upTo {
			return nil
		}
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done {
			return nil
		}
	}
}

// membershipStart is when m's membership of p began: its joinedAt, which
// the store writes with the clock value of the membership's own event (the
// MEMBER_ADDED of that user; the project's creation for its owner). A
// membership item without it (none is written so; only a hand-made import
// could lack it) counts from the project's creation: no event of the
// project precedes it.
func membershipStart(p *domain.Project, m *domain.Member) time.Time {
	if !m.JoinedAt.IsZero() {
		return m.JoinedAt
	}
	return p.CreatedAt
}

// admit reports whether a replayed (or held) event falls within the
// viewer's current membership: its commit time is not before the
// membership began (since; the viewer's own MEMBER_ADDED, whose time is
// the membership's start, is the first event admitted), and it is not
// between their own MEMBER_REMOVED and MEMBER_ADDED in this replay (a
// removal and a re-adding while the replay runs, after Subscribe read the
// membership). An event is decided once, by sequence: one both replayed
// and held gets the first decision. Replay goroutine only.
func (s *Subscription) admit(d *Delivery) bool {
	if d.Seq <= s.gated {
		return false
	}
	s.gated = d.Seq
	ev := d.Event
	if ev.At.Before(s.since) {
		return false
	}
	own := ev.SubjectID == s.viewer
	switch {
	case own && ev.Kind == domain.EventMemberAdded:
		s.out = false
	case s.out:
		return false
	case own && ev.Kind == domain.EventMemberRemoved:
		s.out = true // delivered: deliver ends the stream unless they are a member again
	}
	return true
}

// waitRoom waits until the subscriber has room for one more event (its
// owner's Room); false when the subscription ended or ctx did first. Only
// the replay waits: live delivery never waits for a subscriber (its owner
// cuts it off instead).
func (s *Subscription) waitRoom(ctx context.Context) bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	return !done && s.owner.Room(ctx)
}
