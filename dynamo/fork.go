package dynamo

import "context"

// forkKey holds a context's fork function (WithFork).
type forkKey struct{}

// WithFork returns ctx with a fork function, told of the goroutines that
// reads under ctx start and wait for: fork(n) is called before n of them
// start, and each calls the function it returns when it ends. The
// dispatch by level of a request's batches counts its goroutines so (see
// graph/dispatch); without one, nothing is told.
func WithFork(ctx context.Context, fork func(n int) (done func())) context.Context {
	return context.WithValue(ctx, forkKey{}, fork)
}

// ForkOf returns ctx's fork function (WithFork), or one that does nothing.
func ForkOf(ctx context.Context) func(n int) (done func()) {
	if f, ok := ctx.Value(forkKey{}).(func(int) func()); ok {
		return f
	}
	return noFork
}

func noFork(int) func() { return doneNothing }

func doneNothing() {}
