package dynamo

import (
	"context"
	"testing"
	"time"
)

func TestDrainRetriesWhileRoundsMakeProgress(t *testing.T) {
	noSleep := func(context.Context, int) bool { return true }
	for _, tc := range []struct {
		name   string
		keep   func(n int) int // of n requests sent, how many come back unprocessed
		ok     bool
		rounds int
	}{
		{"one request a round: 40 rounds, far past the stall limit", func(n int) int { return n - 1 }, true, 40},
		{"half a round", func(n int) int { return n / 2 }, true, 6},
		{"nothing ever processed: gives up after batchRetries rounds", func(n int) int { return n }, false, batchRetries},
		{"progress, then stalls: only the stalls count", func(n int) int {
			if n > 30 {
				return n - 1
			}
			return n
		}, false, 10 + batchRetries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := make([]int, 40)
			rounds := 0
			ok, err := drain(context.Background(), req, noSleep, func(_ context.Context, req []int) ([]int, error) {
				rounds++
				return req[:tc.keep(len(req))], nil
			})
			if err != nil || ok != tc.ok || rounds != tc.rounds {
				t.Fatalf("drain = %v, %v after %d rounds; want %v after %d", ok, err, rounds, tc.ok, tc.rounds)
			}
		})
	}
	t.Run("a wait that ends (deadline or cancel) ends it", func(t *testing.T) {
		ends := func(context.Context, int) bool { return false }
		ok, err := drain(context.Background(), []int{1, 2}, ends, func(_ context.Context, req []int) ([]int, error) { return req[1:], nil })
		if ok || err != nil {
			t.Fatalf("drain = %v, %v; want false, nil", ok, err)
		}
	})
}

func TestBackoffStopsAtTheRequestDeadline(t *testing.T) {
	ctx := WithDeadline(context.Background(), time.Now())
	for n := range 8 {
		if backoff(ctx, n) {
			t.Fatalf("backoff(%d) slept past the request's deadline", n)
		}
	}
	if !backoff(context.Background(), 0) {
		t.Fatal("backoff(0) without a deadline gave up")
	}
}
