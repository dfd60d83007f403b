package graph_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
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
	e, c := captureEnv(t, testenv.EmbeddedStore, graph.Options{})
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
	// comments), first 100: two pages. Page 1: the memberships (3), the
	// projects with the memberships and the profile (7), the 3 logs (34
	// each: a share of 34, 33 and 33 entries, one more read to know), the
	// page's 91 objects (the 3 other users, 30 tasks, 58 comments) in one
	// BatchGetItem. Page 2: the last comment of two projects, with their
	// tasks.
	p1 := page(t, 100)
	pin(t, "base sync, page 1", p1, map[string]int{"Query": 4, "BatchGetItem": 2}, 3+4+102+91, 3+4+30+58, 0)
	if !p1.page.HasMore {
		t.Fatal("the base sync's first page says no more")
	}
	p2 := page(t, 100)
	pin(t, "base sync, page 2", p2, map[string]int{"Query": 3, "BatchGetItem": 2}, 3+4+2+4, 4, 0)
	if p2.page.HasMore {
		t.Fatal("the base sync's second page says more")
	}

	pin(t, "after 0 changes", page(t, 100), map[string]int{"Query": 1, "BatchGetItem": 1}, 3+4, 0, 0)

	title := "renamed"
	if _, err := e.Store.UpdateTask(ctx, "m0", dynamo.TaskPatch{ID: tasks[0].ID, Title: domain.Opt[*string]{Set: true, Value: &title}}); err != nil {
		t.Fatal(err)
	}
	pin(t, "after 1 change (a task renamed)", page(t, 100), map[string]int{"Query": 2, "BatchGetItem": 2}, 3+4+1+1, 1, 0)

	for i := range 100 {
		if _, err := e.Store.AddComment(ctx, "viewer", domain.CommentInput{TaskID: tasks[i%30].ID, Body: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// 100 comments on the 30 tasks: 100 entries in the 3 logs (34, 33,
	// 33), one page: the comments and their 30 tasks, one BatchGetItem of
	// 130 keys (two calls of at most 100).
	pin(t, "after 100 changes (comments added)", page(t, 100), map[string]int{"Query": 4, "BatchGetItem": 3}, 3+4+100+130, 130, 0)

	t.Logf("\n| sync | calls; items read; page |\n| --- | --- |\n%s", strings.Join(report, "\n"))
}
