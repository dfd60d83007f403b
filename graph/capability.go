package graph

import (
	"context"
	"sync"
	"time"

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

// deliveryOf returns the delivery of ctx's transport (OneResponse when
// none was chosen).
func deliveryOf(ctx context.Context) Delivery {
	if t := TransportOf(ctx); t != nil {
		return t.Delivery()
	}
	return OneResponse
}

// Refusal is why a step of the pipeline refused an operation before it
// ran, as a transport that answers one JSON body must tell it: the HTTP
// side (web) gives each its status (web/scope.go), the pipeline none.
type Refusal uint8

const (
	// NotRefused: no step refused the operation (a request error's answer
	// is then the transport's, by its media type).
	NotRefused Refusal = iota
	// RefusedRequest: there is no operation to run (no document, a
	// documentId or hash the trusted documents do not hold, a document
	// production does not trust), or @defer where no part can be
	// delivered (a mutation, a subscription, a label twice): a request
	// error.
	RefusedRequest
	// RefusedUndeliverable: a query with @defer over a transport that
	// answers one JSON body; its message names the media types to accept.
	RefusedUndeliverable
	// RefusedRateLimited: over a rate limit; the client may retry after
	// the Answer's wait.
	RefusedRateLimited
	// RefusedNeedsStream: a subscription over a transport that does not
	// stream.
	RefusedNeedsStream
)

// Answer is what the pipeline records of an operation whose transport
// answers one JSON body: why a step refused it, if one did (Refusal), how
// long the client should wait before retrying, and whether the answer is
// a request error, which has no data entry (GraphQL over HTTP), though
// gqlgen writes "data": null. The HTTP side makes one per such request
// (WithAnswer) and turns it into the response's status when it writes
// it; on a stream or a socket there is none, and the steps record nothing
// (their refusals are messages of the stream).
type Answer struct {
	mu         sync.Mutex
	refusal    Refusal
	retryAfter time.Duration
	noData     bool
}

// Outcome returns what the pipeline recorded: the refusal (NotRefused:
// none), the seconds the client should wait before retrying, as the
// refusal's message says them (zero: no wait), and whether the answer is
// a request error.
func (a *Answer) Outcome() (refusal Refusal, retryAfter int, noData bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retryAfter > 0 {
		retryAfter = retrySeconds(a.retryAfter)
	}
	return a.refusal, retryAfter, a.noData
}

// NoData reports whether the answer is a request error (no data entry).
func (a *Answer) NoData() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.noData
}

// answerKey holds a request's *Answer.
type answerKey struct{}

// WithAnswer returns ctx carrying a, where the pipeline records the
// answer of the request's operation.
func WithAnswer(ctx context.Context, a *Answer) context.Context {
	return context.WithValue(ctx, answerKey{}, a)
}

// answerOf returns the Answer of ctx's request, or nil on a stream or a
// socket.
func answerOf(ctx context.Context) *Answer {
	a, _ := ctx.Value(answerKey{}).(*Answer)
	return a
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

// closeConnection closes ctx's connection, if it came over one, with code
// and reason, and reports whether it could.
func closeConnection(ctx context.Context, code int, reason string) bool {
	c, _ := ctx.Value(connectionKey{}).(Connection)
	return c != nil && c.CloseWith(code, reason)
}

// WithSocket returns the context of a WebSocket connection authenticated
// at connection_init, for every operation on it: a count of its
// subscriptions (Options.MaxSubscriptionsPerSocket), no idempotency key
// (its operations all carry its upgrade request's headers), and no request
// loaders: a subscription's reads go through each event's loaders
// (live.go), never through a cache as long-lived as the socket.
func WithSocket(ctx context.Context) context.Context {
	ctx = loaders.With(ctx, nil)
	return context.WithValue(ctx, socketKey{}, &socketCount{})
}
