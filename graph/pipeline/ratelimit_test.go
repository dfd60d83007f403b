package pipeline_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// rateClock is a clock the test advances by hand.
type rateClock struct{ offset atomic.Int64 }

func (c *rateClock) Now() time.Time          { return testenv.Now.Add(time.Duration(c.offset.Load())) }
func (c *rateClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
func newRateHandler(e *testenv.Env, c *rateClock, l pipeline.RateLimits) http.Handler {
	return e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Now: c.Now}, Limits: pipeline.Limits{RateLimits: l}})
}

// rateResult is one response: status, Retry-After and body.
type rateResult struct {
	status     int
	retryAfter string
	res        testenv.Response
}

// ratePost posts query to h from addr, as viewer ("" for no token, "bad"
// for a token that does not verify).
func ratePost(t *testing.T, e *testenv.Env, h http.Handler, viewer, addr, query string) rateResult {
	t.Helper()
	auth := e.As(viewer)
	if viewer == "bad" {
		auth = testenv.Header("Authorization", "Bearer not.a.token")
	}
	r := e.Send(t, nil, testenv.Via(h), testenv.RemoteAddr(addr), auth, testenv.RawBody(http.MethodPost, "application/json", limQuery(query)))
	return rateResult{r.Status, r.Header.Get("Retry-After"), *r.Decode(t)}
}

// mustPass fails unless r is a 200 without errors.
func (r rateResult) mustPass(t *testing.T) {
	t.Helper()
	if r.status != http.StatusOK || len(r.res.Errors) != 0 || r.retryAfter != "" {
		t.Fatalf("want 200 without errors, got %d (Retry-After %q) %+v", r.status, r.retryAfter, r.res.Errors)
	}
}

// mustBeLimited fails unless r is a 429 with Retry-After, one RATE_LIMITED
// error and "data": null.
func (r rateResult) mustBeLimited(t *testing.T) {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.retryAfter == "" || len(r.res.Errors) != 1 ||
		r.res.Errors[0].Code() != codes.RateLimited || r.res.Data != nil || // a request error: no data entry
		!strings.Contains(r.res.Errors[0].Message, "retry after "+r.retryAfter+" s") {
		t.Fatalf("want 429 RATE_LIMITED with Retry-After, got %d (Retry-After %q) data %s %+v",
			r.status, r.retryAfter, r.res.Data, r.res.Errors)
	}
}

const (
	rateAddr   = "192.0.2.1:4000"
	rateCheap  = "{ me { id } }"
	rateIntro  = "{ __schema { queryType { name } } }"
	rateCostly = "{ me { projects(first: 100) { nodes { id name } } } }" // about 300
)

func TestRateLimitOperations(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	var c rateClock
	h := newRateHandler(e, &c, pipeline.RateLimits{RateOps: 1, RateOpsBurst: 3})

	for range 3 {
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustPass(t)
	}
	t.Run("the operation past the burst gets 429 and reads nothing", func(t *testing.T) {
		e.Calls.Reset()
		r := ratePost(t, e, h, "alice", rateAddr, rateCheap)
		r.mustBeLimited(t)
		if r.retryAfter != "1" {
			t.Errorf("Retry-After %q, want 1 (one token a second)", r.retryAfter)
		}
		if n := e.Calls.Total(); n != 0 {
			t.Errorf("%d DynamoDB calls for the refused operation, want 0", n)
		}
	})
	t.Run("another viewer from the same address is not affected", func(t *testing.T) {
		ratePost(t, e, h, "bob", rateAddr, rateCheap).mustPass(t)
	})
	t.Run("a refused request takes no token", func(t *testing.T) {
		c.Advance(999 * time.Millisecond)
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustBeLimited(t)
		c.Advance(time.Millisecond)
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustPass(t)
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustBeLimited(t)
	})
	t.Run("after a while the burst is back", func(t *testing.T) {
		c.Advance(time.Minute)
		for range 3 {
			ratePost(t, e, h, "alice", rateAddr, rateCheap).mustPass(t)
		}
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustBeLimited(t)
	})
}

