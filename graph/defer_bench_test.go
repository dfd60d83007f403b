package graph_test

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// BenchmarkDeferDashboard runs the dashboard of 10 projects of 20 tasks
// (seedScale) without @defer and with each project's tasks deferred, in
// each multipart format: what incremental execution costs beside the
// query without it, DynamoDB calls per operation included. Run:
//
//	go test ./graph -run '^$' -bench DeferDashboard -benchtime 20x -benchmem
func BenchmarkDeferDashboard(b *testing.B) {
	e := testenv.New(b)
	seedScale(b, e, 10, 20)
	deferred := strings.Replace(dashboard, "tasks(first: 20)", "... @defer(label: \"tasks\") { tasks(first: 20)", 1)
	deferred = strings.Replace(deferred, "} } } } } } } } }", "} } } } } } } } } }", 1)
	for _, tc := range []struct{ name, query, accept string }{
		{"plain", dashboard, "application/json"},
		{"incrementalSpec=v0.2", deferred, "multipart/mixed;incrementalSpec=v0.2"},
		{"deferSpec=20220824", deferred, "multipart/mixed;deferSpec=20220824"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e.Calls.Reset()
			for b.Loop() {
				if raw := e.Send(b, map[string]any{"query": tc.query}, e.As("u0"), testenv.Header("Accept", tc.accept)); !strings.Contains(string(raw.Body), `"title"`) {
					b.Fatalf("%s: %s", tc.name, raw.Body)
				}
			}
			b.ReportMetric(float64(e.Calls.Total())/float64(b.N), "ddbcalls/op")
		})
	}
}
