package graph_test

import (
	"context"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discard is a span exporter that drops what it gets.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTelemetry runs a small query and the dashboard with telemetry
// off, metrics on, tracing on (every span sampled, exported synchronously
// to nowhere), and both: what the telemetry costs a request. Run:
//
//	go test ./graph -run '^$' -bench Telemetry -benchmem -count 3
func BenchmarkTelemetry(b *testing.B) {
	e := testenv.New(b)
	seedScale(b, e, 3, 10)
	for _, q := range []struct{ name, doc string }{{"me", "query Me { me { id name } }"}, {"dashboard", dashboard}} {
		for _, c := range []struct {
			name string
			cfg  *telemetry.Config
		}{
			{"off", nil},
			{"metrics", &telemetry.Config{Metrics: true}},
			{"tracing", &telemetry.Config{SpanExporter: discard{}}},
			{"both", &telemetry.Config{Metrics: true, SpanExporter: discard{}}},
		} {
			var tel *telemetry.Telemetry
			if c.cfg != nil {
				c.cfg.Env = testenv.NoEnv
				var err error
				if tel, err = telemetry.New(context.Background(), *c.cfg); err != nil {
					b.Fatal(err)
				}
			}
			e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
			b.Run(q.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					e.MustQuery(b, "u0", q.doc, nil, nil)
				}
			})
		}
	}
}
