package client

import "sync/atomic"

// Reads run on pooled goroutines whose stacks have already grown. A
// DynamoDB call through the SDK goes some hundred frames deep (its
// middleware stack, signing, HTTP); on a fresh goroutine, whose stack starts
// at a few kilobytes, it grows the stack several times, each time copying
// and adjusting every frame: about a tenth of the server's CPU on a
// dashboard, which starts a goroutine per list it reads. Go hands f to an
// idle worker when there is one and starts a new one otherwise (it never
// queues), and a worker that is done waits for the next function with its
// stack kept grown.

// maxIdleWorkers bounds the workers kept waiting: as many as the HTTP
// client keeps connections (a level of one query, or the calls of many
// requests at once, rarely run more reads at a time).
const maxIdleWorkers = MaxConnsPerHost

var workers = struct {
	handoff chan func()
	idle    atomic.Int32
}{handoff: make(chan func())}

// Go runs f on a pooled goroutine (an idle worker, or a new one): for
// functions that call DynamoDB, which need a deep stack. It does not wait
// for f.
func Go(f func()) {
	select {
	case workers.handoff <- f:
	default:
		go work(f)
	}
}

func work(f func()) {
	for {
		f()
		if workers.idle.Add(1) > maxIdleWorkers {
			workers.idle.Add(-1)
			return
		}
		f = waitForWork()
	}
}

// idleFrame is the stack a waiting worker holds on to. The garbage
// collector halves the stack of a goroutine that uses less than a quarter
// of it; waiting inside a frame this large keeps a stack of up to four
// times its size (what a DynamoDB call needs) from shrinking.
const idleFrame = 16 << 10

// waitForWork waits for the next function inside a large frame (see
// idleFrame).
//
//go:noinline
func waitForWork() func() {
	var pad [idleFrame]byte
	keep(pad[:])
	f := <-workers.handoff
	workers.idle.Add(-1)
	return f
}

// keep makes the compiler keep pad on the stack.
//
//go:noinline
func keep(pad []byte) { pad[0] = 0 }
