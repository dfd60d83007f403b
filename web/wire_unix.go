//go:build unix

package web

import (
	"errors"
	"net"
	"syscall"
)

// rawWriter writes to a connection's socket without waiting. Its function
// is made once a connection, so that a write allocates nothing.
type rawWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte // being written
	n   int    // of b written
	err error
}

// tryWrite writes what the socket takes of b at once, without waiting
// (Go's sockets are non-blocking underneath): n < len(b) with no error
// when its send buffer is full. A connection that offers no raw socket
// (TLS) takes nothing this way: its bytes go through the backlog. w.mu
// held (the raw socket is looked up at the first write).
func (w *wire) tryWrite(b []byte) (int, error) {
	if w.raw == nil && !w.noRaw {
		w.raw, w.noRaw = newRawWriter(w.nc)
	}
	r := w.raw
	if r == nil {
		return 0, nil
	}
	r.b, r.n, r.err = b, 0, nil
	err := r.rc.Write(r.fn)
	if err == nil {
		err = r.err
	}
	n := r.n
	r.b, r.err = nil, nil
	return n, err
}

// newRawWriter returns nc's raw writer, or noRaw when it offers no raw
// socket.
func newRawWriter(nc net.Conn) (r *rawWriter, noRaw bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, true
	}
	r = &rawWriter{rc: rc}
	r.fn = func(fd uintptr) bool {
		for r.n < len(r.b) {
			k, err := syscall.Write(int(fd), r.b[r.n:])
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return true
			case err != nil:
				r.err = err
				return true
			}
			r.n += k
		}
		return true // done, or full: never wait here
	}
	return r, false
}
