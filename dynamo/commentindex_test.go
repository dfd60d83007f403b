package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
)

// threadsFixture imports a project whose tasks have 0 to 7 comments, one
// task (not asked for) with many between them, and a second project, and
// returns the asks for the first pages of the first project's tasks.
func threadsFixture(t *testing.T, ts *testStore, busy int) (asks []CommentsAsk, busyTask *domain.Task) {
	t.Helper()
	b := ts.NewDataset(storeTestNow)
	olga := b.User("olga", "Olga", "")
	p := b.Project("P", "", olga)
	q := b.Project("Q", "", olga)
	var tasks []*domain.Task
	for i := range 12 {
		tk := b.Task(p, fmt.Sprintf("t%d", i), domain.StatusTodo, nil, nil)
		for j := range i % 8 {
			b.Comment(tk, olga, fmt.Sprintf("comment %d of task %d", j, i))
		}
		tasks = append(tasks, tk)
		if i == 5 {
			busyTask = b.Task(p, "busy", domain.StatusTodo, nil, nil)
			for j := range busy {
				b.Comment(busyTask, olga, fmt.Sprintf("busy %d", j))
			}
		}
	}
	other := b.Task(q, "other", domain.StatusTodo, nil, nil)
	b.Comment(other, olga, "elsewhere")
	ts.mustImport(t, &b.D)
	for i, tk := range tasks {
		first := 5
		if i == 3 {
			first = 2 // a page cut short of its thread
		}
		asks = append(asks, CommentsAsk{TaskID: tk.ID, ProjectID: tk.ProjectID, CommentCount: tk.CommentCount, Page: domain.Page{First: first}})
	}
	return append(asks, CommentsAsk{TaskID: other.ID, ProjectID: other.ProjectID, CommentCount: 1, Page: domain.Page{First: 5}}), busyTask
}

// perTask reads each ask's page on its own (CommentsOf): what
// CommentsOfTasks must answer, page for page.
func perTask(t *testing.T, ts *testStore, asks []CommentsAsk) []*domain.Conn[*domain.Comment] {
	t.Helper()
	want := make([]*domain.Conn[*domain.Comment], len(asks))
	for i, a := range asks {
		c, err := ts.CommentsOf(context.Background(), a.TaskID, a.Page)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = c
	}
	return want
}

func mustCommentsOfTasks(t *testing.T, ts *testStore, asks []CommentsAsk) []*domain.Conn[*domain.Comment] {
	t.Helper()
	got, errs := ts.CommentsOfTasks(WithConsistency(context.Background(), Screen), asks)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	return got
}

