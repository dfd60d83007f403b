// Package live carries the events of committed changes (domain.Event) from
// the instance that made them to every instance's subscribers, through NATS
// JetStream: one stream, one subject per project, max-age retention for
// replay (docs/live.md). The Broker publishes (it is the store's
// domain.EventSink); the Hub fans an instance's share of the stream out to
// its local subscribers, checking visibility on every event.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The stream and its subjects.
const (
	// StreamName is the JetStream stream of every project's events.
	StreamName = "TASKGRAPH_EVENTS"
	// SubjectPrefix starts each project's subject; the project's ULID ends it.
	SubjectPrefix = "taskgraph.events.project."
)

// Retention defaults and bounds.
const (
	// DefaultMaxAge is how long the stream keeps an event by default.
	DefaultMaxAge = 48 * time.Hour
	// MinMaxAge is the shortest retention accepted: the contract promises
	// clients at least 24 hours of replay.
	MinMaxAge = 24 * time.Hour
	// DefaultDuplicateWindow is how long JetStream remembers a message id
	// to drop a second publication of the same event. It must exceed the
	// longest time between two publications of one event: the mutation's
	// own attempt and the outbox sweeper's (its minimum age plus its
	// interval, a few minutes at most); see docs/live.md.
	DefaultDuplicateWindow = 15 * time.Minute
)

// Config configures a Broker.
type Config struct {
	// URL names a NATS server or cluster with JetStream (NATS_URL); empty
	// starts an embedded server in-process, with no port opened.
	URL string
	// StoreDir is where the embedded server keeps the stream on disk;
	// empty keeps it in memory (it then lives as long as the process).
	// Ignored with URL.
	StoreDir string
	// MaxAge is the stream's retention; 0 means DefaultMaxAge, less than
	// MinMaxAge is refused.
	MaxAge time.Duration
	// DuplicateWindow is the stream's deduplication window; 0 means
	// DefaultDuplicateWindow.
	DuplicateWindow time.Duration
	// Replicas is the stream's replication factor on a NATS cluster; 0
	// means 1.
	Replicas int
	// Name names the connection (in the NATS server's monitoring).
	Name string
	Log  *slog.Logger
	// Retry is how often the broker tries again, while NATS is connected
	// but the stream cannot be created or does not acknowledge; 0 means
	// DefaultRetry.
	Retry time.Duration
}

// DefaultRetry is how often a broker that is connected but has no usable
// stream tries again (Config.Retry).
const DefaultRetry = time.Second

// Broker publishes events to the stream and reads them back. It implements
// domain.EventSink. It rides out its NATS server (see conn.go): Open
// returns even when NATS is unreachable, and the broker connects, creates
// the stream and reconnects in the background; meanwhile Publish fails at
// once (the event waits in the store's outbox) and Health says why.
type Broker struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	srv      *server.Server // the embedded server, or nil
	tmp      string         // the embedded server's scratch directory, removed at Close
	log      *slog.Logger
	cfg      jetstream.StreamConfig
	url      string // for the logs and Health: the URL without credentials
	retry    time.Duration
	stopLoop context.CancelFunc
	loopDone chan struct{}
	poke     chan struct{} // wakes the background loop
	// closed is closed by the connection's closed handler, its last
	// callback: Close waits for it, so that no callback of NATS's runs
	// (and logs) after Close returns.
	closed     chan struct{}
	closedOnce sync.Once

	mu      sync.Mutex
	state   State
	since   time.Time // when state began
	down    time.Time // when the broker last stopped being ready
	err     error     // why it is not ready
	warned  bool      // a problem was logged since the broker was last ready
	stream  jetstream.Stream
	ready   chan struct{} // closed once the stream first exists
	onReady []func()      // called, in order, every time the broker becomes ready
}

var _ domain.EventSink = (*Broker)(nil)

