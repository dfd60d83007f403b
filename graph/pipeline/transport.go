package pipeline

import (
	"context"

	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/subscription"
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

// WithSocket returns the context of a WebSocket connection authenticated
// at connection_init, for every operation on it: its subscriptions counted
// together (subscription.WithSocket, Options.MaxSubscriptionsPerSocket),
// no idempotency key (its operations all carry its upgrade request's
// headers), and no request loaders: a subscription's reads go through
// each event's loaders (package graph's live rules), never through a
// cache as long-lived as the socket.
func WithSocket(ctx context.Context) context.Context {
	return subscription.WithSocket(loaders.With(ctx, nil))
}
