package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/client"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRequest is the telemetry's own work for one request of one
// operation that reads one loader batch with two DynamoDB calls: the HTTP
// wrapper, the batch, the calls and the operation, with nothing else in the
// request. Run:
//
//	go test ./internal/telemetry -run '^$' -bench Request -benchmem
func BenchmarkRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  *Config
	}{
		{"off", nil},
		{"metrics", &Config{Metrics: true}},
		{"tracing", &Config{SpanExporter: discard{}}},
		{"both", &Config{Metrics: true, SpanExporter: discard{}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var t *Telemetry
			if c.cfg != nil {
				c.cfg.Env = func(string) string { return "" }
				var err error
				if t, err = New(context.Background(), *c.cfg); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now()
			h := t.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := r.Context()
				tel := FromContext(ctx)
				bctx, end := tel.StartBatch(ctx, "objects", 3)
				for range 2 {
					tel.ObserveCall(bctx, &client.Call{Operation: "Query", Table: "t", Start: now, End: now, Attempts: 1, ReadUnits: 1})
				}
				end()
				tel.ObserveOperation(Operation{Name: "Dashboard", Type: "query", Outcome: "OK", Seconds: 0.01, ReadUnits: 2})
				w.WriteHeader(http.StatusOK)
			}), nil)
			req := httptest.NewRequest(http.MethodPost, "/query", nil) // the middleware's request alone, no GraphQL one: not testenv.Send
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
