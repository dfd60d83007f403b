package dynamo

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// The transactional outbox. With Store.Events set, a mutation that changes a
// project, a member, a task or a comment puts one outbox item (outboxitem.go,
// outboxItem; key outboxKey) holding its Event in the transaction that makes
// the change, so the event exists exactly when the change does. After the
// transaction commits, commit hands the event to Events.Publish (bounded by
// PublishTimeout, not cancelled with the request) and, once it is
// published, queues the outbox item for deletion by a background batcher
// (BatchWriteItem, 25 keys a request): the mutation answers without waiting
// for the delete. A failed publication is logged, never answered: the
// change is committed, and the item waits for the sweep (SweepOutbox:
// items older than minAge are published again, oldest first, and deleted),
// which the instance whose publication failed runs every Retry until it is
// published; what an instance that stopped between commit and publication
// left, every instance's slow sweep finds (RunBackground, background.go).
// An event may thus be published twice (an instance stopped between
// publish and delete, a delete that failed); sinks deduplicate by
// Event.ID, the transaction's client request token.
//
// A failed mutation commits nothing, so it has no outbox item and calls no
// sink; a replay of an idempotency key commits nothing either.

const (
	// DefaultPublishTimeout is the default Store.PublishTimeout.
	DefaultPublishTimeout = 3 * time.Second
	// OutboxTTL is how long an unpublished outbox item is kept at most
	// (TTLAttribute): a backstop for a sink that stays down; the sweep
	// drops items past it without publishing them.
	OutboxTTL = 7 * 24 * time.Hour
	// DefaultOutboxInterval and DefaultOutboxMinAge are the sweep's
	// defaults (Background.Retry, MinAge): an event whose publication
	// failed is published within about their sum by the instance that
	// failed. The sink's deduplication window must exceed it.
	DefaultOutboxInterval = 10 * time.Second
	DefaultOutboxMinAge   = 30 * time.Second

	// maxPendingDeletes bounds the published items waiting for deletion;
	// past it, items are left to the sweep.
	maxPendingDeletes = 10_000
	// kickedAge is the minimum age of a sweep KickOutbox asked for: less
	// than none, so that it takes every item, those committed this very
	// moment and those of instances whose clocks run ahead.
	kickedAge = -time.Minute

	// outboxDeleteTimeout bounds one round of background deletes.
	outboxDeleteTimeout = 10 * time.Second
)

// ErrSinkDown is what an EventSink's error wraps when the sink knows that
// it cannot publish now and did not try (its broker is down, and it said
// so in its log once): the event waits in the outbox, and neither the
// mutation nor the sweep logs it again.
var ErrSinkDown = errors.New("the event sink is down")

// stageEvent adds the outbox item of t's event, if any and if events are
// on, to t, with token (the transaction's client request token) as the
// event's id, and returns the event.
func (s *Store) stageEvent(t *txn, token string) *domain.Event {
	if s.Events == nil || t.event == nil {
		return nil
	}
	ev := t.event
	ev.ID = token
	if ev.At.IsZero() {
		ev.At = s.now()
	}
	ev.At = ev.At.UTC()
	t.put(s.table, outboxToItem(ev, s.now().Add(OutboxTTL)), nil, nil)
	return ev
}

// publish hands a committed event to the sink and, when it is recorded,
// queues its outbox item for deletion. A failure is logged: the item stays
// for the sweep. The request's cancellation does not cut the publication
// short (the change is committed); PublishTimeout bounds it.
func (s *Store) publish(ctx context.Context, ev *domain.Event) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.publishTimeout())
	defer cancel()
	if err := s.Events.Publish(pctx, ev); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, ErrSinkDown) { // the sink said so once, not once per event
			level = slog.LevelDebug
		}
		s.Log.Log(pctx, level, "publishing an event failed; the outbox sweep will publish it", "event", ev.ID, "kind", ev.Kind,
			"project", ev.ProjectID, "err", err)
		s.owe(ev.At)
		return
	}
	s.outboxDel.add(s, outboxKey(ev.ID, ev.At))
}

func (s *Store) publishTimeout() time.Duration {
	if s.PublishTimeout <= 0 {
		return DefaultPublishTimeout
	}
	return s.PublishTimeout
}

// outboxDeleter deletes the outbox items of published events in the
// background: whoever queues an item while no round runs starts one; a
// round takes every item queued so far (BatchWriteItem, 25 a request) and
// the next round takes what was queued meanwhile, so deletes batch up under
// load and cost one request each when idle.
type outboxDeleter struct {
	mu      sync.Mutex
	pending []key
	idle    chan struct{} // nil when no round runs; closed when the rounds end
}

func (d *outboxDeleter) add(s *Store, k key) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pending) >= maxPendingDeletes {
		return // the sweep publishes it again (deduplicated) and deletes it
	}
	d.pending = append(d.pending, k)
	if d.idle == nil {
		d.idle = make(chan struct{})
		go d.run(s)
	}
}

