package bench

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDoer answers every request at once with its URL path as the body.
type fakeDoer struct{ calls atomic.Int64 }

func (f *fakeDoer) Do(r *http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(r.URL.Path)), Request: r}, nil
}

// call sends one request through the gate and returns its answer's body.
func call(tb testing.TB, c *http.Client, path string) string {
	tb.Helper()
	res, err := c.Get("http://gate.test" + path)
	if err != nil {
		tb.Error(err)
		return ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Error(err)
	}
	return string(b)
}

// fakeClock is a clock that moves only on Advance, so the quiet window's
// outcome depends on the order of events and never on the machine's speed.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !c.now.Before(t) {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{t, ch})
	return ch
}

// Advance moves the clock by d and fires the timers it passes.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if c.now.Before(tm.at) {
			kept = append(kept, tm)
			continue
		}
		tm.ch <- c.now
	}
	c.timers = kept
}

// held returns how many calls the gate holds now.
func (g *Gate) heldCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// waitFor waits until cond holds: the calls it waits for are on their way
// and arrive whatever the load; only a hung gate makes it fail.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestGate(t *testing.T) {
	const quiet = 20 * time.Millisecond
	type gated struct {
		c   *http.Client
		g   *Gate
		clk *fakeClock
	}
	// holding waits until the gate holds n calls.
	holding := func(t *testing.T, e gated, n int) {
		t.Helper()
		waitFor(t, fmt.Sprintf("the gate holds %d calls", n), func() bool { return e.g.heldCount() == n })
	}
	tests := []struct {
		name         string
		on           bool
		run          func(t *testing.T, e gated)
		wantReleases int64
		wantCalls    int64
	}{
		{"calls made together are one round trip", true, func(t *testing.T, e gated) {
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() { call(t, e.c, "/x") })
			}
			holding(t, e, 20)
			e.clk.Advance(quiet)
			wg.Wait()
		}, 1, 20},
		{"calls a little apart, within the quiet window, are one round trip", true, func(t *testing.T, e gated) {
			var wg sync.WaitGroup
			for i := range 3 {
				wg.Go(func() { call(t, e.c, "/x") })
				holding(t, e, i+1)
				e.clk.Advance(quiet * 4 / 5) // the window counts from the last call
			}
			e.clk.Advance(quiet)
			wg.Wait()
		}, 1, 3},
		{"a call that waits for an answer is a round trip of its own", true, func(t *testing.T, e gated) {
			for range 3 {
				done := make(chan struct{})
				go func() { defer close(done); call(t, e.c, "/x") }()
				holding(t, e, 1)
				e.clk.Advance(quiet)
				<-done
			}
		}, 3, 3},
		{"two levels of fan-out are two round trips", true, func(t *testing.T, e gated) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					call(t, e.c, "/level1")
					call(t, e.c, "/level2")
				})
			}
			holding(t, e, 4)
			e.clk.Advance(quiet)
			waitFor(t, "the second level is held", func() bool { return e.g.Releases() == 1 && e.g.heldCount() == 4 })
			e.clk.Advance(quiet)
			wg.Wait()
		}, 2, 8},
		{"every caller gets its own answer", true, func(t *testing.T, e gated) {
			var wg sync.WaitGroup
			for _, p := range []string{"/a", "/b", "/c"} {
				wg.Go(func() {
					if got := call(t, e.c, p); got != p {
						t.Errorf("answer to %s is %q", p, got)
					}
				})
			}
			holding(t, e, 3)
			e.clk.Advance(quiet)
			wg.Wait()
		}, 1, 3},
		{"off, calls pass straight through and no round trip is counted", false, func(t *testing.T, e gated) {
			for range 3 {
				call(t, e.c, "/x")
			}
		}, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDoer{}
			clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
			g := newGate(f, quiet, clk)
			defer g.Close()
			g.SetOn(tt.on)
			tt.run(t, gated{g.Client(), g, clk})
			if got := g.Releases(); got != tt.wantReleases {
				t.Errorf("releases = %d (calls per release %v), want %d", got, g.Sizes(0), tt.wantReleases)
			}
			if got := f.calls.Load(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}
