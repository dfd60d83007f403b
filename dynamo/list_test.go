package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// taggedDataset has three projects with tasks tagged "x" (and some not), due
// on overlapping dates, some never, made in an interleaved order.
func taggedDataset(ts *testStore) (*Dataset, []*domain.Project, []*domain.Task) {
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	dave := b.User("dave", "Dave", "")
	var ps []*domain.Project
	for i := range 3 {
		ps = append(ps, b.Project(fmt.Sprintf("P%d", i), "", owner, dave))
	}
	today := domain.DateOf(storeTestNow)
	offsets := []int{3, -2, 0, 3, 100, -30, 0}
	var tagged []*domain.Task
	for i := range 24 {
		p := ps[i%3]
		var due *domain.Date
		if i%5 != 4 {
			d := today.AddDays(offsets[i%len(offsets)])
			due = &d
		}
		status := []domain.TaskStatus{domain.StatusTodo, domain.StatusDone, domain.StatusInProgress, domain.StatusTodo}[i%4]
		var assignee *domain.User
		if i%2 == 0 {
			assignee = dave
		}
		tags := []string{"x"}
		if i%6 == 5 {
			tags = []string{"y"}
		}
		task := b.Task(p, fmt.Sprintf("T%02d", i), status, due, assignee, tags...)
		if tags[0] == "x" {
			tagged = append(tagged, task)
		}
	}
	return &b.D, ps, tagged
}

func dueOrder(tasks []*domain.Task) []string {
	s := slices.Clone(tasks)
	slices.SortStableFunc(s, func(a, b *domain.Task) int {
		return dueLess(dueEntry{a.DueDate, ulidOf(a.ID)}, dueEntry{b.DueDate, ulidOf(b.ID)})
	})
	ids := make([]string, len(s))
	for i, t := range s {
		ids[i] = t.ID
	}
	return ids
}

// pageAll reads every page of a list with page size first, forwards
// (first, after) and backwards (last, before), and checks the pagination
// rules on the way; it returns the ids in list order, failing when the two
// directions disagree.
func pageAll[T any](t *testing.T, first int, read func(domain.Page) (*domain.Conn[T], error), id func(T) string) []string {
	t.Helper()
	fwd := pageThrough(t, first, false, read, id)
	if back := pageThrough(t, first, true, read, id); !slices.Equal(back, fwd) {
		t.Errorf("pages of %d: backwards\n %v\nforwards\n %v", first, back, fwd)
	}
	return fwd
}

// pageThrough reads every page of a list with page size n, forwards or
// backwards, and returns the ids in list order.
func pageThrough[T any](t *testing.T, n int, back bool, read func(domain.Page) (*domain.Conn[T], error), id func(T) string) []string {
	t.Helper()
	var ids []string
	var cursor *string
	for i := 0; ; i++ {
		if i > 200 {
			t.Fatal("pagination does not end")
		}
		page := domain.Page{First: n, After: cursor}
		if back {
			page = domain.Page{Last: &n, Before: cursor}
		}
		c, err := read(page)
		if err != nil {
			t.Fatalf("page %d (back %v): %v", i, back, err)
		}
		if len(c.Items) > n || len(c.Cursors) != len(c.Items) {
			t.Fatalf("page %d: %d items, %d cursors, size %d", i, len(c.Items), len(c.Cursors), n)
		}
		more, other := c.HasNext, c.HasPrev
		if back {
			more, other = other, more
		}
		if other {
			t.Errorf("page %d (back %v): HasNext %v, HasPrev %v: the far side is not known", i, back, c.HasNext, c.HasPrev)
		}
		if more && len(c.Items) < n {
			t.Fatalf("page %d: %d items (short) while more remain", i, len(c.Items))
		}
		var pg []string
		for _, it := range c.Items {
			pg = append(pg, id(it))
		}
		if back {
			ids = append(pg, ids...)
		} else {
			ids = append(ids, pg...)
		}
		if !more {
			return ids
		}
		cursor = c.EndCursor()
		if back {
			cursor = c.StartCursor()
		}
	}
}

