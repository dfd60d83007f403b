package graph_test

import (
	"context"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestTasksByTagOnATableWrittenBeforeTitlesReadsNoTaskOnceBackfilled: on
// a table whose tag index entries carry no titles (as a version before
// titles wrote them), tasksByTag selecting only what an entry holds reads
// the page's task items; once the backfill tag-entry-titles has run, it
// reads no task item: the same answer, the read units of a table written
// with titles, and the table holds every invariant.
func TestTasksByTagOnATableWrittenBeforeTitlesReadsNoTaskOnceBackfilled(t *testing.T) {
	t.Parallel()
	for _, b := range []testenv.Backend{testenv.EmbeddedStore, testenv.DynamoDBLocal} { // (dynalite has no transactions)
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			e := testenv.NewOn(t, b)
			e.MustSeed(t)
			const q = `query { tasksByTag(tag: "urgent", first: 20) { nodes { id title project { id } assignee { id } } } }`
			read := func() (string, float64) {
				t.Helper()
				e.Calls.Reset()
				var got any
				e.MustQuery(t, "alice", q, nil, &got)
				units, _ := e.Calls.Capacity()
				return testenv.JSON(got), units
			}
			fresh, freshUnits := read()
			if n := e.MustUntitleTagEntries(t); n < 3 {
				t.Fatalf("%d entries untitled, want the seed's", n)
			}
			old, oldUnits := read()
			if err := e.Store.RunBackfills(context.Background()); err != nil {
				t.Fatal(err)
			}
			after, afterUnits := read()
			if old != fresh || after != fresh {
				t.Errorf("answers differ:\nwritten with titles %s\nwithout %s\nbackfilled %s", fresh, old, after)
			}
			// Without titles, the page's 3 tasks are read (0.5 each, in the batch).
			if afterUnits != freshUnits || oldUnits != freshUnits+1.5 {
				t.Errorf("read units: %v written with titles, %v without, %v backfilled: want the first and last equal, the second 1.5 more",
					freshUnits, oldUnits, afterUnits)
			}
			if v := testenv.CheckTable(e.Items(t)); len(v) != 0 {
				t.Errorf("violations after the backfill: %q", v)
			}
			t.Logf("tasksByTag(urgent): %v read units with titles, %v without, %v backfilled", freshUnits, oldUnits, afterUnits)
		})
	}
}
