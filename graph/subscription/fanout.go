package subscription

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// An event's writes are spread over the machine's cores: its recipients
// are cut in chunks, which the delivering goroutine (a project's feed)
// and helpers take in turn until none is left. Helpers are bounded for
// the whole process by GOMAXPROCS-1 (helpers), whatever the number of
// projects delivering at once: a feed that finds no helper free writes
// its chunks itself. Each recipient is in one chunk, so a stream is still
// written by one goroutine at a time, and Deliver returns once every
// chunk is written: the next event of the project comes after, in order.

// chunkSize is how many recipients one chunk holds: a few hundred
// microseconds of writes, large enough that handing it over costs little.
const chunkSize = 128

// helpers holds a token per helper running (at most GOMAXPROCS-1 at the
// start of the process).
var helpers = make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))

// chunk is the recipients from to to (exclusive) of one batch.
type chunk struct{ batch, from, to int }

// chunksOf cuts the batches' recipients in chunks.
func chunksOf(batches []*batch) []chunk {
	var out []chunk
	for i, b := range batches {
		for from := 0; from < len(b.subs); from += chunkSize {
			out = append(out, chunk{batch: i, from: from, to: min(from+chunkSize, len(b.subs))})
		}
	}
	return out
}

// fanOut runs do for each of n chunks, on the calling goroutine and on
// the helpers free, and returns once every one is done.
func fanOut(n int, do func(i int)) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			do(i)
		}
	}
	var wg sync.WaitGroup
spawn:
	for range min(n-1, cap(helpers)) {
		select {
		case helpers <- struct{}{}:
			wg.Go(func() {
				defer func() { <-helpers }()
				work()
			})
		default: // every helper is busy (other projects' events): the rest is ours
			break spawn
		}
	}
	work()
	wg.Wait()
}
