package subscription

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/live"
)

func TestChunksCoverEveryRecipientOnceInOrder(t *testing.T) {
	var batches []*batch
	for _, n := range []int{1, chunkSize, chunkSize + 1, 3*chunkSize + 7, 0} {
		batches = append(batches, &batch{subs: make([]*live.Subscription, n)})
	}
	seen := make([][]int, len(batches))
	for _, c := range chunksOf(batches) {
		if c.to-c.from < 1 || c.to-c.from > chunkSize {
			t.Fatalf("chunk %+v: want 1 to %d recipients", c, chunkSize)
		}
		for j := c.from; j < c.to; j++ {
			seen[c.batch] = append(seen[c.batch], j)
		}
	}
	for i, b := range batches {
		if len(seen[i]) != len(b.subs) {
			t.Fatalf("batch %d: %d recipients in chunks, want %d", i, len(seen[i]), len(b.subs))
		}
		for j, k := range seen[i] {
			if j != k {
				t.Fatalf("batch %d: recipient %d at place %d", i, k, j)
			}
		}
	}
}

// Several projects' events fan out at once: every chunk of each is done
// exactly once, before its fanOut returns, and the goroutines writing at
// once (feeds and helpers) never number more than GOMAXPROCS for the
// whole process, however many feeds deliver.
func TestFanOutDoesEveryChunkOnceWithBoundedWriters(t *testing.T) {
	var running, most atomic.Int64
	var wg sync.WaitGroup
	for range 8 { // eight feeds delivering at once
		wg.Go(func() {
			for range 20 {
				const n = 50
				var done [n]atomic.Int32
				fanOut(n, func(i int) {
					r := running.Add(1)
					for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
					}
					time.Sleep(10 * time.Microsecond)
					running.Add(-1)
					done[i].Add(1)
				})
				for i := range n {
					if k := done[i].Load(); k != 1 {
						t.Errorf("chunk %d done %d times by the time fanOut returned", i, k)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	// At most GOMAXPROCS writers at once, not the eight feeds and helpers.
	if m, bound := most.Load(), int64(cap(writers)); m > bound || m < 1 {
		t.Errorf("%d chunks ran at once, want 1 to %d (GOMAXPROCS writers, whatever the feeds)", m, bound)
	}
	if len(writers) != 0 {
		t.Errorf("%d writers still hold their token", len(writers))
	}
}
