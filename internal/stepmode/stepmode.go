// Package stepmode is the tests' step mode of the GraphQL handler's
// loaders (loaders.Config.Steps): only tests and the benchmarks import
// it, and the handler reaches it through that one hook (loaders.StepMode).
package stepmode

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
)

// Step mode (loaders.Config.Steps): for tests that pin DynamoDB calls and
// round trips. With a batch window, a level of a query is one batch only if
// its resolvers all ask within the window, which a busy machine does not
// guarantee; in step mode an operation's loaders are flushed (Flush) when
// every piece of its work that is running waits on a loader, so that a
// level is one batch per loader whatever the machine's load.
//
// The work is counted, per operation (opSteps.active), as it starts and
// stops:
//
//   - a field: from its field middleware's start to its end (stepFields);
//     and, from the end of a field whose value has fields selected, each
//     field gqlgen will go on to resolve, from that moment on: gqlgen
//     resolves a value's plain fields one after another, each with all it
//     selects, then its resolver fields all at once, so a field that is
//     about to start is counted before its parent's count ends (scope);
//   - a part of a query with @defer, resolved apart once its fragment is
//     released (graph's incremental execution; Part): its fields from that
//     moment, in a scope of their own, then the part itself until what its
//     end releases has started, so the reads of every deferred fragment
//     of a level batch together (a field that never starts would leave its
//     scope counted: step mode is for tests whose operations succeed);
//   - a read: from the flush that starts a batch to its end, and the
//     goroutines that reads start for one key each or one DynamoDB call
//     each (fork; dynamo.WithFork);
//   - a wait: a caller waiting on a loader's result stops counting, and
//     counts again from the moment the batch hands the result out, before
//     it wakes.
//
// When the count drops to zero the operation flushes every loader that
// has keys, or, with none, tells the trigger (Trigger.SetIdle: a test's
// gate may then answer the DynamoDB calls it holds; Park).

// Trigger puts the loaders of a handler into step mode, as its
// loaders.Config.Steps: each operation's batches are read when every
// running resolver of the operation waits on a loader, not after a time.
// The zero value is ready to use.
type Trigger struct {
	mu   sync.Mutex
	idle func() int
}

// SetIdle sets the function called (on a goroutine of its own) when an
// operation's work all waits and no loader has keys: every DynamoDB call
// the operation still needs is then under way (bench.Gate.Release answers
// the calls it holds). Nil unsets it.
func (t *Trigger) SetIdle(f func() int) {
	t.mu.Lock()
	t.idle = f
	t.mu.Unlock()
}

func (t *Trigger) idleFunc() func() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idle
}

// opSteps is one operation's step mode: its count of running work, its
// loaders and the fields gqlgen is about to resolve.
type opSteps struct {
	trigger *Trigger
	mu      sync.Mutex
	active  int // work running, or about to start
	loaders []interface{ flushPending() bool }
	scopes  map[scopeKey]*scope
	started bool // the root scope is made
	// markers are the contexts of the parts of a query with @defer
	// resolved apart (Part), each its parts' scope.
	markers map[*graphql.FieldContext]bool
}

// Operation starts one operation's step mode (loaders.StepMode).
func (t *Trigger) Operation() loaders.OperationSteps {
	return &opSteps{trigger: t, scopes: map[scopeKey]*scope{}, markers: map[*graphql.FieldContext]bool{}}
}

// idle counts n pieces of work as stopped (s.mu held) and, when none runs,
// flushes the loaders that have keys.
func (s *opSteps) idle(n int) {
	s.active -= n
	if s.active < 0 {
		panic("graph: step mode counted more work stopped than started")
	}
	if s.active > 0 {
		return
	}
	for _, l := range s.loaders {
		if l.flushPending() {
			s.active++ // the batch's read, until its batch function ends
		}
	}
	if s.active == 0 {
		if f := s.trigger.idleFunc(); f != nil {
			go f()
		}
	}
}

