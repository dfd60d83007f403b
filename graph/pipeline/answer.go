package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// What the pipeline answers of an operation refused before it ran, for a
// transport that answers one JSON body: a Refusal and whether the answer
// is a request error, never an HTTP status, which is web's to choose.

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

// Refuse records r as why ctx's operation was refused, where it came in a
// request answered with one JSON body (web turns it into the HTTP
// status); on a stream or a socket it does nothing (their refusals are
// messages of the stream).
func Refuse(ctx context.Context, r Refusal) { refuse(ctx, r, 0, false) }

// refuse is Refuse with how long the client should wait before retrying
// (retryAfter) and whether the answer is a request error (noData).
func refuse(ctx context.Context, r Refusal, retryAfter time.Duration, noData bool) {
	if a := answerOf(ctx); a != nil {
		a.mu.Lock()
		a.refusal, a.retryAfter = r, retryAfter
		a.noData = a.noData || noData
		a.mu.Unlock()
	}
}

// answerNoData records that the operation's answer is a request error: it
// failed before it ran (parsing, validation, variable coercion, the
// operation not found, the limits checked after parsing). Its status is
// then the HTTP side's for a request error, unless a step refused it.
func answerNoData(ctx context.Context) {
	if a := answerOf(ctx); a != nil {
		a.mu.Lock()
		a.noData = true
		a.mu.Unlock()
	}
}

// requestErrors is the response middleware that records a request error:
// a response with errors and no data, which only an operation refused
// before it ran has (gqlgen's DispatchError).
func requestErrors(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	res := next(ctx)
	if res != nil && res.Data == nil && len(res.Errors) > 0 {
		answerNoData(ctx)
	}
	return res
}
