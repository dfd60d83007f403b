package dynamo

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A table whose comments were written before GSI3 (no GSI3PK, the
// backfill's marker absent) reads its collections in GSI1, with the
// answers of a per-task read; once EnsureTable has run the backfill
// (comments-gsi3), it reads GSI3's entries, with the same answers for
// fewer read units, and a comment written after reads the same there.
func TestCommentsWrittenBeforeGSI3ReadTheSameAndCostLessOnceBackfilled(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	asks, _ := threadsFixture(t, ts, 3)
	want := perTask(t, ts, asks)
	stripped := mustStripComments(t, ts, "GSI3PK")
	if _, err := ts.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(ts.Table()),
		Key: backfillKey(commentsLeanBackfill.name).av()}); err != nil {
		t.Fatal(err)
	}
	old := New(ts.client, ts.Table()) // a store started on the table as it was
	old.Now, old.Log = ts.Now, ts.Log
	old.Sleep = func(context.Context, time.Duration) error { return nil } // the backfill's pace: not waited
	old.commentIndexed.Store(true)
	ts.Store = old
	read := func(when string) (float64, map[string]int) {
		t.Helper()
		ts.calls.Reset()
		if got := mustCommentsOfTasks(t, ts, asks); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s, pages differ from CommentsOf's:\n got %+v\nwant %+v", when, got, want)
		}
		units, _ := ts.calls.Capacity()
		return units, ts.calls.ByOp()
	}
	before, beforeCalls := read("before the backfill")
	if _, err := old.EnsureTable(ctx); err != nil { // the backfill
		t.Fatal(err)
	}
	if !old.hasBackfill(commentsLeanBackfill) || stripped < 20 {
		t.Fatalf("backfill done: %v, %d comments", old.hasBackfill(commentsLeanBackfill), stripped)
	}
	n := 0
	for _, it := range mustScan(t, ts) {
		if str(it, "type") == typeComment && str(it, attrGSI3PK) != "" {
			n++
		}
	}
	if n != stripped {
		t.Errorf("%d of %d comments have their GSI3 key after the backfill", n, stripped)
	}
	after, afterCalls := read("after the backfill")
	if !reflect.DeepEqual(afterCalls, beforeCalls) || after >= before {
		t.Errorf("after the backfill: %v units %v, before %v units %v: want the same calls, fewer units", after, afterCalls, before, beforeCalls)
	}
	t.Logf("read units before the backfill (GSI1) %v, after (GSI3) %v", before, after)
}

// A Query of GSI3 that its Limit cuts inside a thread (whose comments tie
// on their index keys, in an order DynamoDB leaves open) reads that
// thread per task: the pages are CommentsOf's.
func TestAThreadGSI3CutsIsReadPerTask(t *testing.T) {
	ts := newTestStore(t)
	asks, _ := threadsFixture(t, ts, 0)
	for i := range asks {
		asks[i].CommentCount = min(asks[i].CommentCount, 1) // a Limit too small: the Query stops inside a thread
	}
	want := perTask(t, ts, asks)
	ts.calls.Reset()
	if got := mustCommentsOfTasks(t, ts, asks); !reflect.DeepEqual(got, want) {
		t.Errorf("pages differ from CommentsOf's:\n got %+v\nwant %+v", got, want)
	}
	if q := ts.calls.Get("Query"); q < 3 {
		t.Errorf("%d Queries: want the collection's and per-task reads of the threads it cut", q)
	}
}

func mustScan(t *testing.T, ts *testStore) []map[string]types.AttributeValue {
	t.Helper()
	out, err := ts.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(ts.Table())})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}
