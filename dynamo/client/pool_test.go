package client

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
)

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGoRunsEveryFunctionAndReusesIdleWorkers: Go never queues (a burst
// larger than the pool runs at once), keeps at most maxIdleWorkers waiting,
// and hands work to a waiting worker instead of starting a goroutine.
func TestGoRunsEveryFunctionAndReusesIdleWorkers(t *testing.T) {
	const n = 2 * maxIdleWorkers
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		Go(func() {
			defer done.Done()
			started.Done()
			release.Wait() // all n at once: none may wait for another
		})
	}
	started.Wait()
	release.Done()
	done.Wait()
	for workers.idle.Load() == 0 { // the workers are on their way back
		runtime.Gosched()
	}
	if idle := workers.idle.Load(); idle > maxIdleWorkers {
		t.Errorf("%d idle workers, want at most %d", idle, maxIdleWorkers)
	}
	before := goroutinesCreated()
	ran := make(chan struct{})
	Go(func() { close(ran) })
	<-ran
	if created := goroutinesCreated() - before; created != 0 {
		t.Errorf("Go with idle workers started %d goroutines, want 0", created)
	}
}
