package bench

import "testing"

// A fan-out histogram's percentiles are read as the bound of the bucket
// that holds them, over the observations made between two snapshots.
func TestFanOutsPercentileIsItsBucketsBound(t *testing.T) {
	bounds := []float64{.1, .25, .5, 10}
	before := FanOuts{Bounds: bounds, Counts: []uint64{5, 5, 5, 5}}
	after := FanOuts{Bounds: bounds, Counts: []uint64{95, 103, 105, 105}} // 90, 8, 2 more
	d := after.Since(before)
	if d.Total() != 100 {
		t.Fatalf("observations since %d, want 100", d.Total())
	}
	for _, c := range []struct {
		p    int
		want string
	}{{50, "≤ 100 ms"}, {90, "≤ 100 ms"}, {91, "≤ 250 ms"}, {99, "≤ 500 ms"}} {
		if got := d.AtMost(c.p); got != c.want {
			t.Errorf("p%d %s, want %s", c.p, got, c.want)
		}
	}
	if got := (FanOuts{}).AtMost(99); got != "-" {
		t.Errorf("no observations: %s, want -", got)
	}
}