func TestCommentsOfTasks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		busy    int  // comments of a task between the asked ones, not asked for
		back    bool // last pages (last: n, no cursor) instead of first ones
		queries int
	}{
		{"one Query of the project's collection answers every first page", 3, false, 2},               // the collection, the other project's task alone
		{"threads past the Query's Limit are read per task, with the same answers", 80, false, 2 + 6}, // tasks 6..11 after the busy one
		{"one Query of the project's collection answers every last page", 3, true, 2},
		{"last pages of threads past the Query's Limit are read per task, with the same answers", 80, true, 2 + 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestStore(t)
			asks, _ := threadsFixture(t, ts, tc.busy)
			if tc.back {
				for i := range asks {
					n := asks[i].Page.First
					asks[i].Page = domain.Page{Last: &n}
				}
			}
			want := perTask(t, ts, asks)
			ts.calls.Reset()
			got := mustCommentsOfTasks(t, ts, asks)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("pages differ from CommentsOf's:\n got %+v\nwant %+v", got, want)
			}
			if n := ts.calls.Get("Query"); n != tc.queries {
				t.Errorf("%d Queries, want %d", n, tc.queries)
			}
			if more := want[7].HasNext || want[7].HasPrev; !more || len(want[7].Items) != 5 || len(want[3].Items) != 2 {
				t.Errorf("the fixture has no page cut short: %+v %+v", want[7], want[3])
			}
		})
	}
	t.Run("pages with a cursor, unknown projects and too few tasks to pay are read per task", func(t *testing.T) {
		ts := newTestStore(t)
		asks, _ := threadsFixture(t, ts, 3)
		cur := perTask(t, ts, asks[7:8])[0].Cursors[1]
		last := 2
		odd := []CommentsAsk{
			{TaskID: asks[7].TaskID, ProjectID: asks[7].ProjectID, CommentCount: 7, Page: domain.Page{First: 2, After: &cur}},
			{TaskID: asks[6].TaskID, ProjectID: asks[6].ProjectID, CommentCount: 6, Page: domain.Page{Last: &last}},
			{TaskID: asks[5].TaskID, CommentCount: 5, Page: domain.Page{First: 5}},
			{TaskID: asks[4].TaskID, ProjectID: asks[4].ProjectID, CommentCount: 4, Page: domain.Page{First: 5}},
		}
		want := perTask(t, ts, odd)
		ts.calls.Reset()
		if got := mustCommentsOfTasks(t, ts, odd); !reflect.DeepEqual(got, want) {
			t.Errorf("pages differ from CommentsOf's:\n got %+v\nwant %+v", got, want)
		}
		if n := ts.calls.Get("Query"); n != len(odd) {
			t.Errorf("%d Queries, want %d (one per task)", n, len(odd))
		}
	})
	t.Run("many comments per task are read per task", func(t *testing.T) {
		if collectionPays(4, 40) || !collectionPays(20, 40) || collectionPays(1, 0) {
			t.Error("collectionPays: want per task for 4 tasks of 40 comments or one task, the collection for 20 tasks of 40")
		}
	})
}

// A table written before the collections (comments without their keys,
// no marker) reads per task until EnsureCommentIndex gives the comments
// their keys, then reads the collection with the same answers.
func TestEnsureCommentIndexGivesExistingCommentsTheirKeys(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	asks, _ := threadsFixture(t, ts, 3)
	want := perTask(t, ts, asks)
	stripped := mustStripComments(t, ts, "GSI1PK, GSI1SK")
	if _, err := ts.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(ts.Table()), Key: commentIndexedKey.av()}); err != nil {
		t.Fatal(err)
	}
	ts.commentIndexed.Store(false)
	ts.calls.Reset()
	if got := mustCommentsOfTasks(t, ts, asks); !reflect.DeepEqual(got, want) {
		t.Errorf("before the migration, pages differ from CommentsOf's:\n got %+v\nwant %+v", got, want)
	}
	if n := ts.calls.Get("Query"); n != len(asks) {
		t.Errorf("%d Queries before the migration, want %d (one per task)", n, len(asks))
	}
	old := New(ts.client, ts.Table())
	old.Now, old.Log = ts.Now, ts.Log
	ts.Store = old
	if _, err := old.EnsureTable(ctx); err != nil { // runs EnsureCommentIndex
		t.Fatal(err)
	}
	if stripped < 20 {
		t.Fatalf("only %d comments", stripped)
	}
	ts.calls.Reset()
	got := mustCommentsOfTasks(t, ts, asks)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the migration, pages differ from CommentsOf's:\n got %+v\nwant %+v", got, want)
	}
	if n := ts.calls.Get("Query"); n != 2 {
		t.Errorf("%d Queries after the migration, want 2", n)
	}
	it, err := old.getOne(ctx, commentIndexedKey)
	if err != nil || it == nil {
		t.Errorf("no marker after the migration: %v %v", it, err)
	}
}

// mustStripComments removes attrs (a REMOVE list) from every comment item
// of ts's table, as a table written before them holds its comments, and
// returns how many it changed.
func mustStripComments(t *testing.T, ts *testStore, attrs string) int {
	t.Helper()
	ctx := context.Background()
	out, err := ts.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(ts.Table())})
	if err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for _, it := range out.Items {
		if str(it, "type") == typeComment {
			if _, err := ts.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(ts.Table()), Key: keyOf(it).av(),
				UpdateExpression: aws.String("REMOVE " + attrs)}); err != nil {
				t.Fatal(err)
			}
			stripped++
		}
	}
	return stripped
}
