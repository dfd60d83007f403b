package live

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// How the broker rides out its NATS server. nats.go keeps the connection:
// it retries a server that cannot be reached at start (RetryOnFailedConnect)
// and reconnects after a drop, forever, and tells the broker through its
// handlers, which log each disconnect and each reconnect once. The broker
// keeps the rest: whether the stream exists (created at the first connect
// and checked again after every reconnect: a NATS server restarted without
// its storage has lost it), and whether JetStream acknowledges. A
// background loop retries what is missing every Config.Retry. While the
// broker is not ready, Publish fails at once and the event waits in the
// store's outbox; when it is ready again the OnReady callbacks run (the
// server's: the hub's consumer, then a sweep of the outbox).

// State is what the broker knows of NATS.
type State string

// The broker's states.
const (
	// StateReady: connected, the stream exists and acknowledges.
	StateReady State = "ready"
	// StateConnecting: NATS has not answered since the start.
	StateConnecting State = "connecting"
	// StateDisconnected: the connection dropped; nats.go reconnects.
	StateDisconnected State = "disconnected"
	// StateNoStream: connected, the stream not (yet) created or checked.
	StateNoStream State = "no-stream"
	// StateNoJetStream: connected to a NATS server without JetStream.
	StateNoJetStream State = "no-jetstream"
	// StateUnacknowledged: connected, but JetStream did not acknowledge a
	// publication (a cluster electing a stream leader, a server
	// overloaded); the stream is probed until it answers.
	StateUnacknowledged State = "unacknowledged"
	// StateClosed: the broker was closed.
	StateClosed State = "closed"
)

// HintNoJetStream is said, in the log and by Health, of a NATS server
// without JetStream.
const HintNoJetStream = "this NATS server has no JetStream: start nats-server with -js (or jetstream {} in its configuration), on every node of a cluster; docs/scaling.md"

// Health is the broker's state, for /healthz and the tests. Its JSON form
// holds fixed words only (the state, since when, what it means, what to
// do): /healthz answers anyone, so the error and the server's address are
// for the log and the tests, not the body.
type Health struct {
	State State `json:"state"`
	// Since is when the state began.
	Since time.Time `json:"since"`
	// Detail says what the state means for the server's users; Hint what
	// to do about it, where something is to be done.
	Detail string `json:"detail"`
	Hint   string `json:"hint,omitempty"`
	// NATS is the server the broker uses: "embedded", or NATS_URL without
	// its credentials. Error says why the broker is not ready.
	NATS  string `json:"-"`
	Error string `json:"-"`
}

// details says what each state means.
var details = map[State]string{
	StateReady:          "events are published as they commit",
	StateConnecting:     "NATS has not answered since the start: events wait in the outbox, subscriptions are refused; retrying",
	StateDisconnected:   "the connection to NATS dropped: events wait in the outbox, subscriptions are refused; reconnecting",
	StateNoStream:       "the event stream cannot be created or checked: events wait in the outbox, subscriptions are refused; retrying",
	StateNoJetStream:    "NATS has no JetStream: events wait in the outbox, subscriptions are refused; retrying",
	StateUnacknowledged: "JetStream did not acknowledge an event: events wait in the outbox, subscriptions are refused; probing",
	StateClosed:         "the server is stopping",
}

// Ready reports whether events are published as they commit.
func (h Health) Ready() bool { return h.State == StateReady }

// Health returns the broker's state.
func (b *Broker) Health() Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := Health{State: b.state, NATS: b.url, Since: b.since.UTC(), Detail: details[b.state]}
	if b.state != StateReady && b.err != nil {
		h.Error = b.err.Error()
	}
	if b.state == StateNoJetStream {
		h.Hint = HintNoJetStream
	}
	return h
}

