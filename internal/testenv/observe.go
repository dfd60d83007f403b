package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/taskgraph/taskgraph/internal/telemetry"
)

// NoEnv is an environment with no OTEL_* variable set.
func NoEnv(string) string { return "" }

// MustTelemetry returns telemetry for a test (cfg's, its environment NoEnv
// unless cfg gives one), shut down when the test ends.
func MustTelemetry(tb testing.TB, cfg telemetry.Config) *telemetry.Telemetry {
	tb.Helper()
	if cfg.Env == nil {
		cfg.Env = NoEnv
	}
	tel, err := telemetry.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

// Scrape reads the telemetry's /metrics page into metric families.
func Scrape(tb testing.TB, tel *telemetry.Telemetry) map[string]*dto.MetricFamily {
	tb.Helper()
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /metrics: %d", rec.Code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		tb.Fatalf("parsing /metrics: %v\n%s", err, rec.Body.String())
	}
	return fams
}

// Labels writes a metric's label set as name=value pairs, comma separated,
// in the exposition's order.
func Labels(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(parts, ",")
}

// SampleCounts maps each label set of a histogram to its sample count.
func SampleCounts(fams map[string]*dto.MetricFamily, name string) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range fams[name].GetMetric() {
		out[Labels(m)] = m.GetHistogram().GetSampleCount()
	}
	return out
}

// Values maps each label set of a counter or gauge to its value.
func Values(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		switch {
		case m.Counter != nil:
			out[Labels(m)] = m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[Labels(m)] = m.GetGauge().GetValue()
		}
	}
	return out
}

// OpLines returns the operation lines ("msg": "graphql") of a JSON log
// written to buf, each decoded; a line that is not JSON fails tb.
func OpLines(tb testing.TB, buf *bytes.Buffer) []map[string]any {
	tb.Helper()
	var ops []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		if m["msg"] == "graphql" {
			ops = append(ops, m)
		}
	}
	return ops
}
