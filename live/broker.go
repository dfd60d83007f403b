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
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/domain"
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
}

// Broker publishes events to the stream and reads them back. It implements
// domain.EventSink.
type Broker struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	srv    *server.Server // the embedded server, or nil
	tmp    string         // the embedded server's scratch directory, removed at Close
	log    *slog.Logger
}

var _ domain.EventSink = (*Broker)(nil)

// Open connects to the NATS server c names (or starts the embedded one) and
// creates the stream, or updates its retention and duplicate window.
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
	b := &Broker{log: c.Log}
	storage := jetstream.FileStorage
	opts := []nats.Option{nats.Name(c.Name), nats.MaxReconnects(-1)}
	url := c.URL
	if url == "" {
		dir := c.StoreDir
		if dir == "" {
			storage = jetstream.MemoryStorage
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
		opts = append(opts, nats.InProcessServer(srv))
		url = nats.DefaultURL // not dialled: the in-process server answers
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	b.nc = nc
	if b.js, err = jetstream.New(nc); err != nil {
		b.Close()
		return nil, fmt.Errorf("NATS JetStream: %w", err)
	}
	b.stream, err = b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        StreamName,
		Description: "taskgraph: committed changes, one subject per project",
		Subjects:    []string{SubjectPrefix + "*"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      c.MaxAge,
		Duplicates:  c.DuplicateWindow,
		Storage:     storage,
		AllowDirect: true,
		Replicas:    max(c.Replicas, 1),
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("creating the JetStream stream %s: %w", StreamName, err)
	}
	return b, nil
}

// Embedded reports whether the broker runs its own in-process NATS server.
func (b *Broker) Embedded() bool { return b.srv != nil }

// Close disconnects and stops the embedded server.
func (b *Broker) Close() {
	if b.nc != nil {
		b.nc.Close()
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
// duplicate window is acknowledged and dropped.
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
	_, err = b.js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: data},
		jetstream.WithMsgID(ev.ID), jetstream.WithExpectStream(StreamName))
	if err != nil {
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the event broker did not record the event", Err: err}
	}
	return nil
}
