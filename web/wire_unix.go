//go:build unix

package web

import (
	"net"
	"syscall"
	"unsafe"
)

// rawWriter is a connection's socket, written without waiting: its file
// descriptor, looked up once.
type rawWriter struct{ fd int }

// tryWrite writes what the socket takes of b at once, without waiting
// (Go's sockets are non-blocking underneath): n < len(b) with no error
// when its send buffer is full. A connection that offers no raw socket
// (TLS) takes nothing this way: its bytes go through the backlog. w.mu
// held.
//
// It writes the descriptor itself, with no lock of the runtime's poller
// and no hand-over of the processor (a write to a non-blocking socket
// never waits): for an event fanned out to thousands of sockets these
// were a tenth of each delivery's CPU. It is safe because the socket is
// closed only by fail, under w.mu, which marks the wire closed: while w.mu
// is held and the wire is open, the descriptor is this socket's and no
// other's.
func (w *wire) tryWrite(b []byte) (int, error) {
	if w.raw == nil && !w.noRaw {
		w.raw, w.noRaw = newRawWriter(w.nc)
	}
	r := w.raw
	if r == nil || w.closed {
		return 0, nil
	}
	n := 0
	for n < len(b) {
		k, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(r.fd), uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
		switch errno {
		case 0:
			n += int(k)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return n, nil // full: the rest waits in the backlog
		default:
			return n, errno
		}
	}
	return n, nil
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
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil || fd < 0 {
		return nil, true
	}
	return &rawWriter{fd: fd}, false
}