// Open connects to the NATS server c names (or starts the embedded one) and
// creates the stream, or updates its retention and duplicate window. With
// a URL it returns even when NATS cannot be reached, or has no JetStream:
// the broker goes on trying in the background (Health, State). A bad
// setting, or an embedded server that does not start, is an error.
func Open(ctx context.Context, c Config) (*Broker, error) {
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxAge < MinMaxAge {
		return nil, fmt.Errorf("the event retention (%s) must be at least %s", c.MaxAge, MinMaxAge)
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = DefaultDuplicateWindow
	}
	if c.DuplicateWindow < 0 || c.DuplicateWindow > c.MaxAge {
		return nil, fmt.Errorf("the duplicate window (%s) must lie between 0 and the retention (%s)", c.DuplicateWindow, c.MaxAge)
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	b := &Broker{log: c.Log, retry: c.Retry, poke: make(chan struct{}, 1), ready: make(chan struct{}), closed: make(chan struct{}),
		since: time.Now(), down: time.Now()}
	if b.retry <= 0 {
		b.retry = DefaultRetry
	}
	b.cfg = jetstream.StreamConfig{
		Name:        StreamName,
		Description: "taskgraph: committed changes, one subject per project",
		Subjects:    []string{SubjectPrefix + "*"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      c.MaxAge,
		Duplicates:  c.DuplicateWindow,
		Storage:     jetstream.FileStorage,
		AllowDirect: true,
		Replicas:    max(c.Replicas, 1),
	}
	if c.URL == "" {
		return b.openEmbedded(ctx, c)
	}
	b.url = redactURL(c.URL)
	nc, err := nats.Connect(c.URL, b.connOptions(c.Name, true)...)
	if err != nil { // a malformed URL; an unreachable server is retried
		return nil, fmt.Errorf("NATS_URL: %w", err)
	}
	if err := b.attach(nc); err != nil {
		return nil, err
	}
	if nc.IsConnected() {
		b.connected()
		b.ensureStream(ctx) // at once: a server that answers is ready when Open returns
	} else {
		b.setState(StateConnecting, nats.ErrNoServers)
	}
	b.startLoop()
	return b, nil
}

// openEmbedded starts the in-process server and the stream on it: neither
// can fail but for a bug or the disk, so either failing is Open's error.
func (b *Broker) openEmbedded(ctx context.Context, c Config) (*Broker, error) {
	b.url = "embedded"
	dir := c.StoreDir
	if dir == "" {
		b.cfg.Storage = jetstream.MemoryStorage
		tmp, err := os.MkdirTemp("", "taskgraph-nats-")
		if err != nil {
			return nil, fmt.Errorf("starting the embedded NATS server: %w", err)
		}
		b.tmp, dir = tmp, tmp
	}
	srv, err := server.NewServer(&server.Options{ServerName: "taskgraph-embedded", DontListen: true, JetStream: true,
		StoreDir: filepath.Clean(dir), NoSigs: true, NoLog: true})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("starting the embedded NATS server: %w", err)
	}
	b.srv = srv
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		b.Close()
		return nil, errors.New("the embedded NATS server did not start")
	}
	opts := append(b.connOptions(c.Name, false), nats.InProcessServer(srv))
	nc, err := nats.Connect(nats.DefaultURL, opts...) // not dialled: the in-process server answers
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
	}
	if err := b.attach(nc); err != nil {
		return nil, err
	}
	b.connected()
	if b.ensureStream(ctx); b.State() != StateReady {
		err := b.Health().Error
		b.Close()
		return nil, fmt.Errorf("creating the JetStream stream %s: %s", StreamName, err)
	}
	b.startLoop()
	return b, nil
}

// attach makes nc the broker's connection.
func (b *Broker) attach(nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		b.Close()
		return fmt.Errorf("NATS JetStream: %w", err)
	}
	b.mu.Lock()
	b.nc, b.js = nc, js
	b.mu.Unlock()
	return nil
}

// Embedded reports whether the broker runs its own in-process NATS server.
func (b *Broker) Embedded() bool { return b.srv != nil }

// Close stops the background loop, disconnects and stops the embedded
// server.
func (b *Broker) Close() {
	if b.stopLoop != nil {
		b.stopLoop()
		<-b.loopDone
		b.stopLoop = nil
	}
	b.mu.Lock()
	nc := b.nc
	b.mu.Unlock()
	if nc != nil {
		nc.Close()
		select { // its callbacks, the closed handler last, have run
		case <-b.closed:
		case <-time.After(5 * time.Second): // (nats.go always calls it; never hang a shutdown on it)
		}
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// subject returns the subject of a project's events.
func subject(projectID string) (string, error) {
	u, err := domain.ParseProjectID(projectID)
	if err != nil {
		return "", err
	}
	return SubjectPrefix + u, nil
}

// Publish records ev in the stream and returns once JetStream acknowledged
// it. The event's ID is the message id: a second publication within the
// duplicate window is acknowledged and dropped. While the broker is not
// ready (State) it fails at once, with an error that wraps
// dynamo.ErrSinkDown, and does not wait for NATS: the event waits in the
// store's outbox. A publication that JetStream does not acknowledge makes
// the broker StateUnacknowledged until a probe of the stream answers.
func (b *Broker) Publish(ctx context.Context, ev *domain.Event) error {
	subj, err := subject(ev.ProjectID)
	if err != nil {
		return err
	}
	if ev.ID == "" {
		return domain.Errorf(domain.EINTERNAL, "an event without an id")
	}
	data, err := encodeEvent(ev)
	if err != nil {
		return err
	}
	if _, err := b.readyStream(); err != nil {
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker is not ready", Err: err}
	}
	_, err = b.js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: data},
		jetstream.WithMsgID(ev.ID), jetstream.WithExpectStream(StreamName))
	if err != nil {
		b.unacknowledged(err)
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not record the event", Err: err}
	}
	return nil
}

// errNotReady is what the broker's reads answer while it is not ready.
func errNotReady(err error) error {
	return &domain.Error{Code: domain.EUNAVAILABLE,
		Message: "live updates are unavailable for now (the event broker is not ready); subscribe again in a moment, with after: the last cursor received",
		Err:     err}
}

// readyStream returns the stream while the broker is ready, else an error
// wrapping dynamo.ErrSinkDown that says why.
func (b *Broker) readyStream() (jetstream.Stream, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != StateReady || b.stream == nil {
		return nil, fmt.Errorf("%w: %s: %v", dynamo.ErrSinkDown, b.state, b.err)
	}
	return b.stream, nil
}
