package graph

import (
	"context"
	"sync"
	"time"

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

// deliveryOf returns the delivery of ctx's transport (OneResponse when
// none was chosen).
func deliveryOf(ctx context.Context) Delivery {
	if t := TransportOf(ctx); t != nil {
		return t.Delivery()
	}
	return OneResponse
}

// Answer is the HTTP answer of an operation whose transport answers one
// JSON body: the status a step of the pipeline chose for an operation it
// refused (400 before parsing, 406 for @defer it cannot deliver, 429 with
// Retry-After, 405 for a GET's mutation), and whether the answer is a
// request error, which has no data entry (GraphQL over HTTP), though
// gqlgen writes "data": null. The HTTP side makes one per such request
// (WithAnswer) and applies it when it writes the status; on a stream or a
// socket there is none, and the steps record nothing (their refusals are
// messages of the stream).
type Answer struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	noData     bool
}

// Status returns what the pipeline recorded: the status a step chose
// (zero: the request error's, or gqlgen's own), the seconds the client
// should wait before retrying, as the refusal's message says them (zero:
// no Retry-After), and whether the answer is a request error.
func (a *Answer) Status() (status, retryAfter int, noData bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retryAfter > 0 {
		retryAfter = retrySeconds(a.retryAfter)
	}
	return a.status, retryAfter, a.noData
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

// SetStatus records the status of an operation a transport refused
// itself (a GET's mutation: 405); on a nil Answer (a stream, a socket) it
// does nothing.
func (a *Answer) SetStatus(status int) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.status = status
	a.mu.Unlock()
}

// AnswerOf returns the Answer of ctx's request, or nil on a stream or a
// socket.
func AnswerOf(ctx context.Context) *Answer {
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

// WithSocket returns the context of a WebSocket connection authenticated
// at connection_init, for every operation on it: a count of its
// subscriptions (Options.MaxSubscriptionsPerSocket), no idempotency key
// (its operations all carry its upgrade request's headers), and no request
// loaders: a subscription's reads go through each event's loaders
// (live.go), never through a cache as long-lived as the socket.
func WithSocket(ctx context.Context) context.Context {
	ctx = loaders.With(ctx, nil)
	return subscription.WithSocket(ctx)
}