func (d *outboxDeleter) run(s *Store) {
	for {
		d.mu.Lock()
		keys := d.pending
		d.pending = nil
		if len(keys) == 0 {
			close(d.idle)
			d.idle = nil
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), outboxDeleteTimeout)
		if err := s.deleteKeys(ctx, keys); err != nil {
			s.Log.Warn("deleting the outbox items of published events failed; the outbox sweep will publish them again and delete them",
				"items", len(keys), "err", err)
		}
		cancel()
	}
}

// FlushOutbox waits until the outbox items of every event published so far
// have been deleted (or their deletion failed and was logged), or ctx ends.
// Call it before the process exits, and in tests before looking at the
// table.
func (s *Store) FlushOutbox(ctx context.Context) error {
	d := &s.outboxDel
	d.mu.Lock()
	ch := d.idle
	d.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) deleteKeys(ctx context.Context, keys []key) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.av()}}
	}
	return s.batchWrite(ctx, reqs)
}

// SweepOutbox makes one pass over the outbox: it reads every shard's items
// committed more than minAge ago (outboxPending; one Query per shard),
// publishes their events in order of commit time and deletes the published
// ones, and returns how many it published. minAge leaves alone the events
// whose mutation is still publishing them; it must exceed PublishTimeout.
// It stops at the first failed publication (the sink is likely down; later
// events would overtake it) and returns its error; what it published until
// then is deleted. Items past their expiry are deleted unpublished. Without
// Events it does nothing. Returns EUNAVAILABLE, EINTERNAL, or the sink's
// error.
func (s *Store) SweepOutbox(ctx context.Context, minAge time.Duration) (int, error) {
	return s.sweepOutbox(ctx, minAge, 0, outboxShards)
}

// sweepOutbox is SweepOutbox over the shards lo to hi-1 (the slow sweep
// reads one at a time: background.go).
func (s *Store) sweepOutbox(ctx context.Context, minAge time.Duration, lo, hi int) (int, error) {
	if s.Events == nil {
		return 0, nil
	}
	now := s.now()
	before := outboxBefore(now.Add(-minAge))
	shards := make([][]item, hi-lo)
	err := s.forEachChunk(ctx, hi-lo, 1, func(ctx context.Context, i, _ int) error {
		its, err := s.queryOutbox(ctx, outboxPK(lo+i), before)
		shards[i] = its
		return err
	})
	if err != nil {
		return 0, err
	}
	all := slices.Concat(shards...)
	slices.SortFunc(all, func(a, b item) int { return cmp.Compare(str(a, attrSK), str(b, attrSK)) })
	var done []key
	published := 0
	var perr error
	for _, it := range all {
		ev, exp, err := outboxFromItem(it)
		if err != nil {
			s.Log.Error("an outbox item cannot be decoded; it stays until it expires", "pk", str(it, attrPK), "sk", str(it, attrSK), "err", err)
			continue
		}
		if exp <= now.Unix() {
			s.Log.Warn("an event expired unpublished in the outbox", "event", ev.ID, "kind", ev.Kind, "project", ev.ProjectID)
			done = append(done, keyOf(it))
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, s.publishTimeout())
		perr = s.Events.Publish(pctx, ev)
		cancel()
		if perr != nil {
			break
		}
		published++
		done = append(done, keyOf(it))
	}
	if len(done) > 0 {
		if err := s.deleteKeys(ctx, done); err != nil {
			return published, err
		}
	}
	return published, perr
}

// queryOutbox reads one outbox shard's items with sort keys before before
// (outboxPending): queryAll's read, bounded.
func (s *Store) queryOutbox(ctx context.Context, pk, before string) ([]item, error) {
	return s.queryAllBefore(ctx, outboxPending, pk, before, "reading the outbox")
}

// KickOutbox asks the background work (RunBackground) for a sweep of the
// whole outbox now, of every item whatever its age: the server calls it
// when its broker is ready again after an outage, so that the events
// committed meanwhile are published then. An item a mutation is still
// publishing may then be published twice, which the sink deduplicates. A
// sweep of every item that began at or after the kick (by the store's
// clock: the start's) answers it.
func (s *Store) KickOutbox() {
	s.outboxKicked.Store(s.now().UnixNano())
	select {
	case s.outboxKick <- struct{}{}:
	default:
	}
}

// changeEvent returns the event of a change made by actor at (zero: the
// commit's time), with copies of the snapshots given (nil for none), so
// that neither the caller nor the sink sees the other's changes to them.
func changeEvent(kind domain.EventKind, projectID, subjectID, actor string, at time.Time, task *domain.Task, c *domain.Comment, p *domain.Project) *domain.Event {
	ev := &domain.Event{Kind: kind, ProjectID: projectID, SubjectID: subjectID, ActorID: actor, At: at}
	if task != nil {
		cp := *task
		cp.Tags = slices.Clone(task.Tags)
		if cp.Tags == nil {
			cp.Tags = []string{} // as a read gives it
		}
		cp.Description, cp.DueDate, cp.AssigneeID = clonePtr(task.Description), clonePtr(task.DueDate), clonePtr(task.AssigneeID)
		ev.Task = &cp
	}
	if c != nil {
		cp := *c
		ev.Comment = &cp
	}
	if p != nil {
		cp := *p
		cp.Description = clonePtr(p.Description)
		ev.Project = &cp
	}
	return ev
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
