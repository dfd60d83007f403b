package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// Hub defaults.
const (
	// DefaultBuffer is how many events a subscriber may fall behind before
	// it is cut off (it then resumes with its last cursor).
	DefaultBuffer = 256
	// DefaultEventTimeout bounds the DynamoDB reads of one event: its
	// visibility check and its recipients' shared loads.
	DefaultEventTimeout = 10 * time.Second
	// consumerHeartbeat is how often the NATS server hosting a consumer
	// says it is alive: a consumer that hears nothing for twice that (its
	// node killed, its stream's leader moved) is made again where the
	// stream now is, after the last event received (nats.go's default,
	// 15 s, held events up to 30 s after a node's loss).
	consumerHeartbeat = time.Second
	// feedQueue is how many events of one project an instance may hold
	// before its visibility check; past it the project's subscribers are
	// cut off (they resume with their cursors).
	feedQueue = 1024
)

// ErrSlow ends a subscription whose subscriber did not keep up.
var ErrSlow = &domain.Error{Code: domain.EUNAVAILABLE,
	Message: "the subscription fell too far behind and was ended; subscribe again with after: the last cursor received"}

// ErrGone ends a subscription whose viewer no longer sees the project (as
// the hub found when an event arrived, or graph when it was resolved): the
// NOT_FOUND of a project the viewer may not see.
var ErrGone = domain.Errorf(domain.ENOTFOUND, "project not found")

// HubConfig configures a Hub.
type HubConfig struct {
	// Store checks visibility: the project must exist and the subscriber
	// be a member, when subscribing and on every event.
	Store *dynamo.Store
	// Buffer is DefaultBuffer when 0.
	Buffer int
	// EventTimeout is DefaultEventTimeout when 0.
	EventTimeout time.Duration
	// CursorKey encrypts and authenticates the cursors (cursor.Keys): at
	// least cursor.MinKey bytes, the same on every instance that shares
	// the stream, so that a client resumes anywhere. Empty: a random key
	// made once per process (cursors then hold only within the process).
	CursorKey []byte
	Log       *slog.Logger
}

// Hub is one instance's fan-out: one JetStream consumer for the live tail of
// the stream, whose events go to the instance's subscribers of each
// project; a subscription that resumes from a cursor replays through its own
// temporary consumer first.
type Hub struct {
	b    *Broker
	cfg  HubConfig
	ctx  context.Context
	stop context.CancelFunc
	// consuming is set once the consumer of the live tail runs (consume):
	// subscriptions are refused until then.
	consumeMu sync.Mutex
	consuming atomic.Bool

	cursors *cursor.Keys // makes and reads the cursors (HubConfig.CursorKey)

	mu    sync.Mutex
	feeds map[string]*feed // by project id
	subs  map[*Subscription]struct{}
	recv  Receiver // SetReceiver; nil: events go nowhere
}

// SetReceiver sets where the hub's events go once checked: the GraphQL
// side, made after the hub.
func (h *Hub) SetReceiver(r Receiver) {
	h.mu.Lock()
	h.recv = r
	h.mu.Unlock()
}

// feed is one project's events on this instance, in stream order: one
// goroutine checks visibility once per event for all the project's local
// subscribers and hands the event on.
type feed struct {
	project string
	queue   chan *Delivery
	quit    chan struct{}
	subs    map[*Subscription]struct{}
}

// Delivery is one event for a subscriber.
type Delivery struct {
	// Seq is the event's stream sequence; Cursor is its cursor
	// (cursor.Keys.Cursor: the sequence encrypted, bound to the project).
	Seq    uint64
	Cursor string
	Event  *domain.Event
	// Shared is the same for every local recipient of this event: what they
	// may share (the per-event loaders), made once.
	Shared *Shared
	// Received is when this instance took the event off the stream (zero
	// for a replay): the start of its fan-out's metric.
	Received time.Time
}

// Shared is what an event's local recipients share. Every one of them
// passed the visibility check for this event, so what is read for one may
// be shown to the others.
type Shared struct {
	// Ctx bounds the reads made for the event (HubConfig.EventTimeout).
	Ctx  context.Context
	once sync.Once
	v    any
}

