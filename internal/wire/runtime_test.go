package wire

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// fsAt reads absolute paths from testdata/gc/<name>, a copy of the files a
// machine or container has under /proc and /sys.
func fsAt(name string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		return os.ReadFile(filepath.Join("testdata", "gc", name, filepath.FromSlash(p)))
	}
}

func TestDecideGC(t *testing.T) {
	const (
		mib  = int64(1) << 20
		m16G = int64(16384000) << 10 // MemTotal of the 16 GB machines
		m2G  = int64(2048000) << 10
	)
	noEnv := func(string) string { return "" }
	tests := []struct {
		name, dir string
		env       map[string]string
		want      GCSettings
	}{
		{"cgroup v2 limit in a container's own namespace is the root file", "v2-container", nil,
			GCSettings{Available: 512 * mib, MemoryLimit: 512 * mib / 100 * 75, GCPercent: 400}},
		{"cgroup v2 without a limit falls back to the machine's memory", "v2-unlimited", nil,
			GCSettings{Available: m2G, MemoryLimit: m2G / 100 * 75, GCPercent: 400}},
		{"cgroup v2: the smallest limit on the way up applies (the pod's, not the container's max)", "v2-nested", nil,
			GCSettings{Available: 1024 * mib, MemoryLimit: 1024 * mib / 100 * 75, GCPercent: 400}},
		{"cgroup v1 memory controller in a list of hierarchies", "v1", nil,
			GCSettings{Available: 256 * mib, MemoryLimit: 256 * mib / 100 * 75, GCPercent: 400}},
		{"cgroup v1 'unlimited' (2^63 rounded to a page) is no limit", "v1-unlimited", nil,
			GCSettings{Available: m2G, MemoryLimit: m2G / 100 * 75, GCPercent: 400}},
		{"GOMEMLIMIT overrides the limit, GOGC is still raised", "v2-container", map[string]string{"GOMEMLIMIT": "100MiB"},
			GCSettings{Available: 512 * mib, GCPercent: 400}},
		{"GOGC overrides the percentage, the limit is still set", "v2-container", map[string]string{"GOGC": "off"},
			GCSettings{Available: 512 * mib, MemoryLimit: 512 * mib / 100 * 75}},
		{"both set: nothing changes", "v2-container", map[string]string{"GOGC": "200", "GOMEMLIMIT": "1GiB"},
			GCSettings{Available: 512 * mib}},
		{"garbled files: no figure, nothing changes", "garbled", nil, GCSettings{}},
		{"no /proc or /sys: nothing changes", "none", nil, GCSettings{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := noEnv
			if tt.env != nil {
				env = func(k string) string { return tt.env[k] }
			}
			if got := decideGC(env, fsAt(tt.dir)); got != tt.want {
				t.Errorf("decideGC = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTuneGCAppliesItsDecision(t *testing.T) {
	prevLimit, prevPercent := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(prevLimit); debug.SetGCPercent(prevPercent) })
	s := TuneGC()
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