func TestListMergesPartitions(t *testing.T) {
	ts := newTestStore(t)
	d, ps, tagged := taggedDataset(ts)
	ts.mustImport(t, d)
	ctx := context.Background()
	projectIDs := []string{ps[2].ID, ps[0].ID, ps[1].ID}
	byID := map[string]*domain.Task{}
	for _, task := range d.Tasks {
		byID[task.ID] = task
	}
	wantTagged := dueOrder(tagged)
	taskID := func(t *domain.Task) string { return t.ID }

	for _, indexed := range []bool{true, false} {
		ts.tagIndexed.Store(indexed)
		for _, first := range []int{1, 2, 5, 7, 100} {
			t.Run(fmt.Sprintf("TasksByTag merges projects by due date, pages of %d, indexed %v", first, indexed), func(t *testing.T) {
				got := pageAll(t, first, func(p domain.Page) (*domain.Conn[*domain.Task], error) {
					return ts.TasksByTag(ctx, " X ", projectIDs, p, nil, nil)
				}, taskID)
				if !slices.Equal(got, wantTagged) {
					t.Errorf("got  %v\nwant %v", got, wantTagged)
				}
			})
		}
	}
	t.Run("TasksByTag reads the projects' tag indexes, then the page's tasks", func(t *testing.T) {
		ts.tagIndexed.Store(true)
		ts.calls.Reset()
		c, err := ts.TasksByTag(ctx, "x", projectIDs, domain.Page{First: MaxFirst}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Items) != len(wantTagged) || c.HasNext {
			t.Errorf("%d items, hasNext %v; want %d, false", len(c.Items), c.HasNext, len(wantTagged))
		}
		if got, q := ts.calls.Get("BatchGetItem"), ts.calls.Get("Query"); got != 2 || q != 0 {
			t.Errorf("BatchGetItem calls = %d, Query calls = %d; want 2 (the indexes, the tasks) and 0", got, q)
		}
		for _, task := range c.Items {
			if want := byID[task.ID]; !reflect.DeepEqual(task, want) {
				t.Errorf("task %+v, want %+v", task, want)
			}
		}
	})
	t.Run("TasksByTag reads each project once for one page without the indexes, then the page's tasks", func(t *testing.T) {
		ts.tagIndexed.Store(false)
		defer ts.tagIndexed.Store(true)
		ts.calls.Reset()
		c, err := ts.TasksByTag(ctx, "x", projectIDs, domain.Page{First: MaxFirst}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Items) != len(wantTagged) || c.HasNext {
			t.Errorf("%d items, hasNext %v; want %d, false", len(c.Items), c.HasNext, len(wantTagged))
		}
		if got := ts.calls.Get("Query"); got != len(projectIDs) {
			t.Errorf("Query calls = %d, want %d", got, len(projectIDs))
		}
		if got := ts.calls.Get("BatchGetItem") + ts.calls.Get("GetItem"); got != 1 {
			t.Errorf("%d point reads, want 1: the page's tasks, in one batch", got)
		}
		for _, task := range c.Items {
			if want := byID[task.ID]; !reflect.DeepEqual(task, want) {
				t.Errorf("task %+v, want %+v", task, want)
			}
		}
	})
	t.Run("TasksByTag with a keep filter fills every page", func(t *testing.T) {
		keepSeen := 0
		keep := func(_ context.Context, cand []*domain.Task) ([]bool, error) {
			ok := make([]bool, len(cand))
			for i, task := range cand {
				keepSeen++
				ok[i] = task.ProjectID != ps[1].ID
			}
			return ok, nil
		}
		var want []string
		for _, id := range wantTagged {
			if byID[id].ProjectID != ps[1].ID {
				want = append(want, id)
			}
		}
		for _, first := range []int{1, 3} {
			got := pageAll(t, first, func(p domain.Page) (*domain.Conn[*domain.Task], error) {
				return ts.TasksByTag(ctx, "x", projectIDs, p, keep, nil)
			}, taskID)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
		if keepSeen == 0 {
			t.Error("keep was never called")
		}
	})
	t.Run("TasksByTag between two cursors, either way", func(t *testing.T) {
		all, err := ts.TasksByTag(ctx, "x", projectIDs, domain.Page{First: MaxFirst}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Relay's rules: after and before cut the list to the items between
		// them; first takes from the start of that, last from its end.
		i, j := 3, len(wantTagged)-4
		between := wantTagged[i+1 : j]
		after, before := &all.Cursors[i], &all.Cursors[j]
		for _, c := range []struct {
			name string
			page domain.Page
			want []string
			more bool
		}{
			{"first 2 after and before", domain.Page{First: 2, After: after, Before: before}, between[:2], true},
			{"last 2 after and before", domain.Page{Last: aws.Int(2), After: after, Before: before}, between[len(between)-2:], true},
			{"first 100 after and before", domain.Page{First: 100, After: after, Before: before}, between, false},
			{"last 100 after and before", domain.Page{Last: aws.Int(100), After: after, Before: before}, between, false},
			{"first 2 before", domain.Page{First: 2, Before: before}, wantTagged[:2], true},
			{"last 2 after", domain.Page{Last: aws.Int(2), After: after}, wantTagged[len(wantTagged)-2:], true},
			{"last 2 after the last", domain.Page{Last: aws.Int(2), After: &all.Cursors[len(all.Cursors)-1]}, nil, false},
			{"after and before the same item", domain.Page{First: 2, After: after, Before: after}, nil, false},
			{"after past before", domain.Page{Last: aws.Int(2), After: before, Before: after}, nil, false},
		} {
			got, err := ts.TasksByTag(ctx, "x", projectIDs, c.page, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			more, other := got.HasNext, got.HasPrev
			if c.page.Last != nil {
				more, other = other, more
			}
			if ids := mapIDs(got.Items, taskID); !slices.Equal(ids, c.want) || more != c.more || other {
				t.Errorf("%s: got %v (hasNext %v, hasPrev %v), want %v (more %v)", c.name, ids, got.HasNext, got.HasPrev, c.want, c.more)
			}
		}
	})
	t.Run("a page after a cursor is one Query per partition, either way", func(t *testing.T) {
		all, err := ts.TasksOfProject(ctx, ps[0].ID, nil, domain.Page{First: MaxFirst})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Items) < 6 {
			t.Fatalf("test set-up: %d tasks in one project", len(all.Items))
		}
		for _, page := range []domain.Page{{First: 2, After: &all.Cursors[1]}, {Last: aws.Int(2), Before: &all.Cursors[len(all.Cursors)-2]}} {
			ts.calls.Reset()
			c, err := ts.TasksOfProject(ctx, ps[0].ID, nil, page)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Items) != 2 || !(c.HasNext || c.HasPrev) {
				t.Errorf("%+v: %d items, hasNext %v, hasPrev %v", page, len(c.Items), c.HasNext, c.HasPrev)
			}
			if got := ts.calls.Get("Query"); got != 1 {
				t.Errorf("%+v: Query calls = %d, want 1 (the cursor's own item read in the same Query)", page, got)
			}
		}
	})
	t.Run("TasksByTag reads the task of a link written before links carried it", func(t *testing.T) {
		task := byID[wantTagged[0]]
		old := tagLinkItem(task, "x")
		for attr := range old {
			switch attr {
			case attrPK, attrSK, "GSI1PK", "GSI1SK", "type", "taskId":
			default:
				delete(old, attr)
			}
		}
		if _, err := ts.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.Table()), Item: old}); err != nil {
			t.Fatal(err)
		}
		c, err := ts.TasksByTag(ctx, "x", projectIDs, domain.Page{First: MaxFirst}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Items; len(got) != len(wantTagged) || !reflect.DeepEqual(got[0], task) {
			t.Errorf("%d tasks, the first %+v; want %d, the first %+v", len(got), got[0], len(wantTagged), task)
		}
		if _, err := ts.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.Table()), Item: tagLinkItem(task, "x")}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("TasksByTag with no projects is empty without reading", func(t *testing.T) {
		ts.calls.Reset()
		c, err := ts.TasksByTag(ctx, "x", nil, domain.Page{First: 10}, nil, nil)
		if err != nil || len(c.Items) != 0 || c.HasNext {
			t.Errorf("got %+v, %v", c, err)
		}
		if n := ts.calls.Get("Query"); n != 0 {
			t.Errorf("Query calls = %d, want 0", n)
		}
	})
	t.Run("TasksByTag refuses a bad tag, a bad project id, a bad page", func(t *testing.T) {
		for _, c := range []struct {
			tag  string
			pids []string
			page domain.Page
		}{
			{"not a tag!", projectIDs, domain.Page{First: 1}},
			{"x", []string{"prj#nope"}, domain.Page{First: 1}},
			{"x", projectIDs, domain.Page{First: 0}},
			{"x", projectIDs, domain.Page{First: MaxFirst + 1}},
			{"x", projectIDs, domain.Page{First: 1, After: aws.String("garbage")}},
			{"x", projectIDs, domain.Page{First: 1, After: aws.String(cursor.List(commentSK(ulidOf(tagged[0].ID))))}},
			{"x", projectIDs, domain.Page{Last: aws.Int(0)}},
			{"x", projectIDs, domain.Page{Last: aws.Int(-1)}},
			{"x", projectIDs, domain.Page{Last: aws.Int(MaxFirst + 1)}},
			{"x", projectIDs, domain.Page{First: 1, Last: aws.Int(1)}},
			{"x", projectIDs, domain.Page{Last: aws.Int(1), Before: aws.String("garbage")}},
			{"x", projectIDs, domain.Page{First: 1, Before: aws.String(cursor.List(commentSK(ulidOf(tagged[0].ID))))}},
		} {
			_, err := ts.TasksByTag(ctx, c.tag, c.pids, c.page, nil, nil)
			wantCode(t, fmt.Sprintf("TasksByTag(%q, %v, %+v)", c.tag, c.pids, c.page), err, domain.EINVALID)
		}
	})
	t.Run("TasksAssignedTo merges open and done tasks by due date", func(t *testing.T) {
		var mine []*domain.Task
		for _, task := range d.Tasks {
			if task.AssigneeID != nil && *task.AssigneeID == "dave" {
				mine = append(mine, task)
			}
		}
		want := dueOrder(mine)
		for _, first := range []int{1, 4, 100} {
			got := pageAll(t, first, func(p domain.Page) (*domain.Conn[*domain.Task], error) {
				return ts.TasksAssignedTo(ctx, "dave", p, nil)
			}, taskID)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
	})
	t.Run("OverdueTasks lists open tasks due before the date", func(t *testing.T) {
		asOf := domain.DateOf(storeTestNow)
		var overdue []*domain.Task
		for _, task := range d.Tasks {
			if task.AssigneeID != nil && task.Status != domain.StatusDone && task.DueDate != nil && task.DueDate.String() < asOf.String() {
				overdue = append(overdue, task)
			}
		}
		if len(overdue) == 0 {
			t.Fatal("test set-up: nothing overdue")
		}
		want := dueOrder(overdue)
		for _, first := range []int{1, 2, 100} {
			got := pageAll(t, first, func(p domain.Page) (*domain.Conn[*domain.Task], error) {
				return ts.OverdueTasks(ctx, "dave", asOf, p, nil)
			}, taskID)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
	})
	t.Run("TasksOfProject with a status filter fills pages", func(t *testing.T) {
		done := domain.StatusDone
		for _, p := range ps {
			var want []*domain.Task
			for _, task := range d.Tasks {
				if task.ProjectID == p.ID && task.Status == domain.StatusDone {
					want = append(want, task)
				}
			}
			for _, first := range []int{1, 2} {
				got := pageAll(t, first, func(pg domain.Page) (*domain.Conn[*domain.Task], error) {
					return ts.TasksOfProject(ctx, p.ID, &done, pg)
				}, taskID)
				if !slices.Equal(got, dueOrder(want)) {
					t.Errorf("%s first %d: got %v\nwant %v", p.Name, first, got, dueOrder(want))
				}
			}
		}
	})
	t.Run("ProjectsOfUser lists the newest project first", func(t *testing.T) {
		want := []string{ps[2].ID, ps[1].ID, ps[0].ID}
		got := pageAll(t, 1, func(p domain.Page) (*domain.Conn[*domain.Member], error) {
			return ts.ProjectsOfUser(ctx, "dave", p, nil)
		}, func(m *domain.Member) string { return m.ProjectID })
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// TestDecodedOnce proves that a list's items are decoded once though both
// its keep and its page ask for them, and that distinct items with equal
// contents are still decoded apart.
func TestDecodedOnce(t *testing.T) {
	n := 0
	conv := decodedOnce(func(it item) (string, error) { n++; return str(it, attrSK), nil })
	a := item{attrPK: &types.AttributeValueMemberS{Value: "P"}, attrSK: &types.AttributeValueMemberS{Value: "A"}}
	b := item{attrPK: &types.AttributeValueMemberS{Value: "P"}, attrSK: &types.AttributeValueMemberS{Value: "A"}}
	for _, it := range []item{a, a, b, b, a} {
		if v, err := conv(it); v != "A" || err != nil {
			t.Fatalf("conv = %q, %v", v, err)
		}
	}
	if n != 2 {
		t.Errorf("%d decodes of 2 items read 5 times, want 2", n)
	}
}

// mapIDs returns the ids of items, in order.
func mapIDs[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}
