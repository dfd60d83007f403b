package graph

import (
	"context"
	"fmt"
	"sync"
	"time"
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
	noBatch bool // every key read at once, alone, and nothing cached

	mu    sync.Mutex
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
	return &loader[K, V]{fetch: fetch, wait: w, trigger: c.Trigger, noBatch: c.NoBatch, cache: map[K]*result[V]{}}
}

// Load asks for key and returns a function that waits for its result.
func (l *loader[K, V]) Load(ctx context.Context, key K) func() (V, error) {
	r := &result[V]{done: make(chan struct{})}
	if l.noBatch {
		go l.run(&batch[K, V]{ctx: ctx, keys: []K{key}, res: []*result[V]{r}})
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
			l.trigger.add(func() { l.close(b) })
		} else {
			time.AfterFunc(l.wait, func() { l.close(b) })
		}
	}
	b.keys = append(b.keys, key)
	b.res = append(b.res, r)
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
		out = l.fetch(b.ctx, b.keys)
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
	mu   sync.Mutex
	open []func()
}

func (t *BatchTrigger) add(read func()) {
	t.mu.Lock()
	t.open = append(t.open, read)
	t.mu.Unlock()
}

// Pending returns how many batches wait for Flush.
func (t *BatchTrigger) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Flush starts reading every waiting batch, each in its own goroutine, and
// returns how many it started.
func (t *BatchTrigger) Flush() int {
	t.mu.Lock()
	open := t.open
	t.open = nil
	t.mu.Unlock()
	for _, read := range open {
		go read()
	}
	return len(open)
}
