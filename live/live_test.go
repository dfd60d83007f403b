package live_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

const wait = 30 * time.Second

// startNATS starts a NATS server with JetStream on a free local port, as
// NATS_URL would name, and returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(wait) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(srv.Shutdown)
	return "nats://" + srv.Addr().(*net.TCPAddr).String()
}

// instance is one server instance's live stack on a shared store.
type instance struct {
	b   *live.Broker
	hub *live.Hub
}

func newInstance(t *testing.T, store *dynamo.Store, url string, hc live.HubConfig) instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := live.Open(ctx, live.Config{URL: url})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	hc.Store = store
	h, err := b.StartHub(ctx, hc)
	if err != nil {
		cancel()
		b.Close()
		t.Fatal(err)
	}
	h.SetReceiver(queues{}) // the tests read what the hub delivers
	t.Cleanup(func() { h.Close(); cancel(); b.Close() })
	return instance{b, h}
}

var n int

func event(p *domain.Project, kind domain.EventKind, subject string) *domain.Event {
	n++
	return &domain.Event{ID: fmt.Sprintf("ev-%d-%s", n, ulid.Make()), Kind: kind, ProjectID: p.ID, SubjectID: subject,
		ActorID: p.OwnerID, At: testenv.Now, Project: p}
}

func mustPublish(t *testing.T, b *live.Broker, ev *domain.Event) {
	t.Helper()
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, s *testSub) *live.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	d, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return d
}

func subscribe(t *testing.T, h *live.Hub, viewer string, p *domain.Project, after *string) *testSub {
	t.Helper()
	h.SetReceiver(queues{}) // the tests read what the hub delivers
	q := newQueue(h.Buffer())
	s, err := h.Subscribe(context.Background(), viewer, p.ID, after, q)
	if err != nil {
		t.Fatalf("subscribing %s to %s: %v", viewer, p.Name, err)
	}
	t.Cleanup(s.Close)
	return &testSub{s, q}
}

func TestAnEventPublishedTwiceIsStoredAndDeliveredOnce(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{})
	web := seed.Project("Website relaunch")
	s := subscribe(t, in.hub, "bob", web, nil)
	first, second := event(web, domain.EventProjectUpdated, web.ID), event(web, domain.EventMemberAdded, "dave")
	mustPublish(t, in.b, first)
	mustPublish(t, in.b, first) // a retry after a lost acknowledgement, or the outbox sweep
	mustPublish(t, in.b, second)
	d1, d2 := next(t, s), next(t, s)
	if d1.Event.ID != first.ID || d2.Event.ID != second.ID || d2.Seq != d1.Seq+1 {
		t.Errorf("got %s@%d then %s@%d, want %s then %s at consecutive sequences", d1.Event.ID, d1.Seq, d2.Event.ID, d2.Seq, first.ID, second.ID)
	}
}

func TestChangesThroughOneInstanceReachSubscribersOfAnother(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	url := startNATS(t)
	a := newInstance(t, e.Store, url, live.HubConfig{})
	b := newInstance(t, e.Store, url, live.HubConfig{})
	web := seed.Project("Website relaunch")
	s := subscribe(t, b.hub, "carol", web, nil)
	var sent []string
	for i := range 5 {
		ev := event(web, domain.EventTaskUpdated, fmt.Sprint(i))
		sent = append(sent, ev.ID)
		mustPublish(t, a.b, ev)
	}
	for i, id := range sent {
		if d := next(t, s); d.Event.ID != id {
			t.Fatalf("event %d on B is %s, want %s (in order)", i, d.Event.ID, id)
		}
	}
}

func TestResumingReplaysEveryLaterEventOnceThenGoesLive(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{Buffer: 1000})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	first := subscribe(t, in.hub, "alice", web, nil)
	for i := range 10 {
		mustPublish(t, in.b, event(web, domain.EventTaskUpdated, fmt.Sprint(i)))
		mustPublish(t, in.b, event(app, domain.EventTaskUpdated, fmt.Sprint(i))) // another project's, interleaved
	}
	var seen []*live.Delivery
	for range 10 {
		seen = append(seen, next(t, first))
	}
	// Resume after the fourth event while more are published: the replay
	// and the live tail meet with nothing missed and nothing repeated.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 40 {
			mustPublish(t, in.b, event(web, domain.EventTaskUpdated, fmt.Sprint(10+i)))
		}
	}()
	resumed := subscribe(t, in.hub, "bob", web, &seen[3].Cursor)
	wg.Wait()
	for range 40 {
		seen = append(seen, next(t, first))
	}
	for i, want := range seen[4:] {
		d := next(t, resumed)
		if d.Seq != want.Seq || d.Event.ID != want.Event.ID {
			t.Fatalf("resumed event %d is %s@%d, want %s@%d", i, d.Event.ID, d.Seq, want.Event.ID, want.Seq)
		}
	}
	// Live from here: the next event comes once.
	last := event(web, domain.EventProjectUpdated, web.ID)
	mustPublish(t, in.b, last)
	if d := next(t, resumed); d.Event.ID != last.ID {
		t.Errorf("after the replay got %s, want the live %s", d.Event.ID, last.ID)
	}
}

