package live_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// openApp opens an instance (app.App, the server's lifecycle) on the Env's
// store with NATS at url, its background work on (the outbox sweep every
// hour: only the sweep the broker's return starts can publish in time);
// e's handler becomes the instance's.
func openApp(t testing.TB, e *testenv.Env, url string) *app.App {
	t.Helper()
	a := &app.App{Store: e.Store, Auth: e.Auth, Config: app.Config{Live: live.Config{URL: url, Retry: 50 * time.Millisecond}},
		Hooks: app.Hooks{NoListen: true, Background: dynamo.Background{Retry: time.Hour, MinAge: time.Hour, Slow: time.Hour}}}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	e.Handler = a.Handler
	return a
}

const createTask = `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { id } }`

// A server whose NATS is down answers mutations without waiting for it
// (their events wait in the outbox), and once NATS is back publishes them
// at once: the subscriber gets them without waiting for the sweep's
// interval, an hour here.
func TestMutationsDuringAnOutageAnswerAtOnceAndTheirEventsFollowItsEnd(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	e.Store.PublishTimeout = time.Hour // a mutation that waited for NATS would hang
	var tick atomic.Int64              // a clock that moves: the outbox is swept in commit order
	e.Store.Now = func() time.Time { return testenv.Now.Add(time.Duration(tick.Add(1)) * time.Millisecond) }
	n := newNATS(t, true)
	n.start(t)
	app := openApp(t, e, n.url())
	s := subscribe(t, app.Hub, "bob", web, nil)

	n.stop()
	waitState(t, app.Broker, live.StateDisconnected)
	var ids []string
	for i := range 3 {
		var out struct{ CreateTask struct{ ID string } }
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.MustQuery(t, "alice", createTask, map[string]any{"p": web.ID, "t": fmt.Sprint("during the outage ", i)}, &out)
		}()
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatal("a mutation during the outage waited for NATS")
		}
		ids = append(ids, out.CreateTask.ID)
	}
	n.start(t)
	for i, id := range ids {
		d := next(t, s)
		if d.Event.Task == nil || d.Event.Task.ID != id {
			t.Fatalf("event %d after the outage: %+v, want the creation of %s (in commit order)", i, d.Event, id)
		}
	}
}

// BenchmarkAMutationWhileNATSIsDown times createTask on a server whose NATS
// went down (the publish timeout at its default, 3 s): the figure
// of docs/scaling.md, "When NATS is down". Compare with
// BenchmarkAMutationWithNATSUp.
func BenchmarkAMutationWhileNATSIsDown(b *testing.B) {
	e := testenv.New(b)
	web := e.MustSeed(b).Project("Website relaunch")
	n := newNATS(b, true)
	n.start(b)
	app := openApp(b, e, n.url())
	n.stop()
	waitState(b, app.Broker, live.StateDisconnected)
	benchCreate(b, e, web.ID)
}

// BenchmarkAMutationWithNATSUp is BenchmarkAMutationWhileNATSIsDown with
// NATS up.
func BenchmarkAMutationWithNATSUp(b *testing.B) {
	e := testenv.New(b)
	web := e.MustSeed(b).Project("Website relaunch")
	n := newNATS(b, true)
	n.start(b)
	app := openApp(b, e, n.url())
	waitState(b, app.Broker, live.StateReady)
	benchCreate(b, e, web.ID)
}

func benchCreate(b *testing.B, e *testenv.Env, project string) {
	b.ResetTimer()
	for i := range b.N {
		var out struct{ CreateTask struct{ ID string } }
		e.MustQuery(b, "alice", createTask, map[string]any{"p": project, "t": fmt.Sprint("task ", i)}, &out)
	}
}
