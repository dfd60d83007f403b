package pipeline

import (
	"context"
	"sync"

	"github.com/taskgraph/taskgraph/graph/loaders"
)

// What the operation pipeline knows of the transport an operation came
// over, and where it records what the transport answers. The transports
// are the HTTP side's (package web, which imports graph, never the
// reverse): it chooses a request's transport and puts these values in the
// request's context; the pipeline's rules that depend on what a transport
// can do (deferDelivery, a subscription's need of a stream) ask them, and
// none reads a header to guess the transport.

// Transport is the transport of an operation as the pipeline sees it:
// what it can deliver. The HTTP side's transport rows implement it.
type Transport interface {
	// Delivery is what the transport can send for one operation.
	Delivery() Delivery
}

// Delivery is what a transport can send for one operation.
type Delivery int

const (
	// OneResponse: one JSON body (POST application/json, GET).
	OneResponse Delivery = iota
	// IncrementalParts: the parts of a query with @defer, in one body
	// (POST accepting multipart/mixed).
	IncrementalParts
	// ResponseStream: any number of responses, as separate messages: the
	// parts of a query with @defer, and a subscription's events
	// (server-sent events, the WebSockets).
	ResponseStream
)

// transportKey holds the Transport chosen for a request.
type transportKey struct{}

// WithTransport returns ctx carrying t, the transport chosen for its
// request.
func WithTransport(ctx context.Context, t Transport) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

// TransportOf returns the transport chosen for ctx's request, or nil when
// none took it.
func TransportOf(ctx context.Context) Transport {
	t, _ := ctx.Value(transportKey{}).(Transport)
	return t
}

// DeliveryOf returns the delivery of ctx's transport (OneResponse when
// none was chosen).
func DeliveryOf(ctx context.Context) Delivery {
	if t := TransportOf(ctx); t != nil {
		return t.Delivery()
	}
	return OneResponse
}

// clientAddrKey holds the client's address (RemoteAddr's host) for the
// rate limits of operations without a valid token.
type clientAddrKey struct{}

// WithClientAddr returns ctx carrying the client's address (the host of
// the request's RemoteAddr; forwarded headers are not trusted), whose
// token buckets pay for operations without a valid token (rateKeyOf).
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// Connection is the connection an operation came over, as the live rules
// reach it: a WebSocket, closed with a code of its own (gqlgen closes it
// only with 1000 once it runs) when a subscriber fell behind or an event
// came too late.
type Connection interface {
	// CloseWith starts the close handshake with code and reason and
	// reports whether it could.
	CloseWith(code int, reason string) bool
}

// connectionKey holds a request's Connection.
type connectionKey struct{}

// WithConnection returns ctx carrying c, the connection its request
// opened.
func WithConnection(ctx context.Context, c Connection) context.Context {
	return context.WithValue(ctx, connectionKey{}, c)
}

// CloseConnection closes ctx's connection, if it came over one, with code
// and reason, and reports whether it could.
func CloseConnection(ctx context.Context, code int, reason string) bool {
	c, _ := ctx.Value(connectionKey{}).(Connection)
	return c != nil && c.CloseWith(code, reason)
}

// WithSocket returns the context of a WebSocket connection authenticated
// at connection_init, for every operation on it: its Socket (a count of
// its subscriptions, Options.MaxSubscriptionsPerSocket), no idempotency
// key (its operations all carry its upgrade request's headers), and no
// request loaders: a subscription's reads go through each event's loaders
// (package graph's live rules), never through a cache as long-lived as the
// socket.
func WithSocket(ctx context.Context) context.Context {
	ctx = loaders.With(ctx, nil)
	return context.WithValue(ctx, socketKey{}, &Socket{})
}

// socketKey holds a WebSocket connection's Socket.
type socketKey struct{}

// Socket is a WebSocket connection as the live rules count it: how many
// subscriptions it holds.
type Socket struct {
	mu sync.Mutex
	n  int
}

// SocketOf returns the socket ctx's operation came over, or nil for a
// request of its own.
func SocketOf(ctx context.Context) *Socket {
	s, _ := ctx.Value(socketKey{}).(*Socket)
	return s
}

// Acquire counts one more subscription on the socket, unless it holds max
// already, and reports whether it did; Release undoes it.
func (s *Socket) Acquire(max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= max {
		return false
	}
	s.n++
	return true
}

// Release counts one subscription fewer on the socket.
func (s *Socket) Release() {
	s.mu.Lock()
	s.n--
	s.mu.Unlock()
}
