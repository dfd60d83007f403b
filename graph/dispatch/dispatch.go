// Package dispatch reads the batches of an operation's loaders level by
// level (loaders.Config.Dispatch, which the operation pipeline sets, and a
// live event's loaders, one operation whose parts are the event's
// resolutions: Part): when every field of a level has asked, not after a
// time, as
// graphql-java's per-level dispatch does. With a batch window a level of
// a query is one batch only if its resolvers all ask within the window,
// which a busy machine does not guarantee; dispatched by level, an
// operation's loaders are flushed (Flush) when every piece of its work
// that is running waits on a loader, so that a level is one batch per
// loader whatever the machine's load.
package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
)

// The work is counted, per operation (opDispatch.active), as it starts and
// stops:
//
//   - a field: from its field middleware's start to its end (Field);
//     and, from the end of a field whose value has fields selected, each
//     field gqlgen will go on to resolve, from that moment on: gqlgen
//     resolves a value's plain fields one after another, each with all it
//     selects, then its resolver fields all at once, so a field that is
//     about to start is counted before its parent's count ends (scope);
//   - a part of a query with @defer, resolved apart once its fragment is
//     released (graph's incremental execution; Part): its fields from that
//     moment, in a scope of their own, then the part itself until what its
//     end releases has started, so the reads of every deferred fragment
//     of a level batch together; a live event's resolution likewise, from
//     when it is entered until it leaves (graph/live.go);
//   - a read: from the flush that starts a batch to its end, and the
//     goroutines that reads start for one key each or one DynamoDB call
//     each (fork; dynamo.WithFork);
//   - a wait: a caller waiting on a loader's result stops counting, and
//     counts again from the moment the batch hands the result out, before
//     it wakes.
//
// When the count drops to zero the operation flushes every loader that
// has keys, or, with none, tells the dispatcher's idle hook (Levels.SetIdle:
// a test's gate may then answer the DynamoDB calls it holds; Park).
//
// The safety net (watch): a field counted as about to start that gqlgen
// never starts would keep the count above zero, and the level's keys would
// wait for ever. gqlgen starts every field of an object it resolves, and
// the count leaves out what it cannot foresee (a field whose arguments
// fail, an abstract type's fields), so this is a bug, never normal
// operation; still, while keys wait, the operation is watched: when
// nothing of it has started, ended, asked or been read for Levels.Stall
// (a second), its batches are read anyway, counted (Levels.Stalls) and
// logged. In normal operation something moves far more often than that
// (a busy machine delays a goroutine by tens of milliseconds), so the
// safety net never splits a level; a resolver's own DynamoDB call that
// retries for longer than Stall while its siblings' keys wait would let
// them go first: one call more, never a hang.

// DefaultStall is Levels.Stall's default.
const DefaultStall = time.Second

// Levels dispatches the batches of a handler's operations level by level,
// as its loaders.Config.Dispatch: each operation's batches are read when
// every running resolver of the operation waits on a loader. The zero
// value is ready to use.
type Levels struct {
	// Stall is how long an operation whose loaders hold keys may make no
	// progress before they are read anyway (the safety net); 0:
	// DefaultStall.
	Stall time.Duration
	// Log gets a warning when the safety net reads batches; nil:
	// slog.Default().
	Log *slog.Logger

	mu     sync.Mutex
	idle   func() int
	stalls atomic.Int64
}

// SetIdle sets the function called (on a goroutine of its own) when an
// operation's work all waits and no loader has keys: every DynamoDB call
// the operation still needs is then under way (bench.Gate.Release answers
// the calls it holds). Nil unsets it.
func (t *Levels) SetIdle(f func() int) {
	t.mu.Lock()
	t.idle = f
	t.mu.Unlock()
}

func (t *Levels) idleFunc() func() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idle
}

// Stalls returns how many times the safety net has read an operation's
// batches (see the package's comment): 0 unless a field was counted that
// never started.
func (t *Levels) Stalls() int64 { return t.stalls.Load() }

func (t *Levels) stall() time.Duration {
	if t.Stall > 0 {
		return t.Stall
	}
	return DefaultStall
}

// opDispatch is one operation's dispatch: its count of running work, its
// loaders and the fields gqlgen is about to resolve.
type opDispatch struct {
	levels *Levels
	mu     sync.Mutex
	active int // work running, or about to start
	// moves counts the changes of the work (the safety net's progress);
	// pending the keys of the open batches.
	moves   uint64
	pending int
	// loading counts the Loads between their key's registration and its
	// arrival in the loader's open batch, made outside mu (Load).
	loading int
	loaders []*loaderDispatch
	scopes  map[scopeKey]*scope
	started bool // the root scope is made
	// markers are the contexts of the parts of a query with @defer
	// resolved apart (Part), each its parts' scope.
	markers map[*graphql.FieldContext]bool
	// watch is the safety net's timer, armed (watching) while keys wait;
	// seen is moves when it was last armed.
	watch    *time.Timer
	watching bool
	seen     uint64
}

// Operation starts one operation's dispatch (loaders.Dispatcher).
func (t *Levels) Operation() loaders.OperationDispatch {
	return &opDispatch{levels: t, scopes: map[scopeKey]*scope{}, markers: map[*graphql.FieldContext]bool{}}
}

