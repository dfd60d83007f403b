package dispatch

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// The safety net: an operation whose count never drops to zero (a field
// counted as about to start that never starts) has its loaders' keys read
// once nothing of it has moved for Stall, counted in Stalls; while the
// count does drop to zero, a level's keys go when it does, and the safety
// net never fires.
func TestAStalledLevelIsReadByTheSafetyNet(t *testing.T) {
	levels := &Levels{Stall: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		name    string
		phantom bool // a field counted that never starts
		stalls  int64
	}{{"every field waits: the level goes at once", false, 0}, {"a field never starts: the safety net reads the level", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			before := levels.Stalls()
			s := levels.Operation().(*opDispatch)
			flushed := make(chan struct{}, 1)
			l := s.Loader(func() { flushed <- struct{}{} })
			s.mu.Lock()
			s.active = 1 // the field that loads
			if tc.phantom {
				s.active++
			}
			s.mu.Unlock()
			wait := l.Load(context.Background(), "k", func() {})
			wait() // the field waits on its key
			select {
			case <-flushed:
			case <-time.After(time.Minute): // a hang, not a timing assertion
				t.Fatal("the level's key was never read")
			}
			if got := levels.Stalls() - before; got != tc.stalls {
				t.Errorf("the safety net fired %d times, want %d", got, tc.stalls)
			}
		})
	}
}
