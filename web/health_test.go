package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// /healthz's code is the table's (a load balancer keeps an instance whose
// table answers); its body says what is degraded.
func TestHealthSaysWhatIsDegraded(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ready, err := live.Open(context.Background(), live.Config{Log: quiet}) // embedded: ready
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ready.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0") // a port where no NATS answers
	if err != nil {
		t.Fatal(err)
	}
	dead := "nats://" + l.Addr().String()
	l.Close()
	down, err := live.Open(context.Background(), live.Config{URL: dead, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	tableOK := func(context.Context) error { return nil }
	tableDown := func(context.Context) error { return errors.New("dial tcp: refused") }
	for _, tc := range []struct {
		name      string
		ping      func(context.Context) error
		broker    *live.Broker
		code      int
		status    string
		liveState live.State
	}{
		{"all well", tableOK, ready, 200, "ok", live.StateReady},
		{"NATS down: degraded, still 200", tableOK, down, 200, "degraded", live.StateConnecting},
		{"the table down: 503", tableDown, ready, 503, "unavailable", live.StateReady},
		{"both down: 503", tableDown, down, 503, "unavailable", live.StateConnecting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			web.Health(tc.ping, func() *live.Broker { return tc.broker }).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			var rep web.HealthReport
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.code || rep.Status != tc.status || rep.Live == nil || rep.Live.State != tc.liveState || rep.Live.Detail == "" {
				t.Fatalf("GET /healthz = %d %s, want %d, status %q, live %q with its detail", rec.Code, rec.Body, tc.code, tc.status, tc.liveState)
			}
			if body := rec.Body.String(); strings.Contains(body, "dial tcp") || strings.Contains(body, "no servers") || strings.Contains(body, "127.0.0.1") {
				t.Fatalf("the body tells the error or the broker's address: %s", body)
			}
		})
	}
}
