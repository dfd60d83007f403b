package graph_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// HTTP caching of GET queries (graph/etag, docs/caching.md).

// cacheClock is a clock the test moves: the store's and the pipeline's.
type cacheClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *cacheClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock past the settle window (the default's).
func (c *cacheClock) Advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(pipeline.DefaultTimeout + pipeline.DefaultHTTPCacheSettle + time.Second)
}

// cacheEnv is an Env whose handler and store share a clock the test moves.
func cacheEnv(t *testing.T) (*testenv.Env, http.Handler, *cacheClock) {
	t.Helper()
	e := testenv.New(t)
	clk := &cacheClock{t: testenv.Now}
	e.Store.Now = clk.Now
	h := e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Now: clk.Now}})
	return e, h, clk
}

// get asks query with GET as viewer, with the tag ifNoneMatch ("": none).
func cacheGet(t *testing.T, e *testenv.Env, h http.Handler, viewer, query string, vars map[string]any, ifNoneMatch string) testenv.Raw {
	t.Helper()
	params := map[string]any{"query": query}
	if vars != nil {
		params["variables"] = vars
	}
	opts := []testenv.RequestOption{testenv.GET(), e.As(viewer), testenv.Via(h)}
	if ifNoneMatch != "" {
		opts = append(opts, testenv.Header("If-None-Match", ifNoneMatch))
	}
	return e.Send(t, params, opts...)
}

func TestAnUnchangedDashboardIsNotModified(t *testing.T) {
	e, h, clk := cacheEnv(t)
	e.MustSeed(t)
	clk.Advance()
	first := cacheGet(t, e, h, "alice", testenv.Dashboard, nil, "")
	tag := first.Header.Get("ETag")
	t.Logf("status %d tag %q cc %q vary %q", first.Status, tag, first.Header.Get("Cache-Control"), first.Header.Values("Vary"))
	if tag == "" {
		t.Fatalf("no ETag: %s", first.Body)
	}
	e.Calls.Reset()
	again := cacheGet(t, e, h, "alice", testenv.Dashboard, nil, tag)
	read, _ := e.Calls.Capacity()
	t.Logf("status %d body %q calls %s rcu %v", again.Status, again.Body, e.Calls, read)
	if again.Status != http.StatusNotModified {
		t.Fatalf("status %d", again.Status)
	}
}
