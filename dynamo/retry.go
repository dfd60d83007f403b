package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Optimistic concurrency: a mutation reads, then writes on the condition
// that what it read has not changed (a rev, a version, an assignSeq). When a
// concurrent writer won, the condition fails as errRetry and retryOnChange
// runs the whole read-then-write again, a few times at most.

// errRetry marks a condition whose failure means the state read before the
// write changed: the mutation reads again and retries.
var errRetry = errors.New("state changed since it was read")

// txnRetries is how many times a mutation or a transaction is retried.
const txnRetries = 4

// concurrentChange is the ECONFLICT message of a write a concurrent change
// kept beating.
const concurrentChange = "a concurrent change won; retry"

// retryOnChange runs a read-then-conditional-write until its condition holds
// (f returns something else than errRetry), txnRetries times more at most,
// with backoff between runs; then the change is ECONFLICT with the message
// conflict.
func retryOnChange[T any](ctx context.Context, conflict string, f func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := f()
		if !errors.Is(err, errRetry) {
			return v, err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			var zero T
			return zero, domain.Errorf(domain.ECONFLICT, "%s", conflict)
		}
	}
}

// backoff sleeps before retry attempt n (0-based): exponential with full
// jitter, capped at a second. It returns false, at once, when ctx has ended
// or the sleep would pass the request's deadline (client.WithDeadline): there would
// be no time left for the call.
func backoff(ctx context.Context, n int) bool {
	d := min(25*time.Millisecond<<min(n, 6), time.Second)
	d = rand.N(d) + time.Millisecond
	if t, ok := client.DeadlineOf(ctx); ok && time.Until(t) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
