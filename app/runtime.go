package app

import (
	"math"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// The garbage collector's defaults for the server (TuneGC). A request
// allocates a lot and keeps little: a dashboard allocates about 11 MB while
// the live heap stays around 5 to 25 MB, so with Go's default (GOGC=100:
// collect when the heap has doubled) the server spends a third of its CPU
// collecting. With a memory limit to fall back on, the collector can wait
// much longer.
const (
	// GCPercent is the GOGC the server runs with when a memory limit is
	// known and GOGC is not set: collect when the heap is five times what
	// the last collection left.
	GCPercent = 400
	// MemoryLimitPercent is the share of the memory available (the cgroup's
	// limit, or the machine's memory) that the server sets as its soft
	// memory limit (debug.SetMemoryLimit) when GOMEMLIMIT is not set: near
	// it the collector runs as often as it must, whatever GOGC says. The
	// rest is for the stacks, the runtime's own overhead and the kernel's
	// buffers the container is charged for.
	MemoryLimitPercent = 75
)

// GCSettings are what TuneGC decided.
type GCSettings struct {
	// Available is the memory found: the cgroup's memory limit, or the
	// machine's memory where there is none; 0 if neither could be read.
	Available int64
	// MemoryLimit is the limit set (0: none set, GOMEMLIMIT or the
	// runtime's default applies).
	MemoryLimit int64
	// GCPercent is the GOGC set (0: none set).
	GCPercent int
}

// TuneGC sets the garbage collector's defaults for a server in a container:
// a soft memory limit of MemoryLimitPercent of the memory available (the
// cgroup v2 or v1 memory limit, the smallest on the way up the hierarchy,
// or else the machine's memory; read by automemlimit), and GOGC at
// GCPercent, since the limit now bounds the heap. GOMEMLIMIT and GOGC in
// the environment (getenv: the server reads it once) override each (GOGC=off included); where no memory
// figure can be read, nothing changes.
func TuneGC(getenv func(string) string) GCSettings {
	s := decideGC(getenv, memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem))
	if s.MemoryLimit > 0 {
		debug.SetMemoryLimit(s.MemoryLimit)
	}
	if s.GCPercent > 0 {
		debug.SetGCPercent(s.GCPercent)
	}
	return s
}

// decideGC is TuneGC without its effects; available says how much memory
// there is.
func decideGC(getenv func(string) string, available memlimit.Provider) GCSettings {
	n, err := available()
	if err != nil || n == 0 || n > math.MaxInt64 {
		return GCSettings{}
	}
	s := GCSettings{Available: int64(n)}
	if getenv("GOMEMLIMIT") == "" {
		s.MemoryLimit = s.Available / 100 * MemoryLimitPercent
	}
	if getenv("GOGC") == "" {
		s.GCPercent = GCPercent
	}
	return s
}
