package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// tagged lists the ids of tasksByTag's whole answer, in pages of 2.
func tagged(t *testing.T, ts *testStore, tag string, projectIDs []string) []string {
	t.Helper()
	return pageAll(t, 2, func(p domain.Page) (*domain.Conn[*domain.Task], error) {
		return ts.TasksByTag(context.Background(), tag, projectIDs, p, nil, nil)
	}, func(t *domain.Task) string { return t.ID })
}

// A tag index follows every write of its tasks: created with the first
// task, changed with a due date, emptied by removals; past TagIndexCap it is
// marked full and tasksByTag reads the tag links instead, with the same
// answer; a recount builds it afresh (full again, being over the cap).
func TestTagIndexFollowsItsTasksAndFillsUp(t *testing.T) {
	ts := newTestStore(t)
	ts.TagIndexCap = 6 // three ordinary entries, two units each (entryUnits)
	d, ps, _ := taggedDataset(ts)
	ts.mustImport(t, d)
	ctx := context.Background()
	p := ps[0].ID
	projects := []string{p}
	key := tagIndexKey(ulidOf(p), "z")
	entries := func() (int, bool) {
		t.Helper()
		it, err := ts.getOne(ctx, key)
		if err != nil || it == nil {
			t.Fatalf("index %v: %v, %v", key, it, err)
		}
		_, full := it[attrFull]
		return len(entries(t, it)), full
	}
	var ids []string
	for i := range 3 {
		due := domain.DateOf(storeTestNow).AddDays(10 - i)
		task, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: p, Title: fmt.Sprint("Z", i), DueDate: &due, Tags: []string{"z"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{task.ID}, ids...) // later ones are due sooner
	}
	if n, full := entries(); n != 3 || full {
		t.Fatalf("index after 3 tasks: %d entries, full %v; want 3, not full", n, full)
	}
	if got := tagged(t, ts, "z", projects); !slices.Equal(got, ids) {
		t.Fatalf("tasksByTag(z) = %v, want %v", got, ids)
	}
	// A due date moved: the order follows.
	late := domain.DateOf(storeTestNow).AddDays(50)
	if _, err := ts.UpdateTask(ctx, "owner", TaskPatch{ID: ids[0], DueDate: Some(&late)}); err != nil {
		t.Fatal(err)
	}
	ids = append(ids[1:], ids[0])
	if got := tagged(t, ts, "z", projects); !slices.Equal(got, ids) {
		t.Fatalf("after moving a due date: %v, want %v", got, ids)
	}
	// A fourth passes the cap: the index is marked full, the answer stays.
	fourth, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: p, Title: "Z3", Tags: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, fourth.ID) // no due date: last
	if _, full := entries(); !full {
		t.Fatal("the index is not marked full past its cap")
	}
	ts.calls.Reset()
	if got := tagged(t, ts, "z", projects); !slices.Equal(got, ids) {
		t.Fatalf("with the index full: %v, want %v", got, ids)
	}
	if ts.calls.Get("Query") == 0 {
		t.Fatal("no Query: a full index was read as if it listed its tasks")
	}
	// Deleting and untagging keep the answer right through the links.
	if err := ts.DeleteTask(ctx, "owner", ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.UpdateTask(ctx, "owner", TaskPatch{ID: ids[1], Tags: Some([]string{"other"})}); err != nil {
		t.Fatal(err)
	}
	ids = ids[2:]
	if got := tagged(t, ts, "z", projects); !slices.Equal(got, ids) {
		t.Fatalf("after a delete and an untag: %v, want %v", got, ids)
	}
	// Rebuilt from the tasks, at 2 of a cap of 3 entries, the index lists them again.
	if _, err := ts.Recount(ctx); err != nil {
		t.Fatal(err)
	}
	if n, full := entries(); n != 2 || full {
		t.Fatalf("after the recount: %d entries, full %v; want 2, not full", n, full)
	}
	ts.calls.Reset()
	if got := tagged(t, ts, "z", projects); !slices.Equal(got, ids) || ts.calls.Get("Query") != 0 {
		t.Fatalf("after the recount: %v with %d Queries, want %v with none", got, ts.calls.Get("Query"), ids)
	}
}

// entries are the ids of the tasks an index item lists.
func entries(t *testing.T, it item) []string {
	t.Helper()
	es, err := indexEntries(it, "prj#x")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.taskID)
	}
	return out
}

