package app

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func TestDecideGC(t *testing.T) {
	const mib = int64(1) << 20
	none := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	tests := []struct {
		name      string
		available memlimit.Provider
		env       map[string]string
		want      GCSettings
	}{
		{"a memory figure: 75% of it as the limit, GOGC 400", memlimit.Limit(512 << 20), nil,
			GCSettings{Available: 512 * mib, MemoryLimit: 512 * mib / 100 * 75, GCPercent: 400}},
		{"GOMEMLIMIT overrides the limit, GOGC is still raised", memlimit.Limit(512 << 20), map[string]string{"GOMEMLIMIT": "100MiB"},
			GCSettings{Available: 512 * mib, GCPercent: 400}},
		{"GOGC overrides the percentage, the limit is still set", memlimit.Limit(512 << 20), map[string]string{"GOGC": "off"},
			GCSettings{Available: 512 * mib, MemoryLimit: 512 * mib / 100 * 75}},
		{"both set: nothing changes", memlimit.Limit(512 << 20), map[string]string{"GOGC": "200", "GOMEMLIMIT": "1GiB"},
			GCSettings{Available: 512 * mib}},
		{"no figure: nothing changes", none, nil, GCSettings{}},
		{"a figure beyond int64: nothing changes", memlimit.Limit(math.MaxUint64), nil, GCSettings{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := func(k string) string { return tt.env[k] }
			if got := decideGC(env, tt.available); got != tt.want {
				t.Errorf("decideGC = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTuneGCAppliesItsDecision(t *testing.T) {
	prevLimit, prevPercent := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(prevLimit); debug.SetGCPercent(prevPercent) })
	s := TuneGC(os.Getenv)
	if s.MemoryLimit > 0 {
		if got := debug.SetMemoryLimit(-1); got != s.MemoryLimit {
			t.Errorf("memory limit = %d, TuneGC said %d", got, s.MemoryLimit)
		}
	}
	if s.GCPercent > 0 {
		if got := debug.SetGCPercent(s.GCPercent); got != s.GCPercent {
			t.Errorf("GOGC = %d, TuneGC said %d", got, s.GCPercent)
		}
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" && s.Available > 0 && (s.MemoryLimit == 0 || s.GCPercent != GCPercent) {
		t.Errorf("TuneGC = %+v: a machine with a memory figure and no GOGC/GOMEMLIMIT gets both defaults", s)
	}
}
