package testenv

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Saturate keeps every processor of the test busy until the test ends (or
// the returned function is called): GOMAXPROCS×2 goroutines spinning, so
// that the handler's goroutines wait for a processor as on a machine under
// load. For tests that prove counts do not depend on the machine's load.
func Saturate(tb testing.TB) (stop func()) {
	tb.Helper()
	var done atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) * 2 {
		wg.Go(func() {
			n := 0
			for !done.Load() {
				n++ // the loop is preemptible: each iteration reads done
			}
			_ = n
		})
	}
	var once sync.Once
	stop = func() { once.Do(func() { done.Store(true); wg.Wait() }) }
	tb.Cleanup(stop)
	return stop
}
