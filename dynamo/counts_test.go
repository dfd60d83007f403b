package dynamo

import (
	"context"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/taskgraph/taskgraph/domain"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// writeTap records the write calls a store makes.
type writeTap struct {
	API
	txns      []*dynamodb.TransactWriteItemsInput // the committed ones
	cancelled int                                 // transactions that failed (a tag index made on first use: tagindex.go)
	puts      []*dynamodb.PutItemInput
}

func (w *writeTap) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := w.API.TransactWriteItems(ctx, in, o...)
	if err != nil {
		w.cancelled++
	} else {
		w.txns = append(w.txns, in)
	}
	return out, err
}

func (w *writeTap) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	w.puts = append(w.puts, in)
	return w.API.PutItem(ctx, in, o...)
}

// writeCost is what one mutation writes: transaction actions by kind, and
// the index entries its writes touch.
type writeCost struct {
	checks, puts, updates, deletes int // items of its transactions (or single puts)
	indexWrites                    int // GSI entries written (1 per GSI of each written item)
	updated                        []string
}

// gsisOf is how many GSIs an item of that key has entries in (every GSI
// projects all attributes, so a write that changes any attribute of such
// an item writes its entry: one write, two when the entry's key changes).
func gsisOf(k map[string]types.AttributeValue, it map[string]types.AttributeValue) int {
	if it != nil {
		n := 0
		for _, a := range []string{attrGSI1PK, attrGSI2PK} {
			if _, ok := it[a]; ok {
				n++
			}
		}
		return n
	}
	sk := str(k, attrSK)
	switch {
	case sk == taskSK:
		return 2
	case strings.HasPrefix(sk, "MEMBER#"), strings.HasPrefix(sk, "TAG#"):
		return 1
	}
	return 0
}

func (w *writeTap) cost() writeCost {
	var c writeCost
	for _, in := range w.txns {
		for _, a := range in.TransactItems {
			switch {
			case a.ConditionCheck != nil:
				c.checks++
			case a.Put != nil:
				c.puts++
				c.indexWrites += gsisOf(nil, a.Put.Item)
			case a.Update != nil:
				c.updates++
				c.indexWrites += gsisOf(a.Update.Key, nil)
				c.updated = append(c.updated, str(a.Update.Key, attrSK))
			case a.Delete != nil:
				c.deletes++
				c.indexWrites += gsisOf(a.Delete.Key, nil)
			}
		}
	}
	for _, p := range w.puts {
		c.puts++
		c.indexWrites += gsisOf(nil, p.Item)
	}
	return c
}

