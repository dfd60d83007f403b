package dynamo

import (
	"context"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/client"
)

func TestBackoffStopsAtTheRequestDeadline(t *testing.T) {
	ctx := client.WithDeadline(context.Background(), time.Now())
	for n := range 8 {
		if backoff(ctx, n) {
			t.Fatalf("backoff(%d) slept past the request's deadline", n)
		}
	}
	if !backoff(context.Background(), 0) {
		t.Fatal("backoff(0) without a deadline gave up")
	}
}
