package graph

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/telemetry"
)

// loader is a per-request data loader: it caches each key's result and
// gathers the keys asked for into batches, each read by one call of fetch.
// A batch opens at its first key and is read when its window ends (Wait
// after that key, as dataloader v7 did) or, with a BatchTrigger, when the
// trigger flushes it.
type loader[K comparable, V any] struct {
	fetch   func(ctx context.Context, keys []K) []result[V]
	wait    time.Duration
	trigger *BatchTrigger
	noBatch bool   // every key read at once, alone, and nothing cached
	name    string // for traces and metrics (nameLoaders)
	// detached, when set, is every batch's context (LoaderConfig.detached).
	detached context.Context

	mu    *sync.Mutex // the trigger's, when there is one
	cache map[K]*result[V]
	open  *batch[K, V]
}

// result is one key's value or error; done closes when it is known.
type result[V any] struct {
	done chan struct{}
	val  V
	err  error
}

func (r *result[V]) get() (V, error) {
	<-r.done
	return r.val, r.err
}

type batch[K comparable, V any] struct {
	ctx  context.Context // the first key's, as dataloader gives its batch function
	keys []K
	res  []*result[V]
}

func newLoader[K comparable, V any](c LoaderConfig, fetch func(context.Context, []K) []result[V]) *loader[K, V] {
	w := c.Wait
	if w == 0 {
		w = DefaultBatchWait
	}
	l := &loader[K, V]{fetch: fetch, wait: w, trigger: c.Trigger, noBatch: c.NoBatch, cache: map[K]*result[V]{}, mu: &sync.Mutex{},
		detached: c.detached}
	if c.Trigger != nil {
		// One lock for the trigger and its loaders: a flush takes every
		// open batch at one instant (see BatchTrigger.FlushIfUnchanged).
		l.mu = &c.Trigger.mu
	}
	return l
}

// Load asks for key and returns a function that waits for its result.
func (l *loader[K, V]) Load(ctx context.Context, key K) func() (V, error) {
	r := &result[V]{done: make(chan struct{})}
	if l.detached != nil {
		ctx = l.detached
	}
	if l.noBatch {
		b := &batch[K, V]{ctx: ctx, keys: []K{key}, res: []*result[V]{r}}
		dynamo.Go(func() { l.run(b) })
		return r.get
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.cache[key]; ok {
		return c.get
	}
	l.cache[key] = r
	b := l.open
	if b == nil {
		b = &batch[K, V]{ctx: ctx}
		l.open = b
		if l.trigger != nil {
			l.trigger.open = append(l.trigger.open, func() func() {
				if l.open == b {
					l.open = nil
				}
				return func() { l.run(b) }
			})
		} else {
			// The timer's goroutine is a fresh one: read on a pooled one.
			time.AfterFunc(l.wait, func() { dynamo.Go(func() { l.close(b) }) })
		}
	}
	b.keys = append(b.keys, key)
	b.res = append(b.res, r)
	if l.trigger != nil {
		l.trigger.gen++
	}
	return r.get
}

// Prime caches a value for key unless key is already loaded or loading.
func (l *loader[K, V]) Prime(_ context.Context, key K, val V) {
	if l.noBatch {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[key]; !ok {
		r := &result[V]{done: make(chan struct{}), val: val}
		close(r.done)
		l.cache[key] = r
	}
}

// close ends batch b's window and reads it.
func (l *loader[K, V]) close(b *batch[K, V]) {
	l.mu.Lock()
	if l.open == b {
		l.open = nil
	}
	l.mu.Unlock()
	l.run(b)
}

// run reads a closed batch and hands out its results; a panic of fetch
// becomes every key's error.
func (l *loader[K, V]) run(b *batch[K, V]) {
	var out []result[V]
	func() {
		defer func() {
			if p := recover(); p != nil {
				out = nil
				for range b.keys {
					out = append(out, result[V]{err: fmt.Errorf("panic in a batch read: %v", p)})
				}
			}
		}()
		ctx, end := telemetry.FromContext(b.ctx).StartBatch(b.ctx, l.name, len(b.keys))
		defer end()
		out = l.fetch(ctx, b.keys)
	}()
	for i, r := range b.res {
		if i < len(out) {
			r.val, r.err = out[i].val, out[i].err
		} else {
			r.err = fmt.Errorf("a batch read returned %d results for %d keys", len(out), len(b.keys))
		}
		close(r.done)
	}
}

// BatchTrigger replaces the loaders' batch window (LoaderConfig.Trigger): a
// batch is read when Flush is called, not after a time. For tests that pin
// calls and round trips: with a window, a level of a query is one batch only
// if its resolvers all ask within the window, which a busy machine does not
// guarantee; a test that flushes when every resolver of the level is waiting
// (internal/testenv.Stepper) gets one batch per level every time.
type BatchTrigger struct {
	mu   sync.Mutex // also its loaders' lock
	gen  uint64     // keys asked for so far
	open []func() func()
}

// Gen returns how many keys the trigger's loaders have put into batches so
// far.
func (t *BatchTrigger) Gen() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen
}

// Pending returns how many batches wait for a flush.
func (t *BatchTrigger) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Flush starts reading every waiting batch, each in its own goroutine, and
// returns how many it started.
func (t *BatchTrigger) Flush() int {
	n, _ := t.flush(false, 0)
	return n
}

// FlushIfUnchanged is Flush if no key has been asked for since Gen returned
// gen (ok false otherwise, and nothing read): a caller that saw the request
// parked after reading gen flushes exactly the batches it saw. Later keys go
// into new batches.
func (t *BatchTrigger) FlushIfUnchanged(gen uint64) (n int, ok bool) {
	return t.flush(true, gen)
}

func (t *BatchTrigger) flush(check bool, gen uint64) (int, bool) {
	t.mu.Lock()
	if check && t.gen != gen {
		t.mu.Unlock()
		return 0, false
	}
	open := t.open
	t.open = nil
	runs := make([]func(), len(open))
	for i, detach := range open {
		runs[i] = detach()
	}
	t.mu.Unlock()
	for _, run := range runs {
		go run()
	}
	return len(runs), true
}
