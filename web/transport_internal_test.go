package web

import (
	"net/http/httptest"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// TestEveryStreamingTransportNamesItsStream holds the rows to the
// telemetry: a transport that streams responses (or upgrades) opens a
// long-lived stream, which the telemetry counts as an open connection by
// the row's name rather than as a request in flight (streamOf), and a
// transport that answers at once names none; streamOf reads the chosen
// row, never a header.
func TestEveryStreamingTransportNamesItsStream(t *testing.T) {
	rows := transports(Options{}, DefaultMaxBodyBytes)
	for i := range rows {
		row := &rows[i]
		streams := row.delivery == pipeline.ResponseStream || row.upgrades
		if streams != (row.stream != "") {
			t.Errorf("%v: delivery %v, upgrades %v, yet stream %q", row.protocols, row.delivery, row.upgrades, row.stream)
		}
		r := httptest.NewRequest("POST", "/query", nil)
		r = r.WithContext(pipeline.WithTransport(r.Context(), row))
		if got := streamOf(r); got != row.stream {
			t.Errorf("%v: streamOf = %q, want the row's %q", row.protocols, got, row.stream)
		}
	}
	// Headers that once told a stream apart, on a request no row took.
	r := httptest.NewRequest("GET", "/query", nil)
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Accept", "text/event-stream")
	if got := streamOf(r); got != "" {
		t.Errorf("a request no transport took: streamOf = %q, want none", got)
	}
}
