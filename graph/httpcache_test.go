package graph_test

import (
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/bench"
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
	return cacheEnvOn(t, testenv.EmbeddedStore)
}

// cacheEnvOn is cacheEnv on backend b.
func cacheEnvOn(t *testing.T, b testenv.Backend) (*testenv.Env, http.Handler, *cacheClock) {
	t.Helper()
	e := testenv.NewOn(t, b)
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

// TestTheDashboardsNotModifiedCostsTwoCalls pins what a 304 of the
// benchmark's dashboard (10 projects × 20 tasks × 5 comments, with members,
// assignees and authors) costs: the pending profile jobs (one Query: the
// answer shows other users) and the viewer's profile with the 10 projects
// (one BatchGetItem, eventually consistent: 11 items under 4 KB, 0.5 RCU
// each), against the 27 calls of the answer. On DynamoDB Local, which
// reports what each call consumed, the read units too.
func TestTheDashboardsNotModifiedCostsTwoCalls(t *testing.T) {
	for _, b := range []testenv.Backend{testenv.EmbeddedStore, testenv.DynamoDBLocal} {
		t.Run(b.String(), func(t *testing.T) {
			e, h, clk := cacheEnvOn(t, b)
			clk.t = bench.Now
			d, f := bench.BuildDataset(e.Store, 1)
			e.MustImport(t, d)
			clk.Advance()
			dash := benchOp(t, "dashboard")
			e.Calls.Reset()
			first := cacheGet(t, e, h, f.Viewer, dash, nil, "")
			answered, answeredRCU := e.Calls.Total(), read(e)
			tag := first.Header.Get("ETag")
			if first.Status != http.StatusOK || tag == "" {
				t.Fatalf("the dashboard answered %d with ETag %q: %.300s", first.Status, tag, first.Body)
			}
			e.Calls.Reset()
			again := cacheGet(t, e, h, f.Viewer, dash, nil, tag)
			if again.Status != http.StatusNotModified || len(again.Body) != 0 || again.Header.Get("ETag") != tag {
				t.Fatalf("the unchanged dashboard answered %d, ETag %q, %d bytes; want 304 with its tag and no body",
					again.Status, again.Header.Get("ETag"), len(again.Body))
			}
			want := map[string]int{"Query": 1, "BatchGetItem": 1}
			if got := e.Calls.ByOp(); !maps.Equal(got, want) {
				t.Errorf("the 304 made %v calls, want %v", got, want)
			}
			rcu := read(e)
			t.Logf("%s: the answer: %d calls, %.1f RCU; its 304: %d calls, %.1f RCU (%.1f%%)", b, answered, answeredRCU,
				e.Calls.Total(), rcu, 100*rcu/max(answeredRCU, 1))
			if b == testenv.DynamoDBLocal && rcu != 5.5 && rcu != 6 {
				t.Errorf("the 304 consumed %.1f RCU, want 5.5 (11 items) and at most 0.5 for the pending jobs' Query", rcu)
			}
		})
	}
}

// read is the read units the Env's calls consumed (reported by DynamoDB
// Local, none by the embedded store).
func read(e *testenv.Env) float64 { r, _ := e.Calls.Capacity(); return r }

// benchOp is the benchmark suite's operation name's document.
func benchOp(t *testing.T, name string) string {
	t.Helper()
	for _, op := range bench.Suite() {
		if op.Name == name {
			return op.Query
		}
	}
	t.Fatalf("no operation %s in the benchmark's suite", name)
	return ""
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
