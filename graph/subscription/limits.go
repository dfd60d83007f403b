package subscription

import (
	"context"
	"sync"

	"github.com/taskgraph/taskgraph/domain"
)

// limits counts subscriptions per viewer on this instance, and per
// connection (WithSocket).
type limits struct {
	perSocket, perViewer int
	mu                   sync.Mutex
	byViewer             map[string]int
}

// socketKey holds a WebSocket connection's count of subscriptions.
type socketKey struct{}

type socketCount struct {
	mu sync.Mutex
	n  int
}

// WithSocket returns the context of a connection whose subscriptions are
// counted together (Config.MaxPerSocket): a WebSocket's, for every
// operation on it.
func WithSocket(ctx context.Context) context.Context {
	return context.WithValue(ctx, socketKey{}, &socketCount{})
}

// OnSocket reports whether ctx is a WithSocket connection's.
func OnSocket(ctx context.Context) bool { return ctx.Value(socketKey{}) != nil }

// acquire counts a new subscription of viewer (and of the socket in ctx),
// or refuses it past a limit; release undoes it.
func (l *limits) acquire(ctx context.Context, viewer string) (release func(), err error) {
	sock, _ := ctx.Value(socketKey{}).(*socketCount)
	if sock != nil {
		sock.mu.Lock()
		if sock.n >= l.perSocket {
			sock.mu.Unlock()
			return nil, domain.Errorf(domain.EINVALID, "a connection may hold at most %d subscriptions", l.perSocket)
		}
		sock.n++
		sock.mu.Unlock()
	}
	unSock := func() {
		if sock != nil {
			sock.mu.Lock()
			sock.n--
			sock.mu.Unlock()
		}
	}
	l.mu.Lock()
	if l.byViewer[viewer] >= l.perViewer {
		l.mu.Unlock()
		unSock()
		return nil, domain.Errorf(domain.EINVALID, "a user may hold at most %d subscriptions on one server", l.perViewer)
	}
	l.byViewer[viewer]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			unSock()
			l.mu.Lock()
			if l.byViewer[viewer]--; l.byViewer[viewer] <= 0 {
				delete(l.byViewer, viewer)
			}
			l.mu.Unlock()
		})
	}, nil
}
