package graph

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestBatchTakesMoreKeysThanItsInputBuffer loads three times inputCapacity
// keys from one goroutine into one batch, with a window (flushed by hand)
// and in step mode (where Load holds opSteps.mu): every Load returns, the
// keys are read by one fetch, and each gets its own value.
func TestBatchTakesMoreKeysThanItsInputBuffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		step bool
	}{{"window", false}, {"step mode", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var batches [][]int
			fetch := func(_ context.Context, keys []int) []result[int] {
				mu.Lock()
				batches = append(batches, append([]int(nil), keys...))
				mu.Unlock()
				res := make([]result[int], len(keys))
				for i, k := range keys {
					res[i].val = k * 10
				}
				return res
			}
			var steps *opSteps
			if tc.step {
				steps = newOpSteps(&BatchTrigger{})
				steps.active = 1 // this test's goroutine, as a resolver
			}
			l := newLoader(LoaderConfig{Wait: time.Hour}, steps, fetch)
			n := 3 * inputCapacity
			ths := make([]func() (int, error), n)
			for k := range n {
				ths[k] = l.Load(context.Background(), k)
			}
			if !tc.step {
				l.dl.Flush() // the window, an hour, would not end
			}
			for k, th := range ths {
				if v, err := th(); err != nil || v != k*10 {
					t.Fatalf("key %d: got %d, %v; want %d", k, v, err, k*10)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(batches) != 1 || len(batches[0]) != n {
				t.Fatalf("got batches of %v keys, want one of %d", lens(batches), n)
			}
		})
	}
}

func lens(batches [][]int) []int {
	out := make([]int, len(batches))
	for i, b := range batches {
		out[i] = len(b)
	}
	return out
}
