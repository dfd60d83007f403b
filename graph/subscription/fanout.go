package subscription

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// An event's writes are spread over the machine's cores: its recipients
// are cut in chunks, which the delivering goroutine (a project's feed)
// and helpers take in turn until none is left. The goroutines writing at
// once are bounded for the whole process by GOMAXPROCS (writers),
// whatever the number of projects delivering at once: a feed waits for a
// writer's token before its first chunk, and takes more tokens for
// helpers only while some are free. Projects' events that come at once
// (a burst of changes) are then written one after the other on every
// core, not interleaved by the scheduler's preemptions: more goroutines
// than cores writing cost each write a share of switches and preemptions,
// and made every project's last subscriber wait for all the others'.
// Each recipient is in one chunk, so a stream is still written by one
// goroutine at a time, and Deliver returns once every chunk is written:
// the next event of the project comes after, in order. A chunk never
// waits (Stream.Send does not), so a token is always given back soon.

// chunkSize is how many recipients one chunk holds: a few hundred
// microseconds of writes, large enough that handing it over costs little.
const chunkSize = 128

// writers holds a token per goroutine writing an event's chunks (at most
// GOMAXPROCS at the start of the process).
var writers = make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))

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

// fanOut runs do for each of n chunks, on the calling goroutine (once a
// writer's token is free) and on as many helpers as tokens are free, and
// returns once every one is done.
func fanOut(n int, do func(i int)) {
	if n == 0 {
		return
	}
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
	writers <- struct{}{}
	var wg sync.WaitGroup
spawn:
	for range n - 1 {
		select {
		case writers <- struct{}{}:
			wg.Go(func() {
				defer func() { <-writers }()
				work()
			})
		default: // every core writes (other projects' events): the rest is ours
			break spawn
		}
	}
	work()
	<-writers
	wg.Wait()
}
