//go:build !linux

package web

import "net"

// parking is not available here: each WebSocket keeps its reader
// goroutine (see park_linux.go).
var parking parker

type parker struct{}

func (*parker) available() bool           { return false }
func (*parker) reserve(func()) uint64     { return 0 }
func (*parker) arm(net.Conn, uint64) bool { return false }
func (*parker) unpark(uint64) bool        { return false }
