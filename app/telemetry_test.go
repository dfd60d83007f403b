package app

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph"
)

// -metrics-addr serves /metrics on a listener of its own, counting the API's
// requests; the API's mux has no /metrics.
func TestMetricsListener(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(k, "")
	}
	var logBuf bytes.Buffer
	tel, stop, err := startTelemetry(context.Background(), settings{metricsAddr: "127.0.0.1:0"}, slog.New(slog.NewJSONHandler(&logBuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Tracing bool
		Metrics string
	}
	if err := json.Unmarshal(logBuf.Bytes(), &line); err != nil || line.Tracing || !strings.HasPrefix(line.Metrics, "http://127.0.0.1:") {
		t.Fatalf("start line %s (%v): want tracing off and the metrics address", logBuf.String(), err)
	}

	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	store := mustStore(t, emb)
	authn := &auth.Authenticator{Secret: []byte("s")}
	api := httptest.NewServer(newMux(graph.Options{Deps: graph.Deps{Store: store, Auth: authn, Log: store.Log, Telemetry: tel}}, nil))
	defer api.Close()
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get(api.URL + "/metrics"); code != http.StatusNotFound {
		t.Errorf("the API answers /metrics with %d, want 404", code)
	}
	res, err := http.Post(api.URL+"/query", "application/json", strings.NewReader(`{"query":"{ me { id } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	code, body := get(line.Metrics)
	if code != http.StatusOK || !strings.Contains(body, `taskgraph_graphql_operation_duration_seconds_count{operation="anonymous",outcome="UNAUTHENTICATED",type="query"} 1`) ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics = %d:\n%s", code, body)
	}
	stop()
	c := http.Client{Timeout: 2 * time.Second}
	if _, err := c.Get(line.Metrics); err == nil {
		t.Error("the metrics listener still answers after stop")
	}
}