// TestCounterWriteCost measures what each mutation writes (events off, no
// idempotency key): the items of its transaction by action and the index
// entries its writes touch, and pins the counters' share of it. Run with
// -v for the table of docs/design.md ("Counters").
func TestCounterWriteCost(t *testing.T) {
	// What the counters add: the update of the project's counters
	// (createTask, deleteTask, a status change) or of the task's comment
	// count (addComment, deleteComment), each in place of the
	// ConditionCheck the transaction made of that item before.
	counted := map[string]string{
		"createTask": "PROJECT", "updateTask": "PROJECT", "deleteTask": "PROJECT",
		"addComment": "TASK", "deleteComment": "TASK",
	}
	var rows []string
	for _, c := range eventCases {
		op := strings.Fields(c.name)[0]
		t.Run(op, func(t *testing.T) {
			f := newOutboxFixture(t, false)
			tap := &writeTap{API: f.ts.Store.db}
			f.ts.Store.db = tap
			if _, err := c.do(context.Background(), f); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			w := tap.cost()
			// Items ≤ 1 KB, by the rules of graph/capacity_test.go's
			// estimateUnits: 2 WCU for every item of a transaction (a
			// ConditionCheck too), 1 for a single put and for each index
			// write.
			wcu := 2*(w.checks+w.puts+w.updates+w.deletes) + w.indexWrites
			if len(tap.txns) == 0 {
				wcu = w.puts + w.indexWrites
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d |", op, w.checks, w.puts, w.updates, w.deletes, w.indexWrites, wcu))
			var counterUpdates int
			for _, sk := range w.updated {
				if sk == counted[op] {
					counterUpdates++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[counted[op] != ""]; counterUpdates != want {
				t.Errorf("%s updates %d %s items (%v), want %d: the counter's update", op, counterUpdates, counted[op], w.updated, want)
			}
		})
	}
	// A tag index's entry carries its task's title (tagindex.go,
	// entryValue): a title's change rewrites the entry in each of the
	// task's two tag indexes, a status change touches none.
	for _, c := range []struct {
		name  string
		patch TaskPatch
		tags  int
	}{
		{"updateTask (title only)", TaskPatch{Title: Some(aws.String("Renamed"))}, 2},
		{"updateTask (status only)", TaskPatch{Status: Some(ptr(domain.StatusDone))}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newOutboxFixture(t, false)
			tap := &writeTap{API: f.ts.Store.db}
			f.ts.Store.db = tap
			c.patch.ID = f.tk.ID
			if _, err := f.ts.UpdateTask(context.Background(), "member", c.patch); err != nil {
				t.Fatal(err)
			}
			w := tap.cost()
			rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d |", c.name, w.checks, w.puts, w.updates, w.deletes, w.indexWrites,
				2*(w.checks+w.puts+w.updates+w.deletes)+w.indexWrites))
			indexes := 0
			for _, sk := range w.updated {
				if strings.HasPrefix(sk, "TAGS#") {
					indexes++
				}
			}
			if indexes != c.tags {
				t.Errorf("%s updates %d tag indexes (%v), want %d", c.name, indexes, w.updated, c.tags)
			}
		})
	}
	t.Logf("\n| mutation | checks | puts | updates | deletes | index writes | WCU |\n| --- | --: | --: | --: | --: | --: | --: |\n%s", strings.Join(rows, "\n"))
}

// Recount puts right every counter that is off or missing, and writes only
// the items whose counters were off.
func TestRecountRightsTheCounters(t *testing.T) {
	ts := newTestStore(t)
	d := ts.Demo(storeTestNow)
	ts.mustImport(t, d)
	ctx := context.Background()
	if n, err := ts.Recount(ctx); err != nil || n != 0 {
		t.Fatalf("Recount of a counted table = %d, %v; want 0, nil", n, err)
	}
	task, project := d.Tasks[0], d.Projects[0] // the task has comments
	if task.CommentCount == 0 || project.TaskCounts.Total() == 0 {
		t.Fatal("the demo's first task has no comments, or its first project no tasks")
	}
	stored, err := ts.getItems(ctx, []key{taskKey(ulidOf(task.ID)), projectKey(ulidOf(project.ID))})
	if err != nil {
		t.Fatal(err)
	}
	tk, pk := stored[0], stored[1]
	delete(tk, attrCommentCount)
	pk[attrTodoCount] = &types.AttributeValueMemberN{Value: "77"}
	for _, it := range []item{tk, pk} {
		if _, err := ts.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ts.Recount(ctx); err != nil || n != 2 {
		t.Fatalf("Recount = %d, %v; want 2 items written, nil", n, err)
	}
	items, err := ts.getItems(ctx, []key{taskKey(ulidOf(task.ID)), projectKey(ulidOf(project.ID))})
	if err != nil {
		t.Fatal(err)
	}
	gotT, _ := decodeAs[*domain.Task](items[0])
	gotP, _ := decodeAs[*domain.Project](items[1])
	if gotT.CommentCount != task.CommentCount || gotP.TaskCounts != project.TaskCounts {
		t.Errorf("after Recount: %d comments, counts %+v; want %d, %+v", gotT.CommentCount, gotP.TaskCounts,
			task.CommentCount, project.TaskCounts)
	}
}
