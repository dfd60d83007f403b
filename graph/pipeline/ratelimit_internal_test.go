package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

func TestRateLimitBucketsStayBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keys     int
		wantCap  int
		requests int
	}{
		{"a set cap", 100, 100, 10_000},
		{"the default cap", 0, DefaultRateKeys, DefaultRateKeys + 1_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewRateLimiter(Options{Limits: Limits{RateLimits: RateLimits{RateOps: 1, RateKeys: tc.keys}}})
			for i := range tc.requests {
				addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
				ctx := graphql.WithOperationContext(context.WithValue(context.Background(), clientAddrKey{}, addr), &graphql.OperationContext{})
				_ = operationStart{}.MutateOperationParameters(ctx, &graphql.RawParams{})
				if err := l.MutateOperationParameters(ctx, &graphql.RawParams{}); err != nil {
					t.Fatalf("operation %d from a new address: %v", i, err)
				}
			}
			if n := l.buckets.Len(); n != tc.wantCap {
				t.Errorf("%d buckets after %d addresses, want the cap %d", n, tc.requests, tc.wantCap)
			}
		})
	}
}
