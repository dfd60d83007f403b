package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
)

// listedFieldsOf keeps of a page of tasks what TasksOfProjectListed
// answers (and its cursors).
func listedFieldsOf(c *domain.Conn[*domain.Task]) *domain.Conn[*domain.Task] {
	out := *c
	out.Items = nil
	for _, t := range c.Items {
		out.Items = append(out.Items, &domain.Task{ID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Status: t.Status,
			DueDate: t.DueDate, AssigneeID: t.AssigneeID, Tags: t.Tags, CommentCount: t.CommentCount})
	}
	return &out
}

// TasksOfProjectListed answers what TasksOfProject answers of the fields a
// list shows, page for page (cursors, both directions, a status filter),
// from GSI4's entries for fewer read units; on a table whose tasks were
// written before GSI4 (its backfill not done) it reads TasksOfProject,
// and once EnsureTable has run the backfill, GSI4 again.
func TestTasksOfProjectListedAnswersTheListsFieldsForLess(t *testing.T) {
	ts := newTestStore(t)
	ctx := WithConsistency(context.Background(), Screen)
	b := ts.NewDataset(storeTestNow)
	olga := b.User("olga", "Olga", "")
	p := b.Project("P", "", olga)
	for i := range 30 {
		var due *domain.Date
		if i%4 != 0 {
			d := domain.DateOf(storeTestNow).AddDays(i % 9)
			due = &d
		}
		tk := b.Task(p, fmt.Sprintf("task %02d with a title", i), []domain.TaskStatus{domain.StatusTodo, domain.StatusDone}[i%2], due, olga, "a", "b")
		desc := fmt.Sprintf("a description of task %d that a list does not show, long enough to weigh", i)
		tk.Description = &desc
		if i%3 == 0 {
			b.Comment(tk, olga, "hello")
		}
	}
	ts.mustImport(t, &b.D)
	done := domain.StatusDone
	pages := []struct {
		status *domain.TaskStatus
		page   domain.Page
	}{{nil, domain.Page{First: 20}}, {&done, domain.Page{First: 5}}, {nil, domain.Page{Last: aws.Int(7)}}}
	check := func(when string) (full, listed float64) {
		t.Helper()
		for _, pg := range pages {
			ts.calls.Reset()
			want, err := ts.TasksOfProject(ctx, p.ID, pg.status, pg.page)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := ts.calls.Capacity()
			ts.calls.Reset()
			got, err := ts.TasksOfProjectListed(ctx, p.ID, pg.status, pg.page)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := ts.calls.Capacity()
			full, listed = full+f, listed+l
			if !reflect.DeepEqual(listedFieldsOf(got), listedFieldsOf(want)) {
				t.Errorf("%s, %+v: listed\n%+v\nwant\n%+v", when, pg, listedFieldsOf(got), listedFieldsOf(want))
			}
			// The next page from the listed page's cursor.
			if len(got.Cursors) > 0 && pg.page.Last == nil {
				next := domain.Page{First: 5, After: &got.Cursors[len(got.Cursors)-1]}
				w, _ := ts.TasksOfProject(ctx, p.ID, pg.status, next)
				g, _ := ts.TasksOfProjectListed(ctx, p.ID, pg.status, next)
				if !reflect.DeepEqual(listedFieldsOf(g), listedFieldsOf(w)) {
					t.Errorf("%s: the page after a listed cursor differs", when)
				}
			}
		}
		return full, listed
	}
	full, listed := check("from GSI4")
	if listed >= full {
		t.Errorf("listed pages read %v units, the items %v: want fewer", listed, full)
	}
	t.Logf("read units of the pages: items %v, GSI4 entries %v", full, listed)

	// The table as a version before GSI4 left it.
	for _, it := range mustScan(t, ts) {
		if str(it, "type") == typeTask {
			if _, err := ts.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(ts.Table()), Key: keyOf(it).av(),
				UpdateExpression: aws.String("REMOVE GSI4PK")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ts.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(ts.Table()),
		Key: backfillKey(tasksLeanBackfill.name).av()}); err != nil {
		t.Fatal(err)
	}
	ts.backfilled.Delete(tasksLeanBackfill.name)
	if f, l := check("before the backfill"); l != f {
		t.Errorf("before the backfill the listed pages read %v units, want the items' %v (read from GSI1)", l, f)
	}
	ts.Sleep = func(context.Context, time.Duration) error { return nil }
	if _, err := ts.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f, l := check("after the backfill"); l != listed || f != full {
		t.Errorf("after the backfill: %v and %v units, want %v and %v", f, l, full, listed)
	}
}
