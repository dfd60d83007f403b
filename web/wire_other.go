//go:build !unix

package web

import "net"

// tryWrite takes nothing at once where the platform offers no
// non-blocking write: every byte goes through the backlog's goroutine.
func tryWrite(net.Conn, []byte) (int, error) { return 0, nil }
