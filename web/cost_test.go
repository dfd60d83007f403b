package web_test

import (
	"encoding/json"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// What an answer cost, on every transport (the matrix's drivers): a query,
// a mutation (not over GET, which runs queries only) and, where its parts
// are delivered, a query with @defer each end with extensions.cost, its
// estimate at least its actual cost, and, with the cost rate limit on, the
// viewer's budget, less each operation's estimate; no part before the last
// carries it.
func TestEveryAnswerSaysWhatItCost(t *testing.T) {
	const burst = 100_000
	for _, p := range web.Protocols() {
		t.Run(p, func(t *testing.T) {
			tr := matrixDrivers[p]
			e := testenv.New(t)
			e.MustSeed(t)
			a := e.App(pipeline.Options{Limits: pipeline.Limits{RateLimits: pipeline.RateLimits{RateCost: 1, RateCostBurst: burst}}})
			_, srv := e.StartApp(t, a)
			ops := []matrixOp{q(matrixMe)}
			if p != web.ProtocolGET {
				ops = append(ops, q(matrixRename))
			}
			if tr.oneBody == nil {
				ops = append(ops, q(testenv.DeferDashboard))
			}
			spent := 0
			for i, r := range tr.drive(t, srv, e.Token(t, "alice"), e.Calls.Total, ops...) {
				exts := []map[string]any{r.res.Extensions}
				if len(r.parts) > 0 {
					exts = nil
					for _, part := range r.parts {
						exts = append(exts, part.Extensions)
					}
				}
				if len(r.res.Errors) > 0 {
					t.Fatalf("operation %d: %+v", i+1, r.res.Errors)
				}
				for j, x := range exts[:len(exts)-1] {
					if x["cost"] != nil {
						t.Errorf("operation %d, part %d of %d: extensions.cost before the last part", i+1, j+1, len(exts))
					}
				}
				c := costOf(t, exts[len(exts)-1])
				spent += c.RequestedQueryCost
				ts := c.ThrottleStatus
				switch {
				case c.ActualQueryCost <= 0 || c.RequestedQueryCost < c.ActualQueryCost:
					t.Errorf("operation %d: requested %d, actual %d", i+1, c.RequestedQueryCost, c.ActualQueryCost)
				case ts == nil || ts.MaximumAvailable != burst || ts.RestoreRate != 1:
					t.Errorf("operation %d: throttleStatus %+v, want the bucket of %d restoring 1 a second", i+1, ts, burst)
				case ts.CurrentlyAvailable > burst-spent+10 || ts.CurrentlyAvailable < burst-spent:
					t.Errorf("operation %d: %d available after %d spent of %d", i+1, ts.CurrentlyAvailable, spent, burst)
				}
			}
			if len(ops) < 2 && p != web.ProtocolGET {
				t.Error("too few operations")
			}
		})
	}
}

// Without a rate limit (a development start), no throttleStatus.
func TestNoThrottleStatusWithoutARateLimit(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	res := e.Query(t, "alice", matrixMe, nil)
	if c := res.MustCost(t); c.ThrottleStatus != nil || c.ActualQueryCost != 3 || c.RequestedQueryCost != 3 {
		t.Errorf("extensions.cost %+v: want requested and actual 3 (me, id, name), no throttleStatus", c)
	}
}

// costOf decodes extensions.cost.
func costOf(t *testing.T, ext map[string]any) pipeline.Cost {
	t.Helper()
	var c pipeline.Cost
	if ext["cost"] == nil {
		t.Fatalf("no extensions.cost in %v", ext)
	}
	if err := json.Unmarshal(testenv.MustMarshal(t, ext["cost"]), &c); err != nil {
		t.Fatal(err)
	}
	return c
}
