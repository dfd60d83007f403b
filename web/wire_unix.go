//go:build unix

package web

import (
	"errors"
	"net"
	"syscall"
)

// tryWrite writes what the socket takes of b at once, without waiting
// (Go's sockets are non-blocking underneath): n < len(b) with no error
// when its send buffer is full. A connection that offers no raw socket
// (TLS) takes nothing this way: its bytes go through the backlog.
func tryWrite(nc net.Conn, b []byte) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			k, err := syscall.Write(int(fd), b[n:])
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return true
			case err != nil:
				werr = err
				return true
			}
			n += k
		}
		return true // done, or full: never wait here
	})
	if err == nil {
		err = werr
	}
	return n, err
}
