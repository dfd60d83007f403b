package web

import (
	"context"
	"net"
	"sync"
	"time"
)

// wire is the writing side of a long-lived connection (a WebSocket, a
// server-sent-events stream): writes are made by whichever goroutine has
// something to send (the one delivering an event, the keep-alive wheel,
// an operation's), under the connection's lock, without waiting on the
// client: what the socket does not take at once waits in a backlog that
// a goroutine of the connection's own, started for the time it takes,
// writes out. An idle connection holds no buffer and no goroutine here.
type wire struct {
	nc net.Conn
	// raw writes to nc's socket (tryWrite), made at the first write;
	// noRaw: nc has none (TLS).
	raw   *rawWriter
	noRaw bool
	// limit is how many messages the backlog may hold before the
	// connection counts as too far behind (the subscription buffer).
	limit int

	mu       sync.Mutex
	backlog  []byte // written, not yet sent
	queued   int    // messages in the backlog
	flushing bool   // a goroutine writes the backlog out
	closing  bool   // the last message is queued: nothing more is taken
	closed   bool
	wrote    bool          // something was sent since busy last looked
	room     chan struct{} // made by Room's waiters; closed when the backlog drains
	onDrain  func()        // once closing and drained (the close handshake's next step)
	// onClose runs (on a goroutine of its own) once the socket is closed
	// by a failed write or close: a parked connection's reader must see
	// it (a closed socket leaves the epoll set without an event).
	onClose func()
}

// maxBacklog bounds a backlog's bytes, whatever its messages: a client
// that reads nothing costs at most this much.
const maxBacklog = 4 << 20

// closeGrace is how long a closing connection's last bytes may take to
// reach a client that does not read, before the connection is dropped.
const closeGrace = 5 * time.Second

// send writes b (one message), or queues what the socket does not take at
// once; false when the connection is closing, closed, or (unless always)
// too far behind: its backlog full.
func (w *wire) send(b []byte, always bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing || w.closed {
		return false
	}
	w.wrote = true
	if len(w.backlog) == 0 && !w.flushing {
		n, err := w.tryWrite(b)
		if err != nil {
			w.fail()
			return false
		}
		if n == len(b) {
			return true
		}
		b = b[n:]
	}
	if !always && (w.queued >= w.limit || len(w.backlog)+len(b) > maxBacklog) {
		return false
	}
	w.backlog = append(w.backlog, b...)
	w.queued++
	w.flushLocked()
	return true
}

// busy reports whether anything was sent since it last looked (the
// keep-alives skip a connection that is not idle).
func (w *wire) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.wrote
	w.wrote = false
	return b
}

// flushLocked starts the goroutine that writes the backlog out, unless it
// runs; w.mu held.
func (w *wire) flushLocked() {
	if !w.flushing && len(w.backlog) > 0 {
		w.flushing = true
		go w.flush()
	}
}

// stallTimeout bounds how long a backlog's write may wait on a client
// that takes nothing: past it the client counts as gone and the
// connection is closed (its goroutine and backlog with it). A closing
// connection's bound is closeGrace.
var stallTimeout = 2 * KeepAliveInterval

func (w *wire) flush() {
	for {
		w.mu.Lock()
		if w.closed || len(w.backlog) == 0 {
			w.flushing = false
			if !w.closing && !w.closed {
				_ = w.nc.SetWriteDeadline(time.Time{}) // tryWrite's writes take no deadline
			}
			w.drainedLocked()
			w.mu.Unlock()
			return
		}
		b := w.backlog
		w.backlog, w.queued = nil, 0
		w.signalLocked()
		if !w.closing {
			_ = w.nc.SetWriteDeadline(time.Now().Add(stallTimeout))
		}
		w.mu.Unlock()
		if _, err := w.nc.Write(b); err != nil {
			w.mu.Lock()
			w.flushing = false
			w.fail()
			w.mu.Unlock()
			return
		}
	}
}

// drainedLocked runs once the backlog is written out: wakes Room's
// waiters and, when closing, takes the close's next step; w.mu held.
func (w *wire) drainedLocked() {
	w.signalLocked()
	if w.closing && w.onDrain != nil {
		f := w.onDrain
		w.onDrain = nil
		go f()
	}
}

func (w *wire) signalLocked() {
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
}

// Room waits until the backlog has room for one more message; false when
// the connection closed, or ctx ended, first.
func (w *wire) Room(ctx context.Context) bool {
	for {
		w.mu.Lock()
		switch {
		case w.closing || w.closed:
			w.mu.Unlock()
			return false
		case w.queued < w.limit:
			w.mu.Unlock()
			return true
		}
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return false
		}
	}
}

// last queues b as the connection's last message: nothing is taken after
// it, and then (once it is written, within closeGrace) runs.
func (w *wire) last(b []byte, then func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing || w.closed {
		return
	}
	_ = w.nc.SetWriteDeadline(time.Now().Add(closeGrace))
	w.backlog = append(w.backlog, b...)
	w.queued++
	w.closing, w.onDrain = true, then
	if !w.flushing {
		n, err := w.tryWrite(w.backlog)
		if err != nil {
			w.fail()
			return
		}
		w.backlog = w.backlog[n:]
		if len(w.backlog) == 0 {
			w.backlog, w.queued = nil, 0
			w.drainedLocked()
			return
		}
	}
	w.flushLocked()
}

// fail closes the connection after a write failed; w.mu held.
func (w *wire) fail() {
	if !w.closed {
		w.closed = true
		w.backlog = nil
		w.signalLocked()
		_ = w.nc.Close()
		if w.onClose != nil {
			go w.onClose()
		}
	}
}

// close closes the connection at once.
func (w *wire) close() {
	w.mu.Lock()
	w.fail()
	w.mu.Unlock()
}