// fork counts n goroutines about to start while the caller waits for them
// (dynamo.WithFork): each calls the returned function when it ends, and
// the last one's end hands its count back to the caller.
func (s *opSteps) fork(n int) func() {
	if n <= 0 {
		return func() {}
	}
	s.mu.Lock()
	s.active += n - 1
	s.mu.Unlock()
	var left atomic.Int64
	left.Store(int64(n))
	return func() {
		if left.Add(-1) == 0 {
			return
		}
		s.mu.Lock()
		s.idle(1)
		s.mu.Unlock()
	}
}

// forked gives ctx's parallel DynamoDB reads (dynamo.WithFork) to s.
func (s *opSteps) forked(ctx context.Context) context.Context {
	return dynamo.WithFork(ctx, s.fork)
}

// stepsOf returns the step mode of ctx's operation, or nil.
func stepsOf(ctx context.Context) *opSteps {
	s, _ := loaders.StepsOf(ctx).(*opSteps)
	return s
}

// Park counts the work that ctx belongs to, in an operation in step mode,
// as waiting from Park until the returned function is called (each at most
// once, in either order): for a test's transport that holds DynamoDB calls
// until the operation waits on nothing else (bench.Gate). Elsewhere both
// do nothing.
func Park(ctx context.Context) (park, resume func()) {
	s := stepsOf(ctx)
	if s == nil {
		return func() {}, func() {}
	}
	var parked, resumed bool
	park = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.start(ctx)
		if !parked && !resumed {
			parked = true
			s.idle(1)
		}
	}
	resume = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if parked && !resumed {
			s.active++
		}
		resumed = true
	}
	return park, resume
}

// stepLoader is one loader's part in its operation's step mode
// (loaders.LoaderSteps): what it knows of each key, and the keys of the open
// batch.
type stepLoader struct {
	s       *opSteps
	flush   func() // the loader's: reads the open batch
	keys    map[any]*keyState
	pending int // keys in the open batch
}

// keyState is what step mode knows of a key: whether its value is in, and
// how many callers wait for it.
type keyState struct {
	waiters int
	done    bool
}

// Loader joins a loader, whose open batch flush reads, to the operation's
// loaders (an operation may make them on their first use).
func (s *opSteps) Loader(flush func()) loaders.LoaderSteps {
	l := &stepLoader{s: s, flush: flush, keys: map[any]*keyState{}}
	s.mu.Lock()
	s.loaders = append(s.loaders, l)
	s.mu.Unlock()
	return l
}

// Load calls load, which asks the loader for key, and counts its caller as
// waiting from when it calls the returned function until the batch hands
// out the key's result.
func (l *stepLoader) Load(ctx context.Context, key any, load func()) (wait func()) {
	s := l.s
	s.mu.Lock()
	s.start(ctx)
	load()
	st := l.keys[key]
	if st == nil {
		st = &keyState{}
		l.keys[key] = st
		l.pending++
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if !st.done {
			st.waiters++ // running again when the batch hands out its results
			s.idle(1)
		}
		s.mu.Unlock()
	}
}

// Prime calls prime unless key is already loaded or loading.
func (l *stepLoader) Prime(key any, prime func()) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.keys[key] == nil {
		l.keys[key] = &keyState{done: true}
		prime()
	}
}

// Batch gives a batch read's parallel DynamoDB reads to the count.
func (l *stepLoader) Batch(ctx context.Context) context.Context { return l.s.forked(ctx) }

// Read records that a batch of keys is read: their waiters count as
// running again, before they wake, and the batch's own read is done.
func (l *stepLoader) Read(keys []any) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if st := l.keys[k]; st != nil && !st.done {
			st.done = true
			s.active += st.waiters
			st.waiters = 0
		}
	}
	s.idle(1) // the batch's own read is done
}

// flushPending starts reading the open batch, if it has keys; s.mu is held.
func (l *stepLoader) flushPending() bool {
	if l.pending == 0 {
		return false
	}
	l.pending = 0
	l.flush()
	return true
}
