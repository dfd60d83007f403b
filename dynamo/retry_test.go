package dynamo

import (
	"context"
	"testing"
	"time"
)

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
