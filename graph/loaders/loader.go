package loaders

import (
	"context"
	"fmt"

	"github.com/graph-gophers/dataloader/v7"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/internal/telemetry"
)

// loader is one access pattern's per-operation data loader: a dataloader v7
// Loader, which caches each key's result and gathers the keys asked for into
// batches, each read by one call of fetch. A batch opens at its first key
// and is read, dispatched by level (Config.Dispatch), when every running
// resolver of the operation waits on a loader (the dispatcher flushes it);
// without a dispatcher, when its window ends (Config.Wait after that key).
type loader[K comparable, V any] struct {
	dl   *dataloader.Loader[K, V]
	name string    // for traces and metrics (batchTracer)
	gate *ReadGate // Config.Gate

	// levels is the dispatcher's part of the loader (dispatch.go), nil
	// when it reads by window.
	levels LoaderDispatch
}

// result is one key's value or error, as a fetch returns it.
type result[V any] struct {
	val V
	err error
}

// inputCapacity is the buffer of a batch's input channel, through which
// each Load hands its key to the batch's goroutine (dataloader's default,
// 1000, is 8 KB zeroed per batch, several batches per request). It bounds
// nothing: that goroutine takes the keys as they come, holding no lock, so
// a Load past the buffer waits for it only until it runs (the dispatcher
// holds none of its locks meanwhile: graph/dispatch's Load).
const inputCapacity = 32

// newLoader makes a loader of c whose batches fetch reads; name is its
// batches' in traces and metrics. Dispatched by level (levels not nil) it
// joins the operation's loaders, which an operation may make on their
// first use.
func newLoader[K comparable, V any](c Config, levels OperationDispatch, name string, fetch func(context.Context, []K) []result[V]) *loader[K, V] {
	l := &loader[K, V]{gate: c.Gate, name: name}
	opts := []dataloader.Option[K, V]{dataloader.WithTracer[K, V](batchTracer[K, V]{l: l, detached: c.Detached}),
		dataloader.WithInputCapacity[K, V](inputCapacity)}
	switch {
	case c.NoBatch:
		// Every key read at once, alone, and nothing cached.
		levels = nil
		opts = append(opts, dataloader.WithBatchCapacity[K, V](1), dataloader.WithCache[K, V](&dataloader.NoCache[K, V]{}))
	case levels != nil:
		opts = append(opts, dataloader.WithWait[K, V](dispatchWait))
	default:
		w := c.Wait
		if w == 0 {
			w = DefaultBatchWait
		}
		opts = append(opts, dataloader.WithWait[K, V](w))
	}
	// No WithBatchCapacity otherwise: the store splits a batch into calls
	// (BatchGetItem's 100 keys) and runs them at once, so a capacity would
	// only start the calls of one level at different times.
	l.dl = dataloader.NewBatchedLoader(l.batchFunc(fetch), opts...)
	if levels != nil {
		l.levels = levels.Loader(l.dl.Flush)
	}
	return l
}

// batchFunc makes the dataloader batch function of fetch: a panic of fetch
// becomes every key's error (and is not cached apart from the others), and
// dispatched by level the keys' waiters count as running again before they
// wake.
func (l *loader[K, V]) batchFunc(fetch func(context.Context, []K) []result[V]) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		if l.levels != nil {
			ctx = l.levels.Batch(ctx)
		}
		if l.gate != nil {
			l.gate.wait()
		}
		var out []result[V]
		// On a pooled goroutine with a grown stack (client.Go): a fetch
		// calls DynamoDB, and dataloader starts a fresh goroutine per batch.
		read := make(chan struct{})
		client.Go(func() {
			defer close(read)
			defer func() {
				if p := recover(); p != nil {
					out = make([]result[V], len(keys))
					for i := range out {
						out[i].err = fmt.Errorf("panic in a batch read: %v", p)
					}
				}
			}()
			out = fetch(ctx, keys)
		})
		<-read
		res := make([]*dataloader.Result[V], len(keys))
		for i := range keys {
			if i < len(out) {
				res[i] = &dataloader.Result[V]{Data: out[i].val, Error: out[i].err}
			} else {
				res[i] = &dataloader.Result[V]{Error: fmt.Errorf("a batch read returned %d results for %d keys", len(out), len(keys))}
			}
		}
		if l.levels != nil {
			ks := make([]any, len(keys))
			for i, k := range keys {
				ks[i] = k
			}
			l.levels.Read(ks)
		}
		return res
	}
}

// Load asks for key and returns a function that waits for its result.
func (l *loader[K, V]) Load(ctx context.Context, key K) func() (V, error) {
	if l.levels == nil {
		return l.dl.Load(ctx, key)
	}
	var th dataloader.Thunk[V]
	wait := l.levels.Load(ctx, key, func() { th = l.dl.Load(ctx, key) })
	return func() (V, error) {
		wait()
		return th()
	}
}

// Prime caches a value for key unless key is already loaded or loading.
func (l *loader[K, V]) Prime(ctx context.Context, key K, val V) {
	if l.levels == nil {
		l.dl.Prime(ctx, key, val)
		return
	}
	l.levels.Prime(key, func() { l.dl.Prime(ctx, key, val) })
}

// batchTracer is the loaders' dataloader tracer: each batch's span and
// batch-size metric (telemetry.StartBatch), under the detached context when
// there is one (Config.Detached), which then is the batch's context
// too.
type batchTracer[K comparable, V any] struct {
	l        *loader[K, V]
	detached context.Context
}

func (batchTracer[K, V]) TraceLoad(ctx context.Context, _ K) (context.Context, dataloader.TraceLoadFinishFunc[V]) {
	return ctx, func(dataloader.Thunk[V]) {}
}

func (batchTracer[K, V]) TraceLoadMany(ctx context.Context, _ []K) (context.Context, dataloader.TraceLoadManyFinishFunc[V]) {
	return ctx, func(dataloader.ThunkMany[V]) {}
}

func (t batchTracer[K, V]) TraceBatch(ctx context.Context, keys []K) (context.Context, dataloader.TraceBatchFinishFunc[V]) {
	if t.detached != nil {
		ctx = t.detached
	}
	ctx, end := telemetry.FromContext(ctx).StartBatch(ctx, t.l.name, len(keys))
	return ctx, func([]*dataloader.Result[V]) { end() }
}
