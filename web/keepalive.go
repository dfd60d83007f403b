package web

import (
	"sync"
	"time"
)

// keepAlives sends each long-lived connection its keep-alive message once
// an interval (a graphql-transport-ws ping, a legacy "ka", a server-sent
// events comment), all from one goroutine: a wheel of slots, each
// connection in one, one slot's connections served per tick. No
// connection holds a timer or a goroutine of its own for it.
type keepAlives struct {
	interval time.Duration

	mu      sync.Mutex
	slots   []map[keeper]struct{}
	at      int // the slot served next
	n       int
	running bool
}

// keeper is a connection the wheel keeps alive.
type keeper interface {
	// keepAlive sends the keep-alive, or drops a connection whose client
	// stopped answering.
	keepAlive(now time.Time)
}

// wheelSlots is how many slots an interval has: the keep-alives of an
// interval go out in that many bursts.
const wheelSlots = 16

func newKeepAlives(interval time.Duration) *keepAlives {
	w := &keepAlives{interval: interval, slots: make([]map[keeper]struct{}, wheelSlots)}
	for i := range w.slots {
		w.slots[i] = map[keeper]struct{}{}
	}
	return w
}

// add keeps k alive until the returned remove.
func (w *keepAlives) add(k keeper) (remove func()) {
	w.mu.Lock()
	slot := (w.at + wheelSlots - 1) % wheelSlots // its first keep-alive an interval from now
	w.slots[slot][k] = struct{}{}
	w.n++
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.slots[slot], k)
			w.n--
			w.mu.Unlock()
		})
	}
}

// run serves a slot a tick while any connection is kept.
func (w *keepAlives) run() {
	t := time.NewTicker(w.interval / wheelSlots)
	defer t.Stop()
	var due []keeper
	for now := range t.C {
		w.mu.Lock()
		if w.n == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		due = due[:0]
		for k := range w.slots[w.at] {
			due = append(due, k)
		}
		w.at = (w.at + 1) % wheelSlots
		w.mu.Unlock()
		for _, k := range due {
			k.keepAlive(now)
		}
		clear(due)
	}
}
