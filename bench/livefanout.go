package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// FanOuts is a snapshot of a live instance's taskgraph_live_event_fanout_seconds:
// each bucket's upper bound and its cumulative count.
type FanOuts struct {
	Bounds []float64
	Counts []uint64
}

// FanOuts reads the last live instance's fan-out histogram (LiveHandler):
// how long its events took from their arrival off the stream until written
// to the last local subscriber. Zero without a live instance.
func (e *Env) FanOuts() (FanOuts, error) {
	var f FanOuts
	if e.liveTel == nil {
		return f, nil
	}
	rec := httptest.NewRecorder()
	e.liveTel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		return f, fmt.Errorf("reading the live instance's metrics: %w", err)
	}
	for _, m := range fams["taskgraph_live_event_fanout_seconds"].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			f.Bounds = append(f.Bounds, b.GetUpperBound())
			f.Counts = append(f.Counts, b.GetCumulativeCount())
		}
	}
	return f, nil
}

// Since returns the observations of f made after before (the same buckets).
func (f FanOuts) Since(before FanOuts) FanOuts {
	d := FanOuts{Bounds: f.Bounds, Counts: make([]uint64, len(f.Counts))}
	for i := range f.Counts {
		d.Counts[i] = f.Counts[i]
		if i < len(before.Counts) {
			d.Counts[i] -= before.Counts[i]
		}
	}
	return d
}

// Total is how many observations f holds (its last bucket's count; the
// histogram's buckets end at 10 s).
func (f FanOuts) Total() uint64 {
	if len(f.Counts) == 0 {
		return 0
	}
	return f.Counts[len(f.Counts)-1]
}

// AtMost returns the upper bound of the bucket that holds the p-th
// percentile of f's observations: the percentile is at most that long.
func (f FanOuts) AtMost(p int) string {
	n := f.Total()
	if n == 0 {
		return "-"
	}
	want := (n*uint64(p) + 99) / 100
	for i, c := range f.Counts {
		if c >= want {
			return fmt.Sprintf("≤ %d ms", (time.Duration(f.Bounds[i] * float64(time.Second))).Milliseconds())
		}
	}
	return "> 10 s"
}
