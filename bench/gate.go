package bench

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgraph/taskgraph/graph/dispatch"
)

// DefaultQuiet is how long the Gate waits after the last new call before it
// releases the calls it holds. Calls of one level of a query leave the
// server spread out by its own work between them (decoding the previous
// level's answers, gqlgen's fan-out, each loader's batch window counted from
// its own first key): a few milliseconds on a busy 2-core machine. A window
// shorter than that spread splits a level into two releases and over-counts;
// a longer one cannot merge calls that depend on each other (a dependent call
// cannot leave before the release that answers its predecessor), it only
// makes gated runs slower.
const DefaultQuiet = 10 * time.Millisecond

// Doer is what the DynamoDB client sends its requests through
// (dynamodb.Options.HTTPClient).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Gate is an http.RoundTripper in front of the DynamoDB client's HTTP client
// that counts sequential round trips. While it is on, it holds every call
// until no new call has arrived for Quiet, then sends all held calls at once,
// waits until every one of them has been answered, and hands all the answers
// back together, as a DynamoDB with unlimited parallelism and a fixed latency
// would. Each such release is one round trip: a call that depends on another
// call's answer can only arrive after that release, so it lands in a later
// one, and calls that do not depend on each other land in the same one as
// long as the server issues them within Quiet of each other.
//
// Run one operation at a time with the gate on and read Releases before and
// after it. While the gate is off, calls pass straight through.
type Gate struct {
	next  Doer
	quiet time.Duration
	clock clock

	on       atomic.Bool
	manual   atomic.Bool
	releases atomic.Int64

	mu    sync.Mutex
	held  []*heldCall
	sizes []int     // calls per release, in order
	last  time.Time // when the last call arrived, or the last release was answered
	wake  chan struct{}
	stop  chan struct{}
	once  sync.Once
}

type heldCall struct {
	req    *http.Request
	resp   *http.Response
	err    error
	done   chan struct{}
	resume func() // dispatch.Park's: the call's work runs again
}

// NewGate returns a gate, off, in front of next. Quiet 0 means DefaultQuiet.
// Close it when done.
func NewGate(next Doer, quiet time.Duration) *Gate {
	return newGate(next, quiet, realClock{})
}

func newGate(next Doer, quiet time.Duration, c clock) *Gate {
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	g := &Gate{next: next, quiet: quiet, clock: c, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	go g.loop()
	return g
}

// clock is the time the quiet window is measured in: the wall clock, or a
// test's, which moves only when the test says.
type clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock reaches t.
	At(t time.Time) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// Client returns an HTTP client that sends through the gate, for
// dynamodb.Options.HTTPClient.
func (g *Gate) Client() *http.Client { return &http.Client{Transport: g} }

// SetOn turns the gate on or off. Switch it only while no call is in flight.
func (g *Gate) SetOn(on bool) { g.on.Store(on) }

// SetManual turns manual release on or off: while it is on, held calls wait
// for Release instead of the quiet window (a test that knows when the
// server has issued every call of a level, dispatch.Levels.SetIdle, makes
// the round trips exact). Switch it only while no call is in flight.
func (g *Gate) SetManual(on bool) { g.manual.Store(on) }

// Release sends the calls held now as one round trip, as the quiet window
// would, and returns when their answers have been handed back; it returns
// how many calls it released.
func (g *Gate) Release() int {
	g.mu.Lock()
	batch := g.take()
	g.mu.Unlock()
	g.send(batch, nil)
	return len(batch)
}

// take removes the held calls and counts them as a release; g.mu is held.
func (g *Gate) take() []*heldCall {
	batch := g.held
	g.held = nil
	if len(batch) > 0 {
		g.sizes = append(g.sizes, len(batch))
		g.releases.Add(1)
	}
	return batch
}

// Releases returns how many times the gate has released held calls.
func (g *Gate) Releases() int64 { return g.releases.Load() }

// Sizes returns the number of calls of each release after the first n
// (Releases before the operation of interest).
func (g *Gate) Sizes(n int64) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if int(n) >= len(g.sizes) {
		return nil
	}
	return slices.Clone(g.sizes[n:])
}

// Close stops the gate's goroutine. Calls made afterwards while it is on
// never return.
func (g *Gate) Close() { g.once.Do(func() { close(g.stop) }) }

// RoundTrip sends req through the gate.
func (g *Gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if !g.on.Load() {
		return g.next.Do(req)
	}
	// In step mode (dispatch.Park) the call's work waits from when it is held
	// until its answer is handed back, which only a release does.
	park, resume := dispatch.Park(req.Context())
	c := &heldCall{req: req, done: make(chan struct{}), resume: resume}
	g.mu.Lock()
	g.held = append(g.held, c)
	g.last = g.clock.Now()
	g.mu.Unlock()
	park()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	<-c.done
	return c.resp, c.err
}

func (g *Gate) loop() {
	for {
		select {
		case <-g.stop:
			return
		case <-g.wake:
		}
		if g.manual.Load() {
			continue // Release does it; g.mu is left to the callers
		}
		for {
			g.mu.Lock()
			due := g.last.Add(g.quiet)
			g.mu.Unlock()
			if !g.clock.Now().Before(due) {
				break
			}
			select {
			case <-g.stop:
				return
			case <-g.clock.At(due):
			}
		}
		g.mu.Lock()
		batch := g.take()
		g.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		// Calls that arrived while this release was out wait a full quiet
		// window from when its answers are handed back, so the answers'
		// follow-up calls can join them. The window restarts before the
		// callers resume: a follow-up call is always measured from its own
		// arrival, never from a restart that came after it.
		g.send(batch, func() {
			g.mu.Lock()
			g.last = g.clock.Now()
			g.mu.Unlock()
		})
	}
}

// send sends a release's calls at once, waits for every answer and hands
// them all back together.
func (g *Gate) send(batch []*heldCall, answered func()) {
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() {
			c.resp, c.err = g.next.Do(c.req)
			if c.err != nil {
				return
			}
			// Read the answer now, so that handing it back costs the
			// caller nothing and every answer is ready at once.
			body, err := io.ReadAll(c.resp.Body)
			_ = c.resp.Body.Close()
			if err != nil {
				c.resp, c.err = nil, err
				return
			}
			c.resp.Body = io.NopCloser(bytes.NewReader(body))
		})
	}
	wg.Wait()
	if answered != nil {
		answered()
	}
	for _, c := range batch {
		c.resume()
		close(c.done)
	}
}
