package loaders

import "sync"

// ReadGate holds every batch read of the loaders it is set on
// (Config.Gate) until it opens: for tests that change the table while
// a resolution waits on its reads, as a stalled subscriber's would. The
// zero value is closed.
type ReadGate struct {
	mu      sync.Mutex
	open    bool
	pending int
	wake    chan struct{}
}

// Pending reports how many batches wait for the gate.
func (g *ReadGate) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending
}

// Open lets every waiting batch, and every later one, read.
func (g *ReadGate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.open {
		g.open = true
		if g.wake != nil {
			close(g.wake)
		}
	}
}

// wait blocks a batch until the gate is open.
func (g *ReadGate) wait() {
	g.mu.Lock()
	if g.open {
		g.mu.Unlock()
		return
	}
	if g.wake == nil {
		g.wake = make(chan struct{})
	}
	wake := g.wake
	g.pending++
	g.mu.Unlock()
	<-wake
	g.mu.Lock()
	g.pending--
	g.mu.Unlock()
}
