package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNoSamples is returned by Load when it is asked for no work.
var ErrNoSamples = errors.New("bench: no operations to run")

// LoadOptions say how many clients run an operation and for how long.
type LoadOptions struct {
	// Clients is the number of concurrent clients; each sends its next
	// request when the previous one is answered.
	Clients int
	// Duration: clients keep starting operations until it has passed …
	Duration time.Duration
	// … and until at least MinOps have started; never more than MaxOps.
	MinOps, MaxOps int
	// StoreCPU, when set, reads the store's CPU time (a StoreProcess's).
	StoreCPU func() (time.Duration, bool)
}

// LoadResult is what a load run measured.
type LoadResult struct {
	Ops  int
	Wall time.Duration
	// CPU is this process's CPU time (getrusage): the server, plus the load
	// driver's small share.
	CPU time.Duration
	// StoreCPU is the store process's CPU time, when known.
	StoreCPU      time.Duration
	StoreCPUKnown bool
	// Mallocs is the number of heap allocations (runtime.MemStats.Mallocs).
	Mallocs uint64
	// Bytes is the number of bytes allocated (runtime.MemStats.TotalAlloc).
	Bytes uint64
	// Goroutines is the number of goroutines started during the run.
	Goroutines uint64
	// HeapStart and HeapEnd are the live heap (HeapAlloc right after a GC)
	// before the first and after the last operation.
	HeapStart, HeapEnd uint64
	// GoroutinesStart and GoroutinesEnd count goroutines before and after.
	GoroutinesStart, GoroutinesEnd int
	// Latencies of every operation, sorted.
	Latencies []time.Duration
	// Calls are the DynamoDB calls made during the run.
	Calls Calls
}

// OpsPerSec is the throughput.
func (r LoadResult) OpsPerSec() float64 { return float64(r.Ops) / r.Wall.Seconds() }

// CPUPerOp is this process's CPU time per operation.
func (r LoadResult) CPUPerOp() time.Duration { return r.CPU / time.Duration(max(r.Ops, 1)) }

// StoreCPUPerOp is the store's CPU time per operation, when known.
func (r LoadResult) StoreCPUPerOp() (time.Duration, bool) {
	return r.StoreCPU / time.Duration(max(r.Ops, 1)), r.StoreCPUKnown
}

// AllocsPerOp is the number of heap allocations per operation.
func (r LoadResult) AllocsPerOp() float64 { return float64(r.Mallocs) / float64(max(r.Ops, 1)) }

// BytesPerOp is the number of bytes allocated per operation.
func (r LoadResult) BytesPerOp() float64 { return float64(r.Bytes) / float64(max(r.Ops, 1)) }

// GoroutinesPerOp is the number of goroutines started per operation.
func (r LoadResult) GoroutinesPerOp() float64 { return float64(r.Goroutines) / float64(max(r.Ops, 1)) }

// Percentile returns the latency below which a fraction p of operations
// finished (nearest rank).
func (r LoadResult) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(p*float64(len(r.Latencies))+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// Load runs op on h from o.Clients concurrent clients (gate off) and
// measures throughput, latency, CPU, allocations and the heap.
func (e *Env) Load(ctx context.Context, h http.Handler, op Op, o LoadOptions) (LoadResult, error) {
	body := op.Body(e.Fixture)
	return drive(ctx, o, e.Calls, func(ctx context.Context, w *Recorder) error { return e.Do(ctx, h, body, w) })
}

// drive runs do from o.Clients goroutines and measures.
func drive(ctx context.Context, o LoadOptions, calls *Counter, do func(context.Context, *Recorder) error) (LoadResult, error) {
	if o.Clients < 1 || o.MaxOps < 1 {
		return LoadResult{}, ErrNoSamples
	}
	var res LoadResult
	var ms runtime.MemStats
	steady(&ms)
	res.GoroutinesStart = runtime.NumGoroutine()
	res.HeapStart, res.Mallocs, res.Bytes = ms.HeapAlloc, ms.Mallocs, ms.TotalAlloc
	gr0 := goroutinesCreated()
	var calls0 Calls
	if calls != nil {
		calls0 = calls.Snapshot()
	}
	var store0 time.Duration
	if o.StoreCPU != nil {
		store0, res.StoreCPUKnown = o.StoreCPU()
	}

	var (
		started  atomic.Int64
		failed   atomic.Bool
		firstErr error
		errOnce  sync.Once
		mu       sync.Mutex
		lats     = make([]time.Duration, 0, o.MinOps)
		wg       sync.WaitGroup
	)
	cpu0, start := selfCPU(), time.Now()
	deadline := start.Add(o.Duration)
	next := func() bool {
		n := int(started.Add(1))
		return !failed.Load() && n <= o.MaxOps && (n <= o.MinOps || time.Now().Before(deadline))
	}
	for range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w Recorder
			mine := make([]time.Duration, 0, 64)
			for next() {
				t0 := time.Now()
				if err := do(ctx, &w); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Wall, res.CPU, res.Goroutines = time.Since(start), selfCPU()-cpu0, goroutinesCreated()-gr0
	if firstErr != nil {
		return res, firstErr
	}
	if o.StoreCPU != nil {
		s1, ok := o.StoreCPU()
		res.StoreCPU, res.StoreCPUKnown = s1-store0, res.StoreCPUKnown && ok
	}
	runtime.ReadMemStats(&ms)
	res.Mallocs, res.Bytes = ms.Mallocs-res.Mallocs, ms.TotalAlloc-res.Bytes
	steady(&ms)
	res.HeapEnd, res.GoroutinesEnd = ms.HeapAlloc, runtime.NumGoroutine()
	if calls != nil {
		res.Calls = calls.Snapshot().Sub(calls0)
	}
	slices.Sort(lats)
	res.Latencies, res.Ops = lats, len(lats)
	return res, nil
}

// goroutinesCreated returns the number of goroutines the process has
// started so far (runtime/metrics).
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// steady reads the memory statistics after two garbage collections (the
// first moves sync.Pool contents to their victim caches, the second frees
// them), so HeapAlloc is the live heap.
func steady(ms *runtime.MemStats) {
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(ms)
}

// DriverCost measures the load driver alone: o.Clients clients sending body
// in process to a handler that only answers with answer. Its CPU and
// allocations per operation are the driver's share of a load run's figures
// (plus the handler's few).
func DriverCost(ctx context.Context, body, answer []byte, o LoadOptions) (LoadResult, error) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
	e := &Env{header: "Bearer x"}
	return drive(ctx, o, nil, func(ctx context.Context, w *Recorder) error { return e.Do(ctx, h, body, w) })
}
