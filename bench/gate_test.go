package bench

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDoer answers every request at once with its URL path as the body.
type fakeDoer struct{ calls atomic.Int64 }

func (f *fakeDoer) Do(r *http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(r.URL.Path)), Request: r}, nil
}

// call sends one request through the gate and returns its answer's body.
func call(tb testing.TB, c *http.Client, path string) string {
	tb.Helper()
	res, err := c.Get("http://gate.test" + path)
	if err != nil {
		tb.Error(err)
		return ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Error(err)
	}
	return string(b)
}

func TestGate(t *testing.T) {
	const quiet = 20 * time.Millisecond
	tests := []struct {
		name         string
		on           bool
		run          func(t *testing.T, c *http.Client)
		wantReleases int64
		wantCalls    int64
	}{
		{"calls made together are one round trip", true, func(t *testing.T, c *http.Client) {
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() { call(t, c, "/x") })
			}
			wg.Wait()
		}, 1, 20},
		{"calls a little apart, within the quiet window, are one round trip", true, func(t *testing.T, c *http.Client) {
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() { call(t, c, "/x") })
				time.Sleep(quiet / 5)
			}
			wg.Wait()
		}, 1, 3},
		{"a call that waits for an answer is a round trip of its own", true, func(t *testing.T, c *http.Client) {
			for range 3 {
				call(t, c, "/x")
			}
		}, 3, 3},
		{"two levels of fan-out are two round trips", true, func(t *testing.T, c *http.Client) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					call(t, c, "/level1")
					call(t, c, "/level2")
				})
			}
			wg.Wait()
		}, 2, 8},
		{"every caller gets its own answer", true, func(t *testing.T, c *http.Client) {
			var wg sync.WaitGroup
			for _, p := range []string{"/a", "/b", "/c"} {
				wg.Go(func() {
					if got := call(t, c, p); got != p {
						t.Errorf("answer to %s is %q", p, got)
					}
				})
			}
			wg.Wait()
		}, 1, 3},
		{"off, calls pass straight through and no round trip is counted", false, func(t *testing.T, c *http.Client) {
			for range 3 {
				call(t, c, "/x")
			}
		}, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDoer{}
			g := NewGate(f, quiet)
			defer g.Close()
			g.SetOn(tt.on)
			tt.run(t, g.Client())
			if got := g.Releases(); got != tt.wantReleases {
				t.Errorf("releases = %d (calls per release %v), want %d", got, g.Sizes(0), tt.wantReleases)
			}
			if got := f.calls.Load(); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}
