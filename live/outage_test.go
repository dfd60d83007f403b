package live_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// natsServer is a NATS server on a port of its own that a test stops and
// starts again, on the same port and storage: an outage.
type natsServer struct {
	port int
	dir  string
	js   bool
	srv  *server.Server
}

// newNATS returns a NATS server (with JetStream when js) that is not
// started yet, on a port that was free a moment ago.
func newNATS(t testing.TB, js bool) *natsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := &natsServer{port: port, dir: t.TempDir(), js: js}
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

func (n *natsServer) start(t testing.TB) {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: n.port, JetStream: n.js, StoreDir: n.dir,
		NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(wait) {
		t.Fatal("NATS did not start")
	}
	n.srv = srv
}

func (n *natsServer) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

// openBroker opens a broker on url, logging to the returned buffer, with a
// retry of 50 ms.
func openBroker(t *testing.T, url string) (*live.Broker, *testenv.LogBuffer) {
	t.Helper()
	logs := &testenv.LogBuffer{}
	b, err := live.Open(context.Background(), live.Config{URL: url, Retry: 50 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("Open with NATS %s: %v", url, err)
	}
	t.Cleanup(b.Close)
	return b, logs
}

// waitState waits for the broker to be in state s.
func waitState(t testing.TB, b *live.Broker, s live.State) {
	t.Helper()
	for deadline := time.Now().Add(wait); b.State() != s; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker is %s (%s), want %s", b.State(), b.Health().Error, s)
		}
	}
}

// mustFailDown checks that a publication fails at once, the broker knowing
// it is down: its error wraps dynamo.ErrSinkDown, which only the broker's
// own check returns, before any request to NATS.
func mustFailDown(t *testing.T, b *live.Broker, ev *domain.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // a wait on NATS would show as a hang
	defer cancel()
	if err := b.Publish(ctx, ev); !errors.Is(err, dynamo.ErrSinkDown) {
		t.Fatalf("publishing while the broker is %s: %v, want an error wrapping dynamo.ErrSinkDown", b.State(), err)
	}
}

// count counts the log lines holding msg.
func count(logs *testenv.LogBuffer, msg string) int { return strings.Count(logs.String(), msg) }

func TestABrokerStartsWithNATSDownAndIsReadyOnceItAnswers(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	n := newNATS(t, true)
	b, logs := openBroker(t, n.url())
	if h := b.Health(); h.State != live.StateConnecting || h.Ready() || h.Error == "" {
		t.Fatalf("with NATS down, Open returned a broker whose health is %+v, want connecting with the error", h)
	}
	readied := make(chan struct{}, 4)
	b.OnReady(func() { readied <- struct{}{} })
	mustFailDown(t, b, event(web, domain.EventProjectUpdated, web.ID))
	time.Sleep(200 * time.Millisecond) // several retries
	n.start(t)
	select {
	case <-readied:
	case <-time.After(wait):
		t.Fatalf("the broker is %s after NATS started, want ready", b.State())
	}
	mustPublish(t, b, event(web, domain.EventProjectUpdated, web.ID))
	if c, r := count(logs, "NATS cannot be reached"), count(logs, "ready again"); c != 1 || r != 1 {
		t.Fatalf("logged %d \"cannot be reached\" and %d \"ready again\", want one each:\n%s", c, r, logs)
	}
}

func TestABrokerLogsAnOutageOnceAndPublishesAgainAfterIt(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	n := newNATS(t, true)
	n.start(t)
	b, logs := openBroker(t, n.url())
	hub, err := b.StartHub(context.Background(), live.HubConfig{Store: e.Store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	s := subscribe(t, hub, "bob", web, nil)
	before := event(web, domain.EventTaskUpdated, "before")
	mustPublish(t, b, before)

	n.stop()
	waitState(t, b, live.StateDisconnected)
	mustFailDown(t, b, event(web, domain.EventTaskUpdated, "during"))
	if _, err := hub.Subscribe(context.Background(), "bob", web.ID, nil, newQueue(0)); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("subscribing during the outage: %v, want UNAVAILABLE at once", err)
	}
	if h := b.Health(); h.Ready() || !strings.Contains(h.Detail, "outbox") {
		t.Fatalf("health during the outage: %+v", h)
	}
	time.Sleep(300 * time.Millisecond) // nats.go's reconnect attempts fail meanwhile: nothing more is logged
	n.start(t)
	waitState(t, b, live.StateReady)
	after := event(web, domain.EventTaskUpdated, "after")
	mustPublish(t, b, after)
	for _, want := range []*domain.Event{before, after} {
		if d := next(t, s); d.Event.ID != want.ID {
			t.Fatalf("the subscriber got %s, want %s (the subscription rides out the outage)", d.Event.ID, want.ID)
		}
	}
	if l, r := count(logs, "lost the connection to NATS"), count(logs, "ready again"); l != 1 || r != 1 {
		t.Fatalf("logged %d \"lost the connection\" and %d \"ready again\", want one each:\n%s", l, r, logs)
	}
}

func TestNATSWithoutJetStreamIsNamedWithAHint(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	n := newNATS(t, false)
	n.start(t)
	b, logs := openBroker(t, n.url())
	waitState(t, b, live.StateNoJetStream)
	h := b.Health()
	if !strings.Contains(h.Hint, "nats-server with -js") || !strings.Contains(h.Detail, "no JetStream") {
		t.Fatalf("health on NATS without JetStream: %+v", h)
	}
	mustFailDown(t, b, event(web, domain.EventProjectUpdated, web.ID))
	time.Sleep(300 * time.Millisecond) // a few retries: logged once
	if c := count(logs, "NATS has no JetStream"); c != 1 || !strings.Contains(logs.String(), "-js") {
		t.Fatalf("logged \"NATS has no JetStream\" %d times, want once with the hint:\n%s", c, logs)
	}
}

func TestAStreamThatStopsAcknowledgingIsProbedAndMadeAgain(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	n := newNATS(t, true)
	n.start(t)
	b, logs := openBroker(t, n.url())
	readied := make(chan struct{}, 4)
	b.OnReady(func() { readied <- struct{}{} })
	<-readied // ready already: OnReady ran it at once
	// Someone deletes the stream: publications get no acknowledgement.
	nc, err := nats.Connect(n.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(context.Background(), live.StreamName); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := b.Publish(ctx, event(web, domain.EventProjectUpdated, web.ID)); err == nil || errors.Is(err, dynamo.ErrSinkDown) {
		t.Fatalf("the first publication without the stream: %v, want a failure of its own", err)
	}
	select { // the loop makes the stream again
	case <-readied:
	case <-time.After(wait):
		t.Fatalf("the broker is %s, want ready again", b.State())
	}
	mustPublish(t, b, event(web, domain.EventProjectUpdated, web.ID))
	if u := count(logs, "did not acknowledge"); u != 1 {
		t.Fatalf("logged \"did not acknowledge\" %d times, want once:\n%s", u, logs)
	}
}
