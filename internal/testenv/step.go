package testenv

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/graph"
)

// Stepper runs requests level by level, for tests that pin DynamoDB calls
// and round trips. The handler's loaders use a graph.BatchTrigger instead of
// a batch window; the stepper watches the process's goroutines and, each
// time every goroutine doing request work (a resolver, a loader, gqlgen's
// execution) is parked (waiting on a batch, on DynamoDB, on other
// goroutines), flushes the pending batches: a level of a query is then one
// batch per loader whatever the machine's load, as the design intends and as
// the production window gives when the machine keeps up. When no batch is
// pending, it calls release (a gate holding the level's calls, see
// bench.Gate), so that a round trip is everything the server can ask before
// it needs an answer.
//
// Parked is read from a stop-the-world dump of every goroutine's state
// (runtime.Stack), so it is exact at that instant: a goroutine is request
// work when its stack has a frame of package graph, dynamo or gqlgen, and
// parked only when it waits on a channel, a WaitGroup, a Cond, I/O or a
// sleep. The embedded store's server
// goroutines are not request work: a request waiting for it is parked. A
// goroutine that has not run yet shows only its start function, so request
// code starts its goroutines with go statements of its own packages, not
// sync.WaitGroup.Go (whose start function is in package sync).
type Stepper struct {
	trigger *graph.BatchTrigger
	release func() int
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// StartStepper starts stepping the batches of trigger (release may be nil).
// Stop it when the requests are done.
func StartStepper(trigger *graph.BatchTrigger, release func() int) *Stepper {
	s := &Stepper{trigger: trigger, release: release, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Stop stops the stepper and waits for it.
func (s *Stepper) Stop() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// stepPoll is how often the stepper looks while requests wait; each look
// stops the world, so while they are busy it looks half as often each time,
// down to once per stepPollMax. A level is never split by a late look, only
// slowed.
const (
	stepPoll    = 200 * time.Microsecond
	stepPollMax = 3200 * time.Microsecond
)

func (s *Stepper) run() {
	defer close(s.done)
	buf := make([]byte, 1<<20)
	poll := stepPoll
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(poll):
		}
		gen := s.trigger.Gen()
		var parked bool
		parked, buf = requestParked(buf)
		if !parked {
			poll = min(2*poll, stepPollMax)
			continue
		}
		poll = stepPoll
		// Keys asked for after the dump (an answer came in meanwhile) make
		// it stale: look again rather than flush half a level.
		n, ok := s.trigger.FlushIfUnchanged(gen)
		if ok && n == 0 && s.release != nil {
			s.release()
		}
	}
}

var (
	requestFrames = [][]byte{[]byte("github.com/taskgraph/taskgraph/graph."), []byte("github.com/taskgraph/taskgraph/graph/"),
		// Reads run on dynamo.Go's pooled workers: a new one starts in
		// package dynamo, an idle one waits there.
		[]byte("github.com/taskgraph/taskgraph/dynamo."), []byte("github.com/99designs/gqlgen/")}
	// parkedStates wait for another goroutine or for I/O. Any other state
	// is busy: running, runnable, in a system call, and the runtime's own
	// waits (semacquire on the world or a GC start, GC assists, stack
	// copies), which end by themselves.
	// A wait for a mutex is busy too: its holder may be a goroutine that is
	// not request work (the gate's own), and it ends by itself.
	parkedStates = [][]byte{[]byte("chan receive"), []byte("chan send"), []byte("select"), []byte("sync.WaitGroup.Wait"),
		[]byte("sync.Cond.Wait"), []byte("IO wait"), []byte("sleep")}
)

// requestParked reports whether no goroutine doing request work is busy,
// other than the caller. buf is a buffer for the dump, returned grown.
func requestParked(buf []byte) (bool, []byte) {
	n := runtime.Stack(buf, true)
	for n == len(buf) {
		buf = make([]byte, 2*len(buf))
		n = runtime.Stack(buf, true)
	}
	gs := bytes.Split(buf[:n], []byte("\n\n"))
	for _, g := range gs[1:] { // the first is the caller
		header, frames, _ := bytes.Cut(g, []byte("\n"))
		if !isRequestWork(frames) {
			continue
		}
		_, state, _ := bytes.Cut(header, []byte(" ["))
		if !slices.ContainsFunc(parkedStates, func(p []byte) bool { return bytes.HasPrefix(state, p) }) {
			return false, buf
		}
	}
	return true, buf
}

// isRequestWork reports whether a goroutine's frames (not the "created by"
// line) include a frame of the server's request code.
func isRequestWork(frames []byte) bool {
	for line := range bytes.Lines(frames) {
		if bytes.HasPrefix(line, []byte("created by ")) {
			continue
		}
		for _, f := range requestFrames {
			if bytes.HasPrefix(line, f) {
				return true
			}
		}
	}
	return false
}