// idle counts n pieces of work as stopped (s.mu held) and, when none runs,
// flushes the loaders that have keys.
func (s *opDispatch) idle(n int) {
	s.active -= n
	s.moves++
	if s.active < 0 {
		panic("graph/dispatch: counted more work stopped than started")
	}
	if s.active > 0 || s.loading > 0 {
		return // a Load under way flushes when it is in (Load)
	}
	s.flushAll()
	if s.active == 0 {
		if f := s.levels.idleFunc(); f != nil {
			go f()
		}
	}
}

// flushAll starts reading every open batch, each counted as running until
// its batch function ends, and stops watching (s.mu held).
func (s *opDispatch) flushAll() {
	for _, l := range s.loaders {
		if l.flushPending() {
			s.active++
		}
	}
	if s.watching {
		s.watching = false
		s.watch.Stop()
	}
}

// watchKeys arms the safety net, when it is not, as a key starts waiting
// (s.mu held).
func (s *opDispatch) watchKeys() {
	if s.watching {
		return
	}
	s.watching, s.seen = true, s.moves
	if s.watch == nil {
		s.watch = time.AfterFunc(s.levels.stall(), s.stalled)
		return
	}
	s.watch.Reset(s.levels.stall())
}

// stalled is the safety net's timer: the open batches are read when
// nothing of the operation moved since it was armed.
func (s *opDispatch) stalled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.watching || s.pending == 0 {
		s.watching = false
		return
	}
	if s.moves != s.seen || s.loading > 0 {
		s.seen = s.moves
		s.watch.Reset(s.levels.stall())
		return
	}
	s.levels.stalls.Add(1)
	log := s.levels.Log
	if log == nil {
		log = slog.Default()
	}
	log.Warn("graph/dispatch: an operation made no progress while its loaders held keys; reading them anyway",
		"keys", s.pending, "running", s.active, "after", s.levels.stall())
	s.flushAll()
}

// fork counts n goroutines about to start while the caller waits for them
// (dynamo.WithFork): each calls the returned function when it ends, and
// the last one's end hands its count back to the caller.
func (s *opDispatch) fork(n int) func() {
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
func (s *opDispatch) forked(ctx context.Context) context.Context {
	return dynamo.WithFork(ctx, s.fork)
}

// dispatchOf returns the dispatch of ctx's operation, or nil.
func dispatchOf(ctx context.Context) *opDispatch {
	s, _ := loaders.DispatchOf(ctx).(*opDispatch)
	return s
}

// Park counts the work that ctx belongs to, in an operation dispatched by
// level, as waiting from Park until the returned function is called (each at most
// once, in either order): for a test's transport that holds DynamoDB calls
// until the operation waits on nothing else (bench.Gate). Elsewhere both
// do nothing.
func Park(ctx context.Context) (park, resume func()) {
	s := dispatchOf(ctx)
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

// loaderDispatch is one loader's part in its operation's dispatch
// (loaders.LoaderDispatch): what it knows of each key, and the keys of the
// open batch.
type loaderDispatch struct {
	s       *opDispatch
	flush   func() // the loader's: reads the open batch
	keys    map[any]*keyState
	pending int // keys in the open batch
}

// keyState is what the dispatch knows of a key: whether its value is in, and
// how many callers wait for it.
type keyState struct {
	waiters int
	done    bool
}

// Loader joins a loader, whose open batch flush reads, to the operation's
// loaders (an operation may make them on their first use).
func (s *opDispatch) Loader(flush func()) loaders.LoaderDispatch {
	l := &loaderDispatch{s: s, flush: flush, keys: map[any]*keyState{}}
	s.mu.Lock()
	s.loaders = append(s.loaders, l)
	s.mu.Unlock()
	return l
}

// Load calls load, which asks the loader for key, and counts its caller as
// waiting from when it calls the returned function until the batch hands
// out the key's result. load runs outside the operation's lock (it may
// wait for the loader's batch goroutine to take the key, which a busy
// machine may not run at once); meanwhile the key counts as loading, and
// no batch is flushed (idle, stalled): its caller runs, so none would be
// anyway, but for a caller that is not counted, whose Load then flushes.
func (l *loaderDispatch) Load(ctx context.Context, key any, load func()) (wait func()) {
	s := l.s
	s.mu.Lock()
	s.start(ctx)
	st := l.keys[key]
	added := st == nil
	if added {
		st = &keyState{}
		l.keys[key] = st
	}
	s.loading++
	s.mu.Unlock()
	load()
	s.mu.Lock()
	s.loading--
	if added {
		l.pending++
		s.pending++
		s.watchKeys()
	}
	s.moves++
	if s.active == 0 && s.loading == 0 {
		s.idle(0)
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
func (l *loaderDispatch) Prime(key any, prime func()) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.keys[key] == nil {
		l.keys[key] = &keyState{done: true}
		prime()
	}
}

// Batch gives a batch read's parallel DynamoDB reads to the count.
func (l *loaderDispatch) Batch(ctx context.Context) context.Context { return l.s.forked(ctx) }

// Read records that a batch of keys is read: their waiters count as
// running again, before they wake, and the batch's own read is done.
func (l *loaderDispatch) Read(keys []any) {
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
func (l *loaderDispatch) flushPending() bool {
	if l.pending == 0 {
		return false
	}
	l.s.pending -= l.pending
	l.pending = 0
	l.flush()
	return true
}