// State returns the broker's state.
func (b *Broker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// OnReady adds f to what runs every time the broker becomes ready (after
// the start, a reconnect, a stall), in the order added, on the broker's
// loop; if it is ready now, f runs at once too.
func (b *Broker) OnReady(f func()) {
	b.mu.Lock()
	b.onReady = append(b.onReady, f)
	ready := b.state == StateReady
	b.mu.Unlock()
	if ready {
		f()
	}
}

// Ready is closed once the stream first exists.
func (b *Broker) Ready() <-chan struct{} { return b.ready }

// connOptions are the connection's options: reconnect forever, retry a
// server unreachable at start (retry), and tell the broker.
func (b *Broker) connOptions(name string, retry bool) []nats.Option {
	return []nats.Option{
		nats.Name(name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(retry),
		nats.ReconnectWait(time.Second), nats.ReconnectJitter(500*time.Millisecond, time.Second),
		nats.ConnectHandler(func(*nats.Conn) { b.connected() }),
		nats.ReconnectHandler(func(*nats.Conn) { b.connected() }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err == nil {
				err = errors.New("the connection to NATS was closed")
			}
			b.setState(StateDisconnected, err)
		}),
		nats.ClosedHandler(func(*nats.Conn) {
			b.setState(StateClosed, errors.New("the broker is closed"))
			b.closedOnce.Do(func() { close(b.closed) })
		}),
	}
}

// connected notes a connection made, at the start or again: the stream is
// to be checked (the loop does it at once).
func (b *Broker) connected() {
	b.setState(StateNoStream, errChecking)
	b.wake()
}

func (b *Broker) wake() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// setState moves the broker to s, logging the change once: a state
// entered again with the same error says nothing. Ready runs the OnReady
// callbacks (outside the lock).
func (b *Broker) setState(s State, err error) {
	b.mu.Lock()
	prev := b.state
	if prev == StateClosed {
		b.mu.Unlock()
		return
	}
	if prev == s && !(s == StateNoStream && b.err == errChecking && err != errChecking) {
		b.err = err // the same state again: said already
		b.mu.Unlock()
		return
	}
	now := time.Now()
	if prev != s {
		b.since = now
	}
	if prev == StateReady {
		b.down = now
	}
	b.state, b.err = s, err
	downFor, warned := now.Sub(b.down), b.warned
	var callbacks []func()
	if s == StateReady {
		b.warned = false
		callbacks = append(callbacks, b.onReady...)
		select {
		case <-b.ready:
		default:
			close(b.ready)
		}
	} else if s != StateNoStream || err != errChecking {
		b.warned = true
	}
	b.mu.Unlock()
	b.logChange(prev, s, err, downFor, warned)
	for _, f := range callbacks {
		f()
	}
}

// errChecking is the broker's reason while it checks the stream after a
// connect: no failure, and not logged.
var errChecking = errors.New("checking the stream")

// logChange logs a change of state: each disconnect, each return to ready
// after a problem (with how long it lasted) and each new failure once.
func (b *Broker) logChange(prev, s State, err error, downFor time.Duration, warned bool) {
	log := b.log.With("nats", b.url)
	switch s {
	case StateReady:
		if warned {
			log.Info("the event broker is ready again: events are published as they commit, and those left in the outbox now",
				"stream", StreamName, "down", downFor.Round(time.Millisecond))
		}
	case StateDisconnected:
		log.Warn("lost the connection to NATS: events wait in the outbox, and subscriptions are refused, until it is back (reconnecting in the background)", "err", err)
	case StateConnecting:
		log.Warn("NATS cannot be reached: serving without it, events waiting in the outbox, until it answers (retrying in the background)", "err", err)
	case StateNoStream:
		if err != errChecking {
			log.Warn("the JetStream stream cannot be created or checked; retrying", "stream", StreamName, "err", err)
		}
	case StateNoJetStream:
		log.Error("NATS has no JetStream: live updates are off until it has (retrying)", "hint", HintNoJetStream, "err", err)
	case StateUnacknowledged:
		log.Warn("JetStream did not acknowledge an event: events wait in the outbox until the stream answers (probing it)", "err", err)
	}
}

// ensureStream creates the stream, or updates its settings, and makes the
// broker ready; on failure it says why (StateNoJetStream, StateNoStream).
func (b *Broker) ensureStream(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := b.js.CreateOrUpdateStream(ctx, b.cfg)
	switch {
	case err == nil:
		b.mu.Lock()
		b.stream = st
		b.mu.Unlock()
		b.setState(StateReady, nil)
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrNoResponders):
		b.setState(StateNoJetStream, err)
	case !b.connectedNow():
	default:
		b.setState(StateNoStream, err)
	}
}

func (b *Broker) connectedNow() bool {
	b.mu.Lock()
	nc := b.nc
	b.mu.Unlock()
	return nc != nil && nc.IsConnected()
}

// unacknowledged notes a publication JetStream did not acknowledge. A
// refusal that says the stream is there (a wrong expected stream, a
// message too large) is not an outage.
func (b *Broker) unacknowledged(err error) {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return
	}
	if !b.connectedNow() {
		return // the disconnect handler says so
	}
	b.setState(StateUnacknowledged, err)
	b.wake()
}

// startLoop starts the loop that retries what the broker misses: the
// stream (created or checked after each connect), a probe of a stream that
// did not acknowledge.
func (b *Broker) startLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	b.stopLoop, b.loopDone = cancel, make(chan struct{})
	go func() {
		defer close(b.loopDone)
		t := time.NewTicker(b.retry)
		defer t.Stop()
		for {
			switch b.State() {
			case StateNoStream, StateNoJetStream, StateUnacknowledged:
				// CreateOrUpdateStream is idempotent, and answers once the
				// stream has a leader: it probes a stream that did not
				// acknowledge, and makes it again if it was lost.
				b.ensureStream(ctx)
			}
			select {
			case <-ctx.Done():
				return
			case <-b.poke:
			case <-t.C:
			}
		}
	}()
}

// redactURL drops the credentials from a NATS URL (or a list of them), for
// the logs.
func redactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = nil
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
