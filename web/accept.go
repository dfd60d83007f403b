package web

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// A server at its process's descriptor limit cannot accept: accept(2)
// fails with EMFILE (or ENFILE, the system's limit) and the connection
// stays in the listen queue, so the next Accept fails the same way at once
// (net/http then logs "accept4: too many open files" and retries every few
// milliseconds, a line each time, while the client waits). GuardAccept
// refuses such a connection instead: it keeps one descriptor in reserve,
// gives it up to accept the waiting connection, closes that connection at
// once (a reset: the client knows, and may try another instance), and
// takes its reserve back. Each refusal is counted; the log says so once a
// minute at most. The connections already open are not touched.

// refusalLogEvery is how often at most the log says connections are being
// refused.
const refusalLogEvery = time.Minute

// GuardAccept returns ln refusing cleanly what it cannot accept for want
// of descriptors: refused (may be nil) is called once per refusal (the
// metric taskgraph_connections_refused_total).
func GuardAccept(ln net.Listener, log *slog.Logger, refused func()) net.Listener {
	g := &acceptGuard{Listener: ln, log: log, refused: refused}
	g.spare, _ = os.Open(os.DevNull)
	return g
}

type acceptGuard struct {
	net.Listener
	log     *slog.Logger
	refused func()

	mu     sync.Mutex
	spare  *os.File  // the descriptor held in reserve (nil: none could be had)
	logged time.Time // the last log line about refusals
	n      int       // refusals since that line
}

// Accept returns the next connection, refusing those that arrive while the
// process has no descriptor to spare.
func (g *acceptGuard) Accept() (net.Conn, error) {
	wait := time.Millisecond
	for {
		c, err := g.Listener.Accept()
		if err == nil || !outOfDescriptors(err) {
			return c, err
		}
		if !g.refuse() {
			// The reserve is gone (another part of the process took the
			// descriptor): wait, rather than spin on the waiting connection.
			time.Sleep(wait)
			wait = min(2*wait, time.Second)
		}
	}
}

// refuse accepts the waiting connection with the reserve descriptor and
// closes it at once; false when it could not.
func (g *acceptGuard) refuse() bool {
	g.mu.Lock()
	if g.spare != nil {
		_ = g.spare.Close()
		g.spare = nil
	}
	g.mu.Unlock()
	c, err := g.Listener.Accept() // Accept is called by one goroutine at a time (http.Server's)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, at once
		}
		_ = c.Close()
		g.n++
		if g.refused != nil {
			g.refused()
		}
		if now := time.Now(); now.Sub(g.logged) >= refusalLogEvery {
			g.log.Warn("refusing new connections: the process has no file descriptor left (raise its open-file limit, or add instances); open connections are served",
				"refused", g.n, "err", "too many open files")
			g.logged, g.n = now, 0
		}
	}
	g.spare, _ = os.Open(os.DevNull)
	return err == nil && g.spare != nil
}

// Close closes the listener and gives the reserve back.
func (g *acceptGuard) Close() error {
	g.mu.Lock()
	if g.spare != nil {
		_ = g.spare.Close()
		g.spare = nil
	}
	g.mu.Unlock()
	return g.Listener.Close()
}

// outOfDescriptors reports whether err says the process (EMFILE) or the
// system (ENFILE) has no descriptor left.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
