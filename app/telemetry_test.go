package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// -metrics-addr serves /metrics on a listener of its own, counting the API's
// requests; the API's mux has no /metrics; Close stops the listener.
func TestMetricsListener(t *testing.T) {
	c, err := app.LoadConfig([]string{"-addr=127.0.0.1:0", "-metrics-addr=127.0.0.1:0", "-data-dir="}, app.Env{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logBuf testenv.LogBuffer
	a := &app.App{Config: c, Log: slog.New(slog.NewJSONHandler(&logBuf, nil))}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var line struct {
		Msg     string
		Tracing bool
		Metrics string
	}
	for l := range strings.Lines(logBuf.String()) {
		if err := json.Unmarshal([]byte(l), &line); err == nil && line.Msg == "telemetry" {
			break
		}
	}
	if line.Msg != "telemetry" || line.Tracing || !strings.HasPrefix(line.Metrics, "http://127.0.0.1:") {
		t.Fatalf("start lines %s: want one of the telemetry, tracing off and the metrics address", logBuf.String())
	}

	if code, _ := httpGet(t, a.URL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("the API answers /metrics with %d, want 404", code)
	}
	if res, err := testenv.PostURL(a.URL+"/query", "", "{ me { id } }", nil); err != nil || len(res.Errors) != 1 {
		t.Fatalf("a query without a token: %+v, %v", res, err)
	}
	code, body := httpGet(t, line.Metrics)
	if code != http.StatusOK || !strings.Contains(body, `taskgraph_graphql_operation_duration_seconds_count{operation="anonymous",outcome="UNAUTHENTICATED",type="query"} 1`) ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics = %d:\n%s", code, body)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	hc := http.Client{Timeout: 2 * time.Second}
	if _, err := hc.Get(line.Metrics); err == nil {
		t.Error("the metrics listener still answers after Close")
	}
}
