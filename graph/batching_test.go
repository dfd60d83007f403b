package graph_test

import (
	"fmt"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// seedWide makes one project owned by "owner" with n members and n tasks,
// task i assigned to member i, with two tags and two comments each.
func seedWide(tb testing.TB, e *testenv.Env, n int) *domain.Project {
	tb.Helper()
	b := e.Store.NewDataset(testenv.Now)
	owner := b.User("owner", "Owner", "")
	var members []*domain.User
	for i := range n {
		members = append(members, b.User(fmt.Sprintf("member%02d", i), fmt.Sprintf("Member %d", i), ""))
	}
	p := b.Project("Wide", "", owner, members...)
	for i := range n {
		due := domain.DateOf(testenv.Now).AddDays(i - n/2)
		t := b.Task(p, fmt.Sprintf("Task %02d", i), domain.StatusTodo, &due, members[i], "alpha", fmt.Sprintf("t%d", i%3))
		b.Comment(t, owner, "first")
		b.Comment(t, members[i], "second")
	}
	e.MustImport(tb, &b.D)
	return p
}

func TestNestedQueryBatchesEveryLevel(t *testing.T) {
	e := testenv.New(t)
	p := seedWide(t, e, 20)
	var got struct {
		Project struct {
			Tasks struct {
				Nodes []struct {
					Assignee struct{ Name string }
					Comments struct {
						Nodes []struct{ Author struct{ Name string } }
					}
				}
			}
		}
	}
	e.MustQuery(t, "owner", `query($id: ID!) { project(id: $id) { tasks(first: 20) { nodes {
		assignee { name } comments(first: 5) { nodes { author { name } } } } } } }`, map[string]any{"id": p.ID}, &got)
	if n := len(got.Project.Tasks.Nodes); n != 20 {
		t.Fatalf("got %d tasks, want 20", n)
	}
	for i, n := range got.Project.Tasks.Nodes {
		if n.Assignee.Name == "" || len(n.Comments.Nodes) != 2 || n.Comments.Nodes[1].Author.Name == "" {
			t.Fatalf("task %d incomplete: %+v", i, n)
		}
	}
	// project visibility (1 BatchGetItem: the project + the viewer's
	// profile, whose copies answer it; dynamo/copies.go), the task
	// list (1 Query), the 20 assignees and the comment authors (1
	// BatchGetItem at the next level), the 20 comment lists (1 Query of
	// the project's comment collection: dynamo/commentindex.go).
	calls := e.Calls.ByOp()
	t.Logf("DynamoDB calls: %v", calls)
	if calls["GetItem"] != 0 {
		t.Errorf("GetItem calls = %d, want 0 (point reads must batch): %v", calls["GetItem"], calls)
	}
	if calls["BatchGetItem"] != 2 { // the assignees' profiles answer their own visibility: no level of its own
		t.Errorf("BatchGetItem calls = %d, want 2: %v", calls["BatchGetItem"], calls)
	}
	if calls["Query"] != 2 {
		t.Errorf("Query calls = %d, want 2 (1 task list + 1 of the 20 tasks' comments): %v", calls["Query"], calls)
	}
}

// With batching off (loaders.Config.NoBatch, the benchmark's baseline)
// every key is read on its own and nothing is cached: each point read is a
// call of its own, and each comment list too.
func TestBatchingOffReadsEveryKeyAlone(t *testing.T) {
	e := testenv.New(t)
	p := seedWide(t, e, 5)
	e.Handler = e.NewHandler(pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{NoBatch: true}}})
	e.MustQuery(t, "owner", `query($id: ID!) { project(id: $id) { tasks(first: 5) { nodes {
		assignee { name } comments(first: 5) { nodes { author { name } } } } } } }`, map[string]any{"id": p.ID}, nil)
	calls := e.Calls.ByOp()
	t.Logf("DynamoDB calls: %v", calls)
	// 5 assignees and 10 comment authors, read one by one (nothing cached):
	// at least 15 point reads besides the visibility check's.
	if n := calls["BatchGetItem"] + calls["GetItem"]; n < 15 {
		t.Errorf("point reads = %d, want at least 15 (one per key): %v", n, calls)
	}
	if calls["Query"] != 6 {
		t.Errorf("Query calls = %d, want 6 (1 task list + 5 comment lists): %v", calls["Query"], calls)
	}
}
