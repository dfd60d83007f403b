package dynamo

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// The store's background work (RunBackground), driven by what is pending,
// so that an idle instance makes at most one DynamoDB call a minute:
//
//   - its own work, which the instance knows of: a delete's cleanup job
//     runs at once (KickCleanup), and again every Retry while a job is left
//     unfinished; an event whose publication failed here (publish, owe) has
//     the whole outbox swept every Retry until a sweep has published it;
//     after the broker's outage, the whole outbox is swept at once
//     (KickOutbox);
//   - what no instance knows of: the outbox items of an instance that
//     stopped between commit and publication, the cleanup jobs it left,
//     and the change log's expired items (which DynamoDB's TTL deletes
//     too; the embedded store has none). The slow sweep finds them: one
//     call every Slow (a minute), in turn one of the outbox's 16 shards,
//     the cleanup jobs' partition, one of the change log expiry's 16
//     partitions (slowSlots), each instance starting at a slot of its own.
//     An event left in the outbox by a stopped instance is thus published
//     within LeftoverBound (33 minutes and MinAge; sooner with more
//     instances), or at once when an instance starts: a start sweeps
//     everything.

// DefaultSlowSweep is Background.Slow's default: the period of the slow
// sweep's one call.
const DefaultSlowSweep = time.Minute

// slowSlots are the slow sweep's turns: the outbox's shards, the cleanup
// jobs' partition, the expiry partitions.
const slowSlots = outboxShards + 1 + expiryShards

// Background tunes RunBackground; the zero value is the defaults.
type Background struct {
	// Retry is how often the instance's own pending work is retried (an
	// event whose publication failed, a cleanup job left unfinished); 0:
	// DefaultOutboxInterval.
	Retry time.Duration
	// MinAge is the age of the outbox items a sweep publishes (younger
	// ones may still be being published by their mutation); 0:
	// DefaultOutboxMinAge.
	MinAge time.Duration
	// Slow is the period of the slow sweep's call; 0: DefaultSlowSweep.
	Slow time.Duration
	// Clock is the time the work is scheduled in; nil: the wall clock.
	// Tests give a simulated one (with Store.Now).
	Clock Clock
}

// Clock is what RunBackground schedules its work with.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (b Background) withDefaults() Background {
	b.Retry = cmp.Or(b.Retry, DefaultOutboxInterval)
	b.MinAge = cmp.Or(b.MinAge, DefaultOutboxMinAge)
	b.Slow = cmp.Or(b.Slow, DefaultSlowSweep)
	if b.Clock == nil {
		b.Clock = wallClock{}
	}
	return b
}

// LeftoverBound is how long after its commit an event that an instance
// left in the outbox when it stopped is published at the latest by a
// running instance's slow sweep (no instance starting meanwhile): its shard's
// turn comes within slowSlots turns, once the item is MinAge old. The
// event sink's deduplication window need not cover it: such an event
// was, but for the instance stopping in the moment between publication and
// delete, never published.
func (b Background) LeftoverBound() time.Duration {
	b = b.withDefaults()
	return slowSlots*b.Slow + b.MinAge
}

// owe records that the event committed at was not published: the
// instance sweeps the outbox until it is (RunBackground).
func (s *Store) owe(at time.Time) {
	n := at.UnixNano()
	for {
		old := s.outboxOwed.Load()
		if old >= n || s.outboxOwed.CompareAndSwap(old, n) {
			return
		}
	}
}

// RunBackground runs the store's background work (see above) until ctx
// ends, logging failures: at once everything (the whole outbox, every item
// whatever its age, as KickOutbox's; the cleanup jobs; the expired
// changes), then what is pending and the slow sweep.
func (s *Store) RunBackground(ctx context.Context, b Background) {
	b = b.withDefaults()
	s.sweepOutboxLogged(ctx, kickedAge, 0, outboxShards)
	left := s.cleanupLogged(ctx)
	s.sweepChangesLogged(ctx, 0, expiryShards)
	slot := rand.IntN(slowSlots)
	now := b.Clock.Now()
	slowAt, retryAt := now.Add(b.Slow), now.Add(b.Retry)
	for {
		owed := s.outboxOwed.Load() != 0
		next := slowAt
		if (owed || left > 0) && retryAt.Before(next) {
			next = retryAt
		}
		select {
		case <-ctx.Done():
			return
		case <-s.outboxKick:
			if s.outboxSwept.Load() < s.outboxKicked.Load() {
				s.sweepOutboxLogged(ctx, kickedAge, 0, outboxShards)
			}
			continue
		case <-s.cleanupKick:
			left = s.cleanupLogged(ctx)
			continue
		case <-b.Clock.After(next.Sub(b.Clock.Now())):
		}
		now := b.Clock.Now()
		if (owed || left > 0) && !now.Before(retryAt) {
			if owed {
				s.sweepOutboxLogged(ctx, b.MinAge, 0, outboxShards)
			}
			if left > 0 {
				left = s.cleanupLogged(ctx)
			}
			retryAt = now.Add(b.Retry)
		}
		if !now.Before(slowAt) {
			switch {
			case slot < outboxShards:
				s.sweepOutboxLogged(ctx, b.MinAge, slot, slot+1)
			case slot == outboxShards:
				left = s.cleanupLogged(ctx)
			default:
				i := slot - outboxShards - 1
				s.sweepChangesLogged(ctx, i, i+1)
			}
			slot = (slot + 1) % slowSlots
			slowAt = now.Add(b.Slow)
		}
	}
}

// sweepOutboxLogged sweeps the outbox's shards lo to hi-1 (sweepOutbox),
// logs the outcome, and forgets what the instance owed when the sweep
// took every shard and published every item up to its cutoff (and, for a
// sweep of every item, that it answered the kicks before it).
func (s *Store) sweepOutboxLogged(ctx context.Context, minAge time.Duration, lo, hi int) {
	began := s.now()
	cutoff := began.Add(-minAge)
	n, err := s.sweepOutbox(ctx, minAge, lo, hi)
	switch {
	case errors.Is(err, ErrSinkDown): // said by the sink, once
	case err != nil && ctx.Err() == nil:
		s.Log.Warn("sweeping the outbox", "published", n, "err", err)
	case n > 0:
		s.Log.Info("published events left in the outbox", "events", n)
	}
	if err == nil && lo == 0 && hi == outboxShards {
		if owed := s.outboxOwed.Load(); owed != 0 && owed <= cutoff.UnixNano() {
			s.outboxOwed.CompareAndSwap(owed, 0)
		}
		if minAge == kickedAge {
			s.outboxSwept.Store(began.UnixNano())
		}
	}
}

// cleanupLogged runs the pending cleanup jobs, logs the outcome, and
// returns how many are left (1 after a failure: run again).
func (s *Store) cleanupLogged(ctx context.Context) int {
	n, left, err := s.runCleanup(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.Log.Error("cleanup", "err", err)
		return max(left, 1)
	case n > 0:
		s.Log.Debug("cleanup", "jobs", n)
	}
	return left
}

// sweepChangesLogged deletes the expired changes of the expiry partitions
// lo to hi-1 and logs the outcome.
func (s *Store) sweepChangesLogged(ctx context.Context, lo, hi int) {
	if n, err := s.sweepChanges(ctx, lo, hi); err != nil && ctx.Err() == nil {
		s.Log.Error("sweeping the change log", "err", err)
	} else if n > 0 {
		s.Log.Debug("swept the change log", "items", n)
	}
}
