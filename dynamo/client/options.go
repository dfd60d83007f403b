package client

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// The production retry policy (RetryPolicy): five attempts, backoff at most
// two seconds; a request's time limit (graph/pipeline's Options.Timeout, through
// WithDeadline) bounds the whole.
const (
	RetryAttempts   = 5
	RetryMaxBackoff = 2 * time.Second
)

// Options returns the DynamoDB client options of the server, then extra:
// every call recorded for its context's observers, consumed capacity
// requested (Record), request deadlines (Deadlines), the HTTP client's
// connection pool (TuneHTTP), the retry policy and a leaner middleware
// stack (Lean). An extra option that replaces the HTTP client must wrap the
// tuned one (o.HTTPClient); one that sets another retry policy replaces the
// production one.
func Options(extra ...func(*dynamodb.Options)) []func(*dynamodb.Options) {
	return append([]func(*dynamodb.Options){Record, Deadlines, TuneHTTP,
		RetryPolicy(RetryAttempts, RetryMaxBackoff), Lean}, extra...)
}

// MaxConnsPerHost is how many connections to DynamoDB the client keeps
// open and idle (TuneHTTP). One GraphQL level can issue a hundred Queries at
// once, and many requests run together; the SDK's default keeps 10 idle, so
// bursts would open and close connections all the time.
const MaxConnsPerHost = 256

// TuneHTTP is a client option: an HTTP client that keeps MaxConnsPerHost
// idle connections to the endpoint and opens at most twice as many; calls
// beyond that wait for a connection rather than storm the endpoint.
func TuneHTTP(o *dynamodb.Options) {
	o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = MaxConnsPerHost
		t.MaxIdleConnsPerHost = MaxConnsPerHost
		t.MaxConnsPerHost = 2 * MaxConnsPerHost
	})
}

type deadlineKey struct{}

// WithDeadline returns a context whose DynamoDB calls (retries included) must
// end by t, without cancelling anything else done with the context. The
// client must have been made with the Deadlines option.
func WithDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, t)
}

// DeadlineOf returns the deadline WithDeadline set on ctx, if any.
func DeadlineOf(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(deadlineKey{}).(time.Time)
	return t, ok
}

type cancelKey struct{}

// WithCancelOf returns a context whose DynamoDB calls (retries included)
// also end when parent is done, without cancelling anything else done with
// the context: for work that must run to its end on a context that is
// never cancelled (context.WithoutCancel) but whose reads should stop, and
// fail at once, when its request ends. The client must have been made with
// the Deadlines option.
func WithCancelOf(ctx, parent context.Context) context.Context {
	return context.WithValue(ctx, cancelKey{}, parent)
}

// Cancelled reports whether ctx is done, or the parent WithCancelOf set on
// it is: the calls made with ctx are (or would be) cancelled.
func Cancelled(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	p, ok := ctx.Value(cancelKey{}).(context.Context)
	return ok && p.Err() != nil
}

// Deadlines is a client option: calls made with a context from WithDeadline
// stop at its deadline (and fail as EUNAVAILABLE), and calls made with a
// context from WithCancelOf stop when its parent is done.
func Deadlines(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphDeadline",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if t, ok := ctx.Value(deadlineKey{}).(time.Time); ok {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, t)
					defer cancel()
				}
				if p, ok := ctx.Value(cancelKey{}).(context.Context); ok {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
					defer context.AfterFunc(p, cancel)()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// RetryPolicy is a client option: the SDK's standard retryer (exponential
// backoff with jitter; throttling, 5xx and network errors retried) with the
// given attempts and largest backoff, without the client-side retry quota
// that would fail calls early under a burst of throttling. A request's
// deadline (Deadlines) still bounds the whole.
func RetryPolicy(attempts int, maxBackoff time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = attempts
			so.MaxBackoff = maxBackoff
			so.RateLimiter = ratelimit.None
		})
	}
}
