package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// parseRun reads one run of -livesubs: "N" (N subscribers of one project)
// or "N/K" (N subscribers spread over K projects).
func parseRun(f string) (n, k int, err error) {
	ns, ks, over := strings.Cut(strings.TrimSpace(f), "/")
	n, err = strconv.Atoi(ns)
	k = 1
	if err == nil && over {
		k, err = strconv.Atoi(ks)
	}
	if err != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("%q: want N or N/K", f)
	}
	return n, k, nil
}

// manyResult is what one -livesubs run reports.
type manyResult struct{ memory, delivery string }

// manySubscribers runs spec's subscribers on the server at base (B) and
// measures: the heap, stacks and goroutines they add to this process;
// then, -liveevents rounds of one change in each of spec's projects at
// once (change(j, title) through A), the servers' CPU per delivered event
// and how long after each change's answer the last of its project's
// subscribers has it.
func manySubscribers(ctx context.Context, t *testing.T, spec SubscribersSpec, fanOuts func() (FanOuts, error), change func(j int, title string) error) manyResult {
	t.Helper()
	n, k := spec.N, max(len(spec.ProjectIDs), 1)
	var m0, m1 runtime.MemStats
	steady(&m0)
	g0 := runtime.NumGoroutine()
	start := time.Now()
	if *liveProfile != "" {
		spec.Profile = fmt.Sprintf("%s%d.subscribers.pprof", *liveProfile, n)
	}
	subs, err := StartSubscribers(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer subs.Stop()
	warm, err := subs.Warm(ctx, spec, change)
	if err != nil {
		t.Fatal(err)
	}
	setup := time.Since(start)
	steady(&m1)
	g1 := runtime.NumGoroutine()
	stack5 := settledStacks(m0, n)
	if *liveProfile != "" {
		f, err := os.Create(fmt.Sprintf("%s%d.pprof", *liveProfile, n))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *liveProfile != "" { // the base of the changes' allocations (pprof -diff_base)
		writeAllocs(t, fmt.Sprintf("%s%d.allocs0.pprof", *liveProfile, n))
	}
	var a0, a1 runtime.MemStats
	runtime.ReadMemStats(&a0)
	fan0 := must2(t, fanOuts)
	cpu0, subCPU0 := selfCPU(), must(subs.CPU())
	var lats []time.Duration
	events := *liveEvents
	for i := range events {
		answered := make([]time.Time, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for j := range k {
			wg.Go(func() {
				errs[j] = change(j, fmt.Sprintf("%d subscribers, change %d, project %d", n, i, j))
				answered[j] = time.Now()
			})
		}
		wg.Wait()
		for j := range k {
			if errs[j] != nil {
				t.Fatal(errs[j])
			}
			at, err := subs.WaitSeen(ctx, spec.PerProject(j), fmt.Sprintf("%d subscribers, change %d, project %d", n, i, j))
			if err != nil {
				t.Fatal(err)
			}
			lats = append(lats, max(at.Sub(answered[j]), 0))
		}
	}
	cpu := selfCPU() - cpu0
	subCPU := must(subs.CPU()) - subCPU0
	fan := must2(t, fanOuts).Since(fan0)
	runtime.ReadMemStats(&a1)
	if *liveProfile != "" {
		writeAllocs(t, fmt.Sprintf("%s%d.allocs.pprof", *liveProfile, n))
	}
	allocs := float64(a1.Mallocs-a0.Mallocs) / float64(events*n)
	slices.Sort(lats)
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	stack := int64(m1.StackInuse) - int64(m0.StackInuse)
	over := "one project"
	if k > 1 {
		over = fmt.Sprintf("%d projects", k)
	}
	return manyResult{
		memory: fmt.Sprintf("%d subscribers on B (%s): connected and live in %s (%d warm-up rounds); heap +%s (%s a subscriber), goroutine stacks +%s (%s a subscriber; %s after 5 collections), goroutines +%d (%.1f a subscriber)",
			n, over, setup.Round(time.Millisecond), warm, mib(heap), kib(heap/int64(n)), mib(stack), kib(stack/int64(n)), stack5, g1-g0, float64(g1-g0)/float64(n)),
		delivery: fmt.Sprintf("%d subscribers on B (%s), %d rounds of a change per project through A: servers' CPU %s and %.2f allocations a delivered event (subscribers' process: %s); the last subscriber of a change's project has it %s (p50) / %s (p99) / %s (max) after its answer (%d changes); B wrote it to the last of them %s (p50) / %s (p99) after it arrived (%d fan-outs, taskgraph_live_event_fanout_seconds)",
			n, over, events, us(cpu/time.Duration(events*n)), allocs, us(subCPU/time.Duration(events*n)), msec(pct(lats, 50)), msec(pct(lats, 99)), msec(lats[len(lats)-1]), len(lats),
			fan.AtMost(50), fan.AtMost(99), fan.Total()),
	}
}

// writeAllocs writes the process's allocation profile to path.
func writeAllocs(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC() // the profile is as of the last collection
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// settledStacks runs three more collections (an idle server has one at
// least every 2 minutes; each halves a stack that uses under a quarter of
// it) and returns the goroutine stacks added since m0, per subscriber.
func settledStacks(m0 runtime.MemStats, n int) string {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return kib((int64(m.StackInuse) - int64(m0.StackInuse)) / int64(n))
}

// must2 returns f's snapshot, failing t on an error.
func must2(t *testing.T, f func() (FanOuts, error)) FanOuts {
	t.Helper()
	v, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