// A table whose tag indexes counted entries (a version before units), or
// units without one for each entry's title, gets its counts in units once,
// at EnsureTable, and the marker: an index of long assignees' entries
// counts six units each from then on.
func TestEnsureTagUnitsCountsOldIndexesOnce(t *testing.T) {
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	long := b.User(strings.Repeat("𠀀", 128), "Long", "")
	p := b.Project("P", "", owner, long)
	for range 3 {
		b.Task(p, "T", domain.StatusTodo, nil, long, "x")
	}
	ts.mustImport(t, &b.D)
	ctx := context.Background()
	ix := tagIndexKey(ulidOf(p.ID), "x")
	units := func() int64 {
		t.Helper()
		it, err := ts.getOne(ctx, ix)
		if err != nil || it == nil {
			t.Fatalf("index: %v %v", it, err)
		}
		return numberOf(it, attrEntries)
	}
	if n := units(); n != 18 {
		t.Fatalf("an imported index of 3 long entries counts %d, want 18 units", n)
	}
	// As a version before left it: a count of entries, no marker.
	if _, err := ts.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &ts.table, Key: ix.av(),
		UpdateExpression: aws.String("SET entries = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "3"}}}); err != nil {
		t.Fatal(err)
	}
	if err := ts.deleteKeys(ctx, []key{tagUnitsKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if n := units(); n != 18 {
		t.Errorf("after EnsureTable: %d, want 18 units", n)
	}
	if it, err := ts.getOne(ctx, tagUnitsKey); err != nil || it == nil {
		t.Errorf("no marker after EnsureTable: %v", err)
	}
}

// TestTagIndexEntriesOfEitherFormAreRead reads an index holding entries as
// written before they carried titles and as written now (a title with
// '|' in it, a task without due date or assignee): each is the task it
// names, listed only when it carries its title; a title longer than an
// entry holds is left out, and a title's change moves the entry but not
// the task's links.
func TestTagIndexEntriesOfEitherFormAreRead(t *testing.T) {
	const old, now, bare = "01M0WCN9G0GKQZBFN13S21A9AA", "01M0WCN9G0GKQZBFN13S21A9AB", "01M0WCN9G0GKQZBFN13S21A9AC"
	it := item{attrTasks: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		keepEntry: &types.AttributeValueMemberS{Value: ""},
		old:       &types.AttributeValueMemberS{Value: "2026-01-02|alice"},
		now:       &types.AttributeValueMemberS{Value: "2026-01-03|bob|Fix | the form"},
		bare:      &types.AttributeValueMemberS{Value: "~||Dark mode"},
	}}}
	pid := domain.ProjectIDOf("01M0WCN9G0GKQZBFN138ZEQ0R0")
	es, err := indexEntries(it, pid)
	if err != nil || len(es) != 3 {
		t.Fatalf("indexEntries = %d entries, %v; want 3", len(es), err)
	}
	got := map[string]*domain.Task{}
	for _, e := range es {
		got[ulidOf(e.taskID)] = e.listed()
		if e.projectID != pid || ulidOf(e.taskID) == old && e.assigneeID != "alice" {
			t.Errorf("entry %+v", e)
		}
	}
	if got[old] != nil {
		t.Errorf("an entry without a title is listed as %+v; its task must be read", got[old])
	}
	if l := got[now]; l == nil || l.Title != "Fix | the form" || l.DueDate == nil || l.DueDate.String() != "2026-01-03" ||
		l.AssigneeID == nil || *l.AssigneeID != "bob" || l.ID != domain.TaskIDOf(now) {
		t.Errorf("an entry with its title is listed as %+v", l)
	}
	if l := got[bare]; l == nil || l.Title != "Dark mode" || l.DueDate != nil || l.AssigneeID != nil {
		t.Errorf("an entry without due date or assignee is listed as %+v", l)
	}
	task := &domain.Task{ID: domain.TaskIDOf(now), ProjectID: pid, Title: strings.Repeat("x", maxEntryTitle+1)}
	if v := entryValue(task); strings.Count(v, "|") != 1 {
		t.Errorf("a title of %d bytes is in the entry %q", len(task.Title), v)
	}
	renamed := *task
	renamed.Title = "Short"
	if entryValue(task) == entryValue(&renamed) || linkValue(task) != linkValue(&renamed) {
		t.Error("a title's change must move the entry and not the links")
	}
}
