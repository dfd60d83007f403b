package graph_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// syncLean selects what the sync itself reads (no nested reads).
const syncLean = `query($s: String, $f: Int) { sync(since: $s, first: $f) { nextToken hasMore upserts { __typename id } tombstones { nodeId } } }`

// itemsOf counts the items a call returned.
func itemsOf(out any) int {
	switch o := out.(type) {
	case *dynamodb.QueryOutput:
		return len(o.Items)
	case *dynamodb.BatchGetItemOutput:
		n := 0
		for _, its := range o.Responses {
			n += len(its)
		}
		return n
	case *dynamodb.GetItemOutput:
		if o.Item != nil {
			return 1
		}
	}
	return 0
}

// syncCost is what one page of a sync read: calls by operation, and items.
type syncCost struct {
	calls map[string]int
	items int
	page  syncPage
}

func (c syncCost) String() string {
	ops := slices.Sorted(maps.Keys(c.calls))
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s %d", op, c.calls[op])
	}
	return fmt.Sprintf("%s; %d items; %d upserts, %d tombstones", strings.Join(parts, ", "), c.items, len(c.page.Upserts), len(c.page.Tombstones))
}

// TestSyncCalls pins what a sync reads, page by page, for a viewer in 3
// projects of 4 members, 10 tasks and 20 comments each: a base sync, and a
// sync after 0, 1 and 100 changes. The reads follow the changes and the
// projects, not the data: docs/sync.md ("Cost").
func TestSyncCalls(t *testing.T) {
	e, c := captureEnv(t, testenv.EmbeddedStore, pipeline.Options{})
	b := e.Store.NewDataset(testenv.Now)
	v := b.User("viewer", "Viewer", "")
	var others []*domain.User
	for i := range 3 {
		others = append(others, b.User(fmt.Sprintf("m%d", i), fmt.Sprintf("Member %d", i), ""))
	}
	var projects []*domain.Project
	var tasks []*domain.Task
	for p := range 3 {
		pr := b.Project(fmt.Sprintf("P%d", p), "", v, others...)
		projects = append(projects, pr)
		for i := range 10 {
			tk := b.Task(pr, fmt.Sprintf("Task %d.%d", p, i), domain.StatusTodo, nil, others[i%3], "alpha", "beta")
			tasks = append(tasks, tk)
			b.Comment(tk, v, "one")
			b.Comment(tk, others[i%3], "two")
		}
	}
	e.MustImport(t, &b.D)
	ctx := context.Background()
	var token *string
	page := func(t *testing.T, first int) syncCost {
		t.Helper()
		if err := e.Store.FlushOutbox(ctx); err != nil {
			t.Fatal(err)
		}
		c.take()
		var d struct{ Sync syncPage }
		e.MustQuery(t, "viewer", syncLean, map[string]any{"s": token, "f": first}, &d)
		cost := syncCost{calls: map[string]int{}, page: d.Sync}
		for _, call := range c.take() {
			if call.inRequest {
				cost.calls[call.op]++
				cost.items += itemsOf(call.out)
			}
		}
		token = &d.Sync.NextToken
		return cost
	}
	var report []string
	pin := func(t *testing.T, name string, got syncCost, calls map[string]int, items, upserts, tombstones int) {
		t.Helper()
		report = append(report, fmt.Sprintf("| %s | %s |", name, got))
		if !maps.Equal(got.calls, calls) || got.items != items || len(got.page.Upserts) != upserts || len(got.page.Tombstones) != tombstones {
			t.Errorf("%s: %s; want %v, %d items, %d upserts, %d tombstones", name, got, calls, items, upserts, tombstones)
		}
	}

	// The base sync: 102 entries (per project 4 members, 10 tasks, 20
	// comments), first 100: two pages. Page 1: the viewer's partition
	// (their profile; no marks), the projects with the profile again (4),
	// the 3 logs (34 each: a share of 34, 33 and 33 entries, one more read
	// to know), the page's 91 objects (the 3 other users, 30 tasks, 58
	// comments) in one BatchGetItem. Page 2: the last comment of two
	// projects, with their tasks.
	p1 := page(t, 100)
	pin(t, "base sync, page 1", p1, map[string]int{"Query": 4, "BatchGetItem": 2}, 1+4+102+91, 3+4+30+58, 0)
	if !p1.page.HasMore {
		t.Fatal("the base sync's first page says no more")
	}
	p2 := page(t, 100)
	pin(t, "base sync, page 2", p2, map[string]int{"Query": 3, "BatchGetItem": 2}, 1+4+2+4, 4, 0)
	if p2.page.HasMore {
		t.Fatal("the base sync's second page says more")
	}

	pin(t, "after 0 changes", page(t, 100), map[string]int{"Query": 1, "BatchGetItem": 1}, 1+4, 0, 0)

	title := "renamed"
	if _, err := e.Store.UpdateTask(ctx, "m0", dynamo.TaskPatch{ID: tasks[0].ID, Title: domain.Opt[*string]{Set: true, Value: &title}}); err != nil {
		t.Fatal(err)
	}
	pin(t, "after 1 change (a task renamed)", page(t, 100), map[string]int{"Query": 2, "BatchGetItem": 2}, 1+4+1+1, 1, 0)

	for i := range 100 {
		if _, err := e.Store.AddComment(ctx, "viewer", domain.CommentInput{TaskID: tasks[i%30].ID, Body: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// 100 comments on the 30 tasks: 100 entries in the 3 logs (34, 33,
	// 33), one page: the comments and their 30 tasks, one BatchGetItem of
	// 130 keys (two calls of at most 100).
	pin(t, "after 100 changes (comments added)", page(t, 100), map[string]int{"Query": 4, "BatchGetItem": 3}, 1+4+100+130, 130, 0)

	t.Logf("\n| sync | calls; items read; page |\n| --- | --- |\n%s", strings.Join(report, "\n"))
}

// TestSyncCallsAtOneAndFiveHundredProjects pins what a sync page reads for
// a viewer in 1 project and in 500 (DefaultMembershipCap), every project of 2 members and a task: after a base sync to the
// end, a page with nothing new is one Query (the viewer's partition: the
// profile and the marks of the 500 projects it caught up with) and costs
// no more at 500 than at 1; a page after a change reads that project's
// log and the object, and writes its mark again (one TransactWriteItems):
// at most 2 calls more than at 1; a base sync's page reads at most
// syncBatch projects in one BatchGetItem. docs/sync.md ("Cost").
func TestSyncCallsAtOneAndFiveHundredProjects(t *testing.T) {
	type pages struct{ base, none, one syncCost }
	run := func(t *testing.T, n int) pages {
		e, c := captureEnv(t, testenv.EmbeddedStore, pipeline.Options{})
		b := e.Store.NewDataset(testenv.Now)
		v, o := b.User("viewer", "Viewer", ""), b.User("other", "Other", "")
		var tasks []*domain.Task
		for i := range n {
			p := b.Project(fmt.Sprintf("P%03d", i), "", o, v)
			tasks = append(tasks, b.Task(p, "T", domain.StatusTodo, nil, nil))
		}
		e.MustImport(t, &b.D)
		ctx := context.Background()
		page := func(t *testing.T, token *string, first int) (syncCost, *string) {
			t.Helper()
			c.take()
			var d struct{ Sync syncPage }
			e.MustQuery(t, "viewer", syncLean, map[string]any{"s": token, "f": first}, &d)
			cost := syncCost{calls: map[string]int{}, page: d.Sync}
			for _, call := range c.take() {
				if call.inRequest {
					cost.calls[call.op]++
					cost.items += itemsOf(call.out)
				}
			}
			return cost, &d.Sync.NextToken
		}
		var out pages
		out.base, _ = page(t, nil, 1)
		var token *string
		for i := 0; ; i++ {
			p, next := page(t, token, 100)
			token = next
			if !p.page.HasMore {
				break
			}
			if i > 100 {
				t.Fatal("a base sync of more than 100 pages")
			}
		}
		out.none, _ = page(t, token, 1)
		title := "renamed"
		if _, err := e.Store.UpdateTask(ctx, "other", dynamo.TaskPatch{ID: tasks[n/2].ID, Title: domain.Opt[*string]{Set: true, Value: &title}}); err != nil {
			t.Fatal(err)
		}
		out.one, _ = page(t, token, 1)
		if len(out.one.page.Upserts) != 1 || out.one.page.HasMore || len(out.none.page.Upserts) != 0 || out.none.page.HasMore {
			t.Errorf("in %d projects: after nothing %+v, after a rename %+v", n, out.none.page, out.one.page)
		}
		return out
	}
	one, many := run(t, 1), run(t, 500)
	total := func(c syncCost) int {
		n := 0
		for _, k := range c.calls {
			n += k
		}
		return n
	}
	for _, c := range []struct {
		name       string
		at1, at500 syncCost
		more       int
	}{
		{"nothing new", one.none, many.none, 1},
		{"after a task renamed", one.one, many.one, 2},
		{"a base sync's first page (first: 1)", one.base, many.base, 2},
	} {
		t.Logf("%s: in 1 project %s; in 500 %s", c.name, c.at1, c.at500)
		if total(c.at500) > total(c.at1)+c.more {
			t.Errorf("%s: %d calls in 500 projects, %d in 1: more than %d more", c.name, total(c.at500), total(c.at1), c.more)
		}
	}
	want := map[string]int{"Query": 1}
	if !maps.Equal(many.none.calls, want) || !maps.Equal(one.none.calls, map[string]int{"Query": 1, "BatchGetItem": 1}) {
		t.Errorf("nothing new: %v in 500 projects, %v in 1; want %v and a Query and a BatchGetItem", many.none.calls, one.none.calls, want)
	}
	if want := map[string]int{"Query": 2, "BatchGetItem": 2, "TransactWriteItems": 1}; !maps.Equal(many.one.calls, want) {
		t.Errorf("after a task renamed, in 500 projects: %v, want %v", many.one.calls, want)
	}
	if many.base.page.HasMore != true || len(many.base.page.Upserts) > graph.SyncBatch+2 {
		t.Errorf("a base sync's first page in 500 projects: %d upserts, more %v; want at most %d projects and an entry's objects, more",
			len(many.base.page.Upserts), many.base.page.HasMore, graph.SyncBatch)
	}
}

// TestASyncPageIsPricedByWhatItMayRead: the limits price a sync page as
// the objects it may read and answer (its first entries and the projects
// it reads, at most SyncBatch), each by the page's selection: a replica's
// page of 100 passes the complexity limit, and a burst of 40 of them at
// production's rate limits is refused past the cost bucket
// (RATE_LIMITED), before any read; a lean page of one costs what its
// projects may cost, at least 50 each (a project read whole for its seq).
func TestASyncPageIsPricedByWhatItMayRead(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	prod := pipeline.RateLimits{RateOps: pipeline.DefaultRateOps, RateOpsBurst: pipeline.DefaultRateOpsBurst,
		RateCost: pipeline.DefaultRateCost, RateCostBurst: pipeline.DefaultRateCostBurst}
	h := e.NewHandler(pipeline.Options{Limits: pipeline.Limits{RateLimits: prod}})
	var wg sync.WaitGroup
	answered := make([]string, 40)
	for i := range answered {
		wg.Go(func() {
			res := e.Send(t, map[string]any{"query": syncDoc, "variables": map[string]any{"first": 100}}, e.As("alice"), testenv.Via(h)).Decode(t)
			if len(res.Errors) > 0 {
				answered[i] = res.Errors[0].Code()
			}
		})
	}
	wg.Wait()
	ran, limited := 0, 0
	for _, c := range answered {
		switch c {
		case "":
			ran++
		case codes.RateLimited:
			limited++
		default:
			t.Errorf("a page answered %s", c)
		}
	}
	if ran == 0 || limited == 0 || ran > 5 {
		t.Errorf("40 pages of 100 at once: %d ran, %d RATE_LIMITED; want a few to run and the rest limited", ran, limited)
	}
	// Their price, as the complexity limit weighs them (a limit of 1 names it).
	price := func(doc string, first int) int {
		res := e.Send(t, map[string]any{"query": doc, "variables": map[string]any{"first": first}}, e.As("alice"),
			testenv.Via(e.NewHandler(pipeline.Options{Limits: pipeline.Limits{ComplexityLimit: 1}}))).Decode(t)
		var n int
		if len(res.Errors) != 1 || res.Errors[0].Code() != codes.Complexity {
			t.Fatalf("%+v", res.Errors)
		}
		fmt.Sscanf(res.Errors[0].Message[strings.Index(res.Errors[0].Message, "complexity ")+len("complexity "):], "%d", &n)
		return n
	}
	full, lean := price(syncDoc, 100), price(syncLeanDoc, 1)
	t.Logf("a replica's page of 100 costs %d; a lean page of 1 %d", full, lean)
	if full > pipeline.DefaultComplexityLimit || full < 100*(100+graph.SyncBatch) || lean < graph.SyncBatch*50 {
		t.Errorf("a replica's page of 100 costs %d (the limit: %d), a lean page of 1 %d", full, pipeline.DefaultComplexityLimit, lean)
	}
}

// syncLeanDoc is a page that selects no field of its objects.
const syncLeanDoc = `query($first: Int) { sync(first: $first) { nextToken hasMore upserts { __typename } tombstones { nodeId } } }`
