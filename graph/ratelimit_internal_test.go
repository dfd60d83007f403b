package graph

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
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
			l := newRateLimits(Options{RateLimits: RateLimits{RateOps: 1, RateKeys: tc.keys}})
			ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
			h := l.Middleware(ok)
			for i := range tc.requests {
				req := httptest.NewRequest(http.MethodPost, "/query", nil)
				req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1234", i>>16&255, i>>8&255, i&255)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d from a new address: %d", i, rec.Code)
				}
			}
			if n := l.buckets.Len(); n != tc.wantCap {
				t.Errorf("%d buckets after %d addresses, want the cap %d", n, tc.requests, tc.wantCap)
			}
		})
	}
}
