package dynamo

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// idGen issues ULIDs that strictly increase within the process, even when
// several are made in one millisecond or the clock steps back.
type idGen struct {
	mu      sync.Mutex
	lastMS  uint64
	entropy *ulid.MonotonicEntropy
}

func newIDGen() *idGen {
	return &idGen{entropy: ulid.Monotonic(rand.Reader, 0)}
}

func (g *idGen) next(now time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := ulid.Timestamp(now)
	if ms < g.lastMS {
		ms = g.lastMS
	}
	g.lastMS = ms
	return ulid.MustNew(ms, g.entropy).String()
}