func TestCursorsAreCheckedAgainstTheProjectAndTheStream(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	url := startNATS(t)
	in := newInstance(t, e.Store, url, live.HubConfig{})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	s := subscribe(t, in.hub, "alice", web, nil)
	for range 3 {
		mustPublish(t, in.b, event(web, domain.EventProjectUpdated, web.ID))
	}
	d1, d2, d3 := next(t, s), next(t, s), next(t, s)
	valid := d3.Cursor
	if _, err := in.hub.Subscribe(context.Background(), "alice", web.ID, &valid, newQueue(0)); err != nil {
		t.Fatalf("a current cursor: %v", err)
	}
	// Purge what precedes the third event, as max-age would: the first
	// cursor is then older than what the stream keeps.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(context.Background(), live.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), jetstream.WithPurgeSequence(d3.Seq)); err != nil {
		t.Fatal(err)
	}
	// The second cursor's own event is gone, but every later one is kept:
	// nothing can be missing.
	if _, err := in.hub.Subscribe(context.Background(), "alice", web.ID, &d2.Cursor, newQueue(0)); err != nil {
		t.Errorf("a cursor whose next event is kept: %v", err)
	}
	for name, c := range map[string]struct {
		project, cursor string
	}{
		"malformed":                      {web.ID, "not-a-cursor"},
		"empty":                          {web.ID, ""},
		"another project's":              {app.ID, valid},
		"beyond the end (the key's own)": {web.ID, in.hub.Cursors().Cursor(web.ID, d3.Seq+1000)},
		"older than what is kept":        {web.ID, d1.Cursor},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := in.hub.Subscribe(context.Background(), "alice", c.project, &c.cursor, newQueue(0))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != domain.EINVALID {
				t.Errorf("got %v, want EINVALID", err)
			}
		})
	}
}

func TestAReplayLongerThanTheBufferWaitsForTheSubscriber(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	const buffer = 4
	in := newInstance(t, e.Store, "", live.HubConfig{Buffer: buffer})
	web := seed.Project("Website relaunch")
	first := subscribe(t, in.hub, "alice", web, nil)
	var seen []*live.Delivery
	for i := range 5 * buffer {
		mustPublish(t, in.b, event(web, domain.EventTaskUpdated, fmt.Sprint(i)))
		seen = append(seen, next(t, first)) // read at once: never behind
	}
	resumed := subscribe(t, in.hub, "bob", web, &seen[0].Cursor)
	// The replay fills the queue, then waits: a cut-off would empty it and
	// end the subscription.
	deadline := time.Now().Add(wait)
	for resumed.Queued() < buffer {
		if time.Now().After(deadline) {
			t.Fatalf("the resumed subscription holds %d events, want its buffer full (%d)", resumed.Queued(), buffer)
		}
		time.Sleep(time.Millisecond)
	}
	for i, want := range seen[1:] {
		d := next(t, resumed)
		if d.Seq != want.Seq || d.Event.ID != want.Event.ID {
			t.Fatalf("replayed event %d is %s@%d, want %s@%d", i, d.Event.ID, d.Seq, want.Event.ID, want.Seq)
		}
	}
	last := event(web, domain.EventProjectUpdated, web.ID)
	mustPublish(t, in.b, last)
	if d := next(t, resumed); d.Event.ID != last.ID {
		t.Errorf("after the replay got %s, want the live %s", d.Event.ID, last.ID)
	}
}

func TestASlowSubscriberIsCutOffWithoutHarmToOthers(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{Buffer: 2})
	web := seed.Project("Website relaunch")
	slow := subscribe(t, in.hub, "bob", web, nil)
	fast := subscribe(t, in.hub, "carol", web, nil)
	for i := range 5 {
		ev := event(web, domain.EventTaskUpdated, fmt.Sprint(i))
		mustPublish(t, in.b, ev)
		if d := next(t, fast); d.Event.ID != ev.ID {
			t.Fatalf("the fast subscriber got %s, want %s", d.Event.ID, ev.ID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := slow.Next(ctx); !errors.Is(err, live.ErrSlow) {
		t.Errorf("the slow subscriber got %v, want ErrSlow", err)
	}
	if got := in.hub.Subscribers(web.ID); got != 1 {
		t.Errorf("%d subscribers left, want the fast one", got)
	}
}

func TestRetentionBelow24HoursIsRefused(t *testing.T) {
	if _, err := live.Open(context.Background(), live.Config{MaxAge: 23 * time.Hour}); err == nil {
		t.Fatal("a 23h retention was accepted")
	}
}
