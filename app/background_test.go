package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// simClock is simulated time for an App's store (Store.Now) and its
// background work (dynamo.Background.Clock): it moves only when the test
// fires the timer the background work waits on, and only to that timer's
// time. The work never waits on anything else while idle, so each timer
// request follows all the calls of the previous wake-up.
type simClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan simWait
}

type simWait struct {
	at time.Time
	ch chan time.Time
}

func newSimClock(t time.Time) *simClock {
	return &simClock{now: t, waits: make(chan simWait, 16)}
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.waits <- simWait{at: c.Now().Add(d), ch: ch}
	return ch
}

// next returns the timer the background work waits on now: the latest
// request, once it made one (an earlier request it stopped waiting on is
// dropped).
func (c *simClock) next(tb testing.TB) simWait {
	tb.Helper()
	select {
	case w := <-c.waits:
		for {
			select {
			case w = <-c.waits:
			default:
				return w
			}
		}
	case <-time.After(time.Minute): // a hang, not a timing assertion
		tb.Fatal("the background work asked for no timer")
		return simWait{}
	}
}

// fire moves the clock to w's time and wakes the work waiting on it; it
// returns the timer the work waits on next, once it does.
func (c *simClock) fire(tb testing.TB, w simWait) simWait {
	tb.Helper()
	c.mu.Lock()
	if w.at.After(c.now) {
		c.now = w.at
	}
	c.mu.Unlock()
	w.ch <- w.at
	return c.next(tb)
}

// openIdleApp opens an App on e's store with its background work on the
// simulated clock c, and returns it with the timer its work waits on once
// the start's sweeps are done (after which e.Calls counts from zero).
func openIdleApp(t *testing.T, e *testenv.Env, c *simClock) (*app.App, simWait) {
	t.Helper()
	e.Store.Now = c.Now
	a := e.App(pipeline.Options{})
	a.Hooks.NoBackground = false
	a.Hooks.Background = dynamo.Background{Clock: c}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	<-a.Broker.Ready()
	w := c.next(t)
	e.Calls.Reset()
	return a, w
}

// An idle instance makes one DynamoDB call a simulated minute: its slow
// sweep's turn (an outbox shard, the cleanup jobs or an expiry
// partition), and nothing else: no outbox sweep of 16 Queries every 10 s,
// no cleanup worker's 17 calls a minute (113 calls in 60 s before). Counted
// through the SDK middleware, over an hour that moves only when the
// background work's timer fires.
func TestAnIdleInstanceMakesOneCallAMinute(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	c := newSimClock(testenv.Now)
	_, w := openIdleApp(t, e, c)
	start := c.Now()
	perMinute := make([]int, 61) // the hour's minutes 1 to 60: the first turn is a minute in
	for {
		minute := int(w.at.Sub(start) / time.Minute)
		if minute >= len(perMinute) {
			break
		}
		before := e.Calls.Total()
		w = c.fire(t, w)
		perMinute[minute] += e.Calls.Total() - before
	}
	total := 0
	for m, n := range perMinute {
		total += n
		if n > 1 {
			t.Errorf("minute %d: %d DynamoDB calls, want at most 1 (%v)", m, n, e.Calls.ByOp())
		}
	}
	// Every minute's call is the slow sweep's: it runs, one Query a turn.
	if got := e.Calls.ByOp(); total != 60 || got["Query"] != total {
		t.Errorf("%d calls in an idle hour (%v), want the slow sweep's Query a minute", total, got)
	}
}

// failingSink is the event sink of an instance that stops between its
// commit and the publication: the event stays in the outbox.
type failingSink struct{}

func (failingSink) Publish(context.Context, *domain.Event) error {
	return errors.New("the instance stopped")
}

// An event that a stopped instance left in the outbox is published by an
// idle instance's slow sweep within dynamo.Background.LeftoverBound of its
// commit (33 minutes and MinAge), though that instance owes nothing of its
// own: its outbox item is gone (published, then deleted) by then.
func TestAnEventLeftByAStoppedInstanceIsPublishedWithinTheBound(t *testing.T) {
	e := testenv.New(t)
	web := e.MustSeed(t).Project("Website relaunch")
	c := newSimClock(testenv.Now)
	_, w := openIdleApp(t, e, c)

	stopped := dynamo.New(e.Client, e.Store.Table())
	stopped.Now, stopped.Log, stopped.Events = c.Now, e.Store.Log, failingSink{}
	committed := c.Now()
	if _, err := stopped.CreateTask(context.Background(), "alice", domain.TaskInput{ProjectID: web.ID, Title: "left behind"}); err != nil {
		t.Fatal(err)
	}
	if n := outboxItems(t, e); n != 1 {
		t.Fatalf("%d outbox items after the stopped instance's commit, want 1", n)
	}
	bound := dynamo.Background{}.LeftoverBound()
	for outboxItems(t, e) > 0 {
		if w.at.Sub(committed) > bound {
			t.Fatalf("the event is still in the outbox %s after its commit; the bound is %s", w.at.Sub(committed), bound)
		}
		w = c.fire(t, w)
	}
	t.Logf("published %s after its commit (bound %s)", c.Now().Sub(committed), bound)
}

// outboxItems counts the outbox's items in e's table.
func outboxItems(tb testing.TB, e *testenv.Env) int {
	tb.Helper()
	n := 0
	for _, it := range e.Items(tb) {
		if pk, _ := it["PK"].(string); strings.HasPrefix(pk, "OUTBOX#") {
			n++
		}
	}
	return n
}