// Value returns the shared value, made by mk on the first call.
func (s *Shared) Value(mk func(ctx context.Context) any) any {
	s.once.Do(func() { s.v = mk(s.Ctx) })
	return s.v
}

// StartHub starts the instance's consumer of the stream's live tail. It
// runs until ctx ends or Close.
func (b *Broker) StartHub(ctx context.Context, c HubConfig) (*Hub, error) {
	if c.Store == nil {
		return nil, errors.New("live: a hub needs a store for its visibility checks")
	}
	if c.Buffer <= 0 {
		c.Buffer = DefaultBuffer
	}
	if c.EventTimeout <= 0 {
		c.EventTimeout = DefaultEventTimeout
	}
	if c.Log == nil {
		c.Log = b.log
	}
	cursors := cursor.Process()
	if len(c.CursorKey) > 0 {
		var err error
		if cursors, err = cursor.New(c.CursorKey); err != nil {
			return nil, fmt.Errorf("live: %w", err)
		}
	}
	h := &Hub{b: b, cfg: c, cursors: cursors, feeds: map[string]*feed{}, subs: map[*Subscription]struct{}{}}
	h.ctx, h.stop = context.WithCancel(ctx)
	b.OnReady(h.consume) // now, if the broker is ready; else once it is
	return h, nil
}

// consume starts the hub's consumer of the stream's live tail, once: the
// ordered consumer then rides out reconnects by itself, resuming after
// the last event it received. A failure is logged and tried again.
func (h *Hub) consume() {
	h.consumeMu.Lock()
	defer h.consumeMu.Unlock()
	if h.consuming.Load() || h.ctx.Err() != nil {
		return
	}
	st, err := h.b.readyStream()
	var cc jetstream.ConsumeContext
	if err == nil {
		var cons jetstream.Consumer
		if cons, err = st.OrderedConsumer(h.ctx, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{SubjectPrefix + "*"}, DeliverPolicy: jetstream.DeliverNewPolicy}); err == nil {
			cc, err = cons.Consume(h.receive, jetstream.PullHeartbeat(consumerHeartbeat))
		}
	}
	if err != nil {
		if !errors.Is(err, dynamo.ErrSinkDown) {
			h.cfg.Log.Warn("live: consuming the event stream failed; trying again", "err", err)
		}
		time.AfterFunc(h.b.retry, h.consume)
		return
	}
	context.AfterFunc(h.ctx, cc.Stop)
	h.consuming.Store(true)
}

// Cursors returns the hub's cursors: what its deliveries carry and what
// Subscribe reads.
func (h *Hub) Cursors() *cursor.Keys { return h.cursors }

// LastSeq returns the stream's last sequence: a subscription with after
// at it gets every event published from now on (a sync's token holds it).
func (h *Hub) LastSeq(ctx context.Context) (uint64, error) {
	st, err := h.b.readyStream()
	if err != nil {
		return 0, errNotReady(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not answer", Err: err}
	}
	return info.State.LastSeq, nil
}

// Close stops the consumer and ends every subscription (without error: a
// client resumes with its cursor on another instance or after a restart).
func (h *Hub) Close() {
	h.stop()
	h.mu.Lock()
	subs := make([]*Subscription, 0, len(h.subs))
	for s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.end(errShutdown)
	}
}

// errShutdown ends subscriptions when the server stops.
var errShutdown = &domain.Error{Code: domain.EUNAVAILABLE,
	Message: "the server is shutting down; subscribe again with after: the last cursor received"}

// receive takes one message of the live tail.
func (h *Hub) receive(msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		return
	}
	ev, err := decodeEvent(msg.Data())
	if err != nil {
		h.cfg.Log.Error("live: an unreadable event in the stream", "seq", md.Sequence.Stream, "err", err)
		return
	}
	h.mu.Lock()
	f := h.feeds[ev.ProjectID]
	h.mu.Unlock()
	if f == nil {
		return // no local subscriber: no read at all
	}
	d := &Delivery{Seq: md.Sequence.Stream, Cursor: h.cursors.Cursor(ev.ProjectID, md.Sequence.Stream), Event: ev, Shared: h.newShared(),
		Received: time.Now()}
	select {
	case f.queue <- d:
	default:
		h.mu.Lock()
		subs := h.snapshot(f)
		h.mu.Unlock()
		for _, s := range subs {
			s.end(ErrSlow)
		}
	}
}

