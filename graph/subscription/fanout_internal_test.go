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
// exactly once, before its fanOut returns, and the helpers running at
// once never number more than GOMAXPROCS-1 for the whole process.
func TestFanOutDoesEveryChunkOnceWithBoundedHelpers(t *testing.T) {
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
	// At most the eight feeds and the helpers at once.
	if m, bound := most.Load(), int64(8+cap(helpers)); m > bound {
		t.Errorf("%d chunks ran at once, want at most %d (8 feeds and %d helpers)", m, bound, cap(helpers))
	}
	if len(helpers) != 0 {
		t.Errorf("%d helpers still hold their token", len(helpers))
	}
}
