//go:build !unix

package bench

import "time"

// selfCPU is unknown (0) where getrusage is missing.
func selfCPU() time.Duration { return 0 }

// processCPU is unknown where /proc is missing.
func processCPU(int) (time.Duration, bool) { return 0, false }