// snapshot lists a feed's subscribers; h.mu held.
func (h *Hub) snapshot(f *feed) []*Subscription {
	subs := make([]*Subscription, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	return subs
}

// run hands a project's live events on, in order.
func (h *Hub) run(f *feed) {
	for {
		select {
		case <-f.quit:
			return
		case <-h.ctx.Done():
			return
		case d := <-f.queue:
			h.mu.Lock()
			subs := h.snapshot(f)
			h.mu.Unlock()
			now := subs[:0:0]
			for _, s := range subs {
				if !s.hold(d) {
					now = append(now, s)
				}
			}
			if len(now) > 0 {
				h.deliver(now, d)
			}
		}
	}
}

// newShared returns the shared part of one event's delivery, its reads
// bounded by the hub's event timeout.
func (h *Hub) newShared() *Shared {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.EventTimeout)
	time.AfterFunc(h.cfg.EventTimeout, cancel)
	return &Shared{Ctx: ctx}
}

// deliver is the only way an event reaches a subscriber: it checks, once
// for all of subs (subscribers of the event's project), that the project
// exists and which of them are members, and hands the event to the
// Receiver for those who may see it. The event that removes a subscriber
// from the project reaches them, then their subscription ends; the event
// that deletes the project reaches every subscriber, then every
// subscription ends. A subscriber who is no longer a member otherwise gets
// nothing and their subscription ends with NOT_FOUND.
func (h *Hub) deliver(subs []*Subscription, d *Delivery) {
	viewers := make([]string, 0, len(subs))
	seen := map[string]bool{}
	for _, s := range subs {
		if !seen[s.viewer] {
			seen[s.viewer] = true
			viewers = append(viewers, s.viewer)
		}
	}
	ev := d.Event
	var exists bool
	var member map[string]bool
	var err error
	switch {
	case ev.Kind == domain.EventProjectDeleted: // reaches every subscriber, whatever the table says now
	case len(subs) == 1 && subs[0].recentlyChecked(ev):
		exists, member = true, map[string]bool{subs[0].viewer: true}
	default:
		exists, member, err = h.cfg.Store.Membership(d.Shared.Ctx, ev.ProjectID, viewers)
		if err == nil && len(subs) == 1 {
			subs[0].noteCheck(exists && member[subs[0].viewer])
		}
	}
	if err != nil {
		h.cfg.Log.Warn("live: checking an event's recipients failed; their subscriptions end", "err", err)
		for _, s := range subs {
			s.end(ErrUnchecked)
		}
		return
	}
	// Who sees it: the members (policy.SeesProject, through Membership;
	// none when it deletes the project), and whoever it is the final event
	// of (policy.FinalEvent).
	to := make([]Recipient, 0, len(subs))
	for _, s := range subs {
		sees := exists && member[s.viewer]
		switch {
		case !sees && !policy.FinalEvent(s.viewer, ev):
			s.end(ErrGone)
		case s.take(d):
			to = append(to, Recipient{Sub: s, Last: !sees})
		}
	}
	h.mu.Lock()
	recv := h.recv
	h.mu.Unlock()
	if len(to) == 0 || recv == nil {
		return
	}
	recv.Deliver(d, to)
	for _, r := range to {
		if r.Last {
			r.Sub.end(io.EOF)
		}
	}
}

// ErrUnchecked ends subscriptions whose visibility could not be checked
// (the table failed): nothing unchecked is ever delivered.
var ErrUnchecked = &domain.Error{Code: domain.EUNAVAILABLE,
	Message: "the subscription could not be checked and was ended; subscribe again with after: the last cursor received"}

// Subscribers returns how many subscriptions of project this instance
// holds (for tests and metrics).
func (h *Hub) Subscribers(project string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.feeds[project]; f != nil {
		return len(f.subs)
	}
	return 0
}

// EventTimeout returns the bound of one event's reads
// (HubConfig.EventTimeout).
func (h *Hub) EventTimeout() time.Duration { return h.cfg.EventTimeout }

// Buffer returns how many events a subscriber may fall behind before it is
// cut off (HubConfig.Buffer).
func (h *Hub) Buffer() int { return h.cfg.Buffer }