func TestRateLimitCost(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	var c rateClock
	h := newRateHandler(e, &c, pipeline.RateLimits{RateCost: 10, RateCostBurst: 500})

	ratePost(t, e, h, "alice", rateAddr, rateCostly).mustPass(t)
	t.Run("a query costlier than what is left gets 429 and reads nothing", func(t *testing.T) {
		e.Calls.Reset()
		r := ratePost(t, e, h, "alice", rateAddr, rateCostly)
		r.mustBeLimited(t)
		// About 100 units are missing at 10 a second.
		if s, err := strconv.Atoi(r.retryAfter); err != nil || s < 2 {
			t.Errorf("Retry-After %q, want several seconds", r.retryAfter)
		}
		if n := e.Calls.Total(); n != 0 {
			t.Errorf("%d DynamoDB calls for the refused operation, want 0", n)
		}
	})
	t.Run("cheap queries still pass", func(t *testing.T) {
		for range 5 {
			ratePost(t, e, h, "alice", rateAddr, rateCheap).mustPass(t)
		}
	})
	t.Run("another viewer is not affected", func(t *testing.T) {
		ratePost(t, e, h, "bob", rateAddr, rateCostly).mustPass(t)
	})
	t.Run("after a while it passes", func(t *testing.T) {
		c.Advance(time.Minute)
		ratePost(t, e, h, "alice", rateAddr, rateCostly).mustPass(t)
	})
	t.Run("introspection costs nothing", func(t *testing.T) {
		h := newRateHandler(e, &c, pipeline.RateLimits{RateCost: 1, RateCostBurst: 1})
		for range 5 {
			ratePost(t, e, h, "alice", rateAddr, rateIntro).mustPass(t)
		}
		ratePost(t, e, h, "alice", rateAddr, rateCostly).mustPass(t) // a cost above the burst takes the whole burst
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustBeLimited(t)
		ratePost(t, e, h, "alice", rateAddr, rateIntro).mustPass(t)
	})
}

func TestRateLimitAnonymousByAddress(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	var c rateClock
	h := newRateHandler(e, &c, pipeline.RateLimits{RateOps: 1, RateOpsBurst: 2})

	ratePost(t, e, h, "", rateAddr, rateIntro).mustPass(t)
	ratePost(t, e, h, "bad", "192.0.2.1:5000", rateIntro).mustPass(t) // a bad token counts as its address
	ratePost(t, e, h, "", "192.0.2.1:6000", rateIntro).mustBeLimited(t)
	t.Run("another address is not affected", func(t *testing.T) {
		ratePost(t, e, h, "", "192.0.2.2:4000", rateIntro).mustPass(t)
	})
	t.Run("a viewer at the same address is not affected", func(t *testing.T) {
		ratePost(t, e, h, "alice", rateAddr, rateCheap).mustPass(t)
	})
}

func TestRateLimitZeroIsOff(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	var c rateClock
	h := newRateHandler(e, &c, pipeline.RateLimits{})
	for i := range 100 {
		q := rateCheap
		if i%2 == 1 {
			q = rateCostly
		}
		ratePost(t, e, h, "alice", rateAddr, q).mustPass(t)
	}
}

// TestEveryRateLimitIsInTheSecurityTable: each rate limit's flags are in
// docs/security.md's table of rate limits, so a new limit (a row of
// rateLimits) names the file it is documented in.
func TestEveryRateLimitIsInTheSecurityTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, table, _ := strings.Cut(doc, "| bucket | refills at | holds at most | change with |")
	table, _, _ = strings.Cut(table, "\n\n")
	var r pipeline.RateLimits
	for _, f := range r.Flags() {
		if !strings.Contains(table, "`-"+f.Name+"`, `-"+f.Name+"-burst`") {
			t.Errorf("docs/security.md's table of rate limits has no row for -%s and -%s-burst", f.Name, f.Name)
		}
	}
}
