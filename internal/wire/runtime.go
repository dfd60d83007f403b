package wire

import (
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
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
	// Available is the memory found: the smallest cgroup memory limit on the
	// way from the process's cgroup to the root, or the machine's memory if
	// smaller or there is none; 0 if neither could be read.
	Available int64
	// MemoryLimit is the limit set (0: none set, GOMEMLIMIT or the
	// runtime's default applies).
	MemoryLimit int64
	// GCPercent is the GOGC set (0: none set).
	GCPercent int
}

// TuneGC sets the garbage collector's defaults for a server in a container:
// a soft memory limit of MemoryLimitPercent of the memory available (the
// cgroup v2 or v1 memory limit, or the machine's memory), and GOGC at
// GCPercent, since the limit now bounds the heap. GOMEMLIMIT and GOGC in
// the environment override each (GOGC=off included); where no memory
// figure can be read (no /proc or /sys), nothing changes.
func TuneGC() GCSettings {
	s := decideGC(os.Getenv, os.ReadFile)
	if s.MemoryLimit > 0 {
		debug.SetMemoryLimit(s.MemoryLimit)
	}
	if s.GCPercent > 0 {
		debug.SetGCPercent(s.GCPercent)
	}
	return s
}

// decideGC is TuneGC without its effects; readFile reads absolute paths
// (/proc/self/cgroup, /proc/meminfo, /sys/fs/cgroup/…).
func decideGC(getenv func(string) string, readFile func(string) ([]byte, error)) GCSettings {
	s := GCSettings{Available: availableMemory(readFile)}
	if s.Available <= 0 {
		return s
	}
	if getenv("GOMEMLIMIT") == "" {
		s.MemoryLimit = s.Available / 100 * MemoryLimitPercent
	}
	if getenv("GOGC") == "" {
		s.GCPercent = GCPercent
	}
	return s
}

// availableMemory returns the smallest of the machine's memory and the
// memory limits of the process's cgroup and its ancestors, or 0.
func availableMemory(readFile func(string) ([]byte, error)) int64 {
	avail := memTotal(readFile)
	if lim := cgroupLimit(readFile); lim > 0 && (avail <= 0 || lim < avail) {
		avail = lim
	}
	return avail
}

// memTotal reads MemTotal from /proc/meminfo, in bytes; 0 if unknown.
func memTotal(readFile func(string) ([]byte, error)) int64 {
	b, err := readFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupLimit returns the smallest memory limit of the process's cgroup
// and its ancestors, cgroup v2 (memory.max) or v1 (memory.limit_in_bytes),
// as /proc/self/cgroup names it and /sys/fs/cgroup mounts it; 0 if none.
// In a container with its own cgroup namespace the process's cgroup is "/"
// and the limit is the mount's root file.
func cgroupLimit(readFile func(string) ([]byte, error)) int64 {
	b, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var best int64
	take := func(lim int64) {
		if lim > 0 && (best == 0 || lim < best) {
			best = lim
		}
	}
	for line := range strings.Lines(string(b)) {
		// hierarchy-id:controllers:path
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "": // v2
			take(walkUp(readFile, "/sys/fs/cgroup", f[2], "memory.max"))
		case hasController(f[1], "memory"): // v1
			take(walkUp(readFile, "/sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes"))
		}
	}
	return best
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// unlimitedV1 is the smallest value cgroup v1 reports for "no limit" (the
// largest int64 rounded down to a page; anything this large is no limit).
const unlimitedV1 = 1 << 62

// walkUp reads file in the cgroup directory of path under mount and in each
// of its ancestors up to the mount's root, and returns the smallest limit
// found (0 if none): a parent's limit applies to its children too.
func walkUp(readFile func(string) ([]byte, error), mount, p, file string) int64 {
	var best int64
	for p = path.Clean(p); ; p = path.Dir(p) {
		if b, err := readFile(path.Join(mount, p, file)); err == nil {
			v := strings.TrimSpace(string(b))
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < unlimitedV1 && (best == 0 || n < best) {
				best = n
			}
		}
		if p == "/" {
			return best
		}
	}
}
