package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// oldTagTable is a table on db written by this version whose tag index
// entries are then made as a version before titles wrote them
// (mustUntitle), with the tasks of tagTitlesDataset.
type oldTagTable struct {
	*Store
	db    *dynamodb.Client
	calls *client.Calls
	ds    *tagTitlesData
}

type tagTitlesData struct {
	projects []string
	short    []*domain.Task // tagged "web", titles that fit an entry
	long     *domain.Task   // tagged "web" and "urgent", a title too long
}

// mustOldTagTable makes the table, imports the data, and strips the
// titles from the entries and the backfill's marker from the table.
func mustOldTagTable(t *testing.T, db *dynamodb.Client, calls *client.Calls, tasks int) *oldTagTable {
	t.Helper()
	ctx := context.Background()
	s := New(db, fmt.Sprintf("tagtitles-%d-%d", time.Now().UnixNano(), testTableN.Add(1)))
	s.Now, s.Log = func() time.Time { return storeTestNow }, slog.New(slog.DiscardHandler)
	s.Sleep = func(context.Context, time.Duration) error { return nil } // the pace: not waited
	if _, err := s.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Table())})
	})
	b := s.NewDataset(storeTestNow)
	owner, dave := b.User("owner", "Owner", ""), b.User("dave", "Dave", "")
	ds := &tagTitlesData{}
	var ps []*domain.Project
	for i := range 2 {
		ps = append(ps, b.Project(fmt.Sprint("P", i), "", owner, dave))
		ds.projects = append(ds.projects, ps[i].ID)
	}
	today := domain.DateOf(storeTestNow)
	for i := range tasks {
		due := today.AddDays(i % 7)
		title := fmt.Sprintf("Task %d | with a bar", i)
		ds.short = append(ds.short, b.Task(ps[i%2], title, domain.StatusTodo, &due, []*domain.User{dave, nil}[i%2], "web", fmt.Sprint("t", i%40)))
	}
	ds.long = b.Task(ps[0], strings.Repeat("L", maxEntryTitle+1), domain.StatusTodo, nil, nil, "web", "urgent")
	if err := s.Import(ctx, &b.D); err != nil {
		t.Fatal(err)
	}
	ts := &oldTagTable{Store: s, db: db, calls: calls, ds: ds}
	if n := ts.mustUntitle(t); n < tasks {
		t.Fatalf("%d entries untitled, want at least %d", n, tasks)
	}
	calls.Reset()
	return ts
}

// mustUntitle rewrites every tag index entry as a version before titles
// wrote it (due date|assignee) and deletes the backfill's marker; it
// returns how many entries lost their title.
func (ts *oldTagTable) mustUntitle(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, it := range ts.mustItems(t) {
		if str(it, "type") != typeTagIndex {
			continue
		}
		m := it[attrTasks].(*types.AttributeValueMemberM).Value
		for tu, v := range m {
			s := v.(*types.AttributeValueMemberS).Value
			if titled(s) {
				due, rest, _ := strings.Cut(s, "|")
				a, _, _ := strings.Cut(rest, "|")
				m[tu] = &types.AttributeValueMemberS{Value: due + "|" + a}
				n++
			}
		}
		if _, err := ts.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.deleteKeys(ctx, []key{backfillKey(tagTitlesName)}); err != nil {
		t.Fatal(err)
	}
	return n
}

func (ts *oldTagTable) mustItems(t *testing.T) []item {
	t.Helper()
	var all []item
	for p := dynamodb.NewScanPaginator(ts.db, &dynamodb.ScanInput{TableName: aws.String(ts.Table())}); p.HasMorePages(); {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out.Items...)
	}
	return all
}

// violations are the table's items against the backfills its markers say
// are done, as internal/testenv's CheckTable checks them.
func (ts *oldTagTable) violations(t *testing.T) []string {
	t.Helper()
	var plain []map[string]any
	for _, it := range ts.mustItems(t) {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			t.Fatal(err)
		}
		plain = append(plain, m)
	}
	return BackfillViolations(plain)
}

// entry is the value of task tk's entry in its project's index of tag.
func (ts *oldTagTable) entry(t *testing.T, tk *domain.Task, tag string) string {
	t.Helper()
	it, err := ts.getOne(context.Background(), tagIndexKey(ulidOf(tk.ProjectID), tag))
	if err != nil || it == nil {
		t.Fatalf("the index of %s: %v %v", tag, it, err)
	}
	v, _ := it[attrTasks].(*types.AttributeValueMemberM).Value[ulidOf(tk.ID)].(*types.AttributeValueMemberS)
	if v == nil {
		t.Fatalf("no entry of %s in the index of %s", tk.ID, tag)
	}
	return v.Value
}

// q6 reads tasksByTag(tag) as the graph's loader reads a page whose nodes
// select only what an entry holds (id title dueDate project assignee): a
// task its entry lists is taken from it, the others are read. It returns
// the titles, the BatchGetItem calls and the read units.
func (ts *oldTagTable) q6(t *testing.T, tag string) ([]string, int, float64) {
	t.Helper()
	ts.calls.Reset()
	read := func(ctx context.Context, named []Tagged) ([]*domain.Task, error) {
		var rest []Tagged
		for _, n := range named {
			if n.Listed == nil {
				rest = append(rest, n)
			}
		}
		got, err := ts.readTagged(ctx, rest)
		if err != nil {
			return nil, err
		}
		out := make([]*domain.Task, len(named))
		for i, n := range named {
			if out[i] = n.Listed; out[i] == nil {
				out[i], got = got[0], got[1:]
			}
		}
		return out, nil
	}
	ctx := WithConsistency(context.Background(), Screen)
	c, err := ts.TasksByTag(ctx, tag, ts.ds.projects, domain.Page{First: 100}, nil, read)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, task := range c.Items {
		titles = append(titles, task.Title)
	}
	units, _ := ts.calls.Capacity()
	return titles, ts.calls.Get("BatchGetItem"), units
}

// TestOldTagEntriesGetTheirTitlesOnce: on a table whose tag index entries
// were written before they carried titles, tasksByTag reads each task of
// a page; EnsureTable (a start, or migrate) runs tag-entry-titles, which
// gives every entry whose task's title fits its title (a title with '|'
// too; one too long stays without), in one transaction per index here,
// and marks itself done: tasksByTag then answers from the entries with
// one BatchGetItem, the same titles, fewer units; the table holds the
// backfill's invariant; a second run reads its marker and writes nothing.
func TestOldTagEntriesGetTheirTitlesOnce(t *testing.T) {
	calls := &client.Calls{}
	for name, db := range migrationBackends(t, calls.Option) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ts := mustOldTagTable(t, db, calls, 12)
			if v := ts.violations(t); len(v) != 0 {
				t.Fatalf("violations before the backfill is marked done: %q", v)
			}
			before, beforeGets, beforeUnits := ts.q6(t, "web")
			ts.calls.Reset()
			if _, err := ts.EnsureTable(ctx); err != nil {
				t.Fatal(err)
			}
			rcu, wcu := ts.calls.Capacity()
			t.Logf("the backfill of 14 indexes, 25 entries: %v read units, %v write units, %v", rcu, wcu, ts.calls)
			// One write per index that had untitled entries: web in P0
			// and P1, t0…t11 (the long task's urgent has none to give).
			if n := ts.calls.Get("TransactWriteItems"); n != 14 {
				t.Errorf("the backfill made %d transactions, want 14 (one per index)", n)
			}
			for _, tk := range ts.ds.short {
				if got := ts.entry(t, tk, "web"); got != entryValue(tk) {
					t.Errorf("the entry of %q after the backfill: %q, want %q", tk.Title, got, entryValue(tk))
				}
			}
			if got := ts.entry(t, ts.ds.long, "web"); got != linkValue(ts.ds.long) {
				t.Errorf("the entry of the long title: %q, want it without (%q)", got, linkValue(ts.ds.long))
			}
			if m, _ := ts.getOne(ctx, backfillKey(tagTitlesName)); !boolOf(m, "done") || numOf(m, "written") != "14" {
				t.Errorf("the marker after the backfill: %v, want done after 14 writes", m)
			}
			if v := ts.violations(t); len(v) != 0 {
				t.Errorf("violations after the backfill: %q", v)
			}
			after, afterGets, afterUnits := ts.q6(t, "web")
			if strings.Join(after, ",") != strings.Join(before, ",") || len(after) != 13 {
				t.Errorf("tasksByTag(web) after the backfill: %q, before %q", after, before)
			}
			// Before: the indexes, then the 13 tasks; after: the indexes,
			// then the long-titled task alone.
			if beforeGets != 2 || afterGets != 2 || afterUnits >= beforeUnits {
				t.Errorf("tasksByTag(web): %d BatchGetItems, %v units before; %d, %v after: want 2 and fewer units", beforeGets, beforeUnits, afterGets, afterUnits)
			}
			ts.calls.Reset()
			if _, err := ts.EnsureTable(ctx); err != nil {
				t.Fatal(err)
			}
			if n := ts.calls.Get("TransactWriteItems") + ts.calls.Get("PutItem") + ts.calls.Get("Scan"); n != 0 {
				t.Errorf("a second run: %v, want no Scan and no write", ts.calls)
			}
			t.Logf("tasksByTag(web), 13 tasks: %v read units before the backfill, %v after", beforeUnits, afterUnits)
		})
	}
}

// TestABigIndexIsTitledInTransactionsOf99Entries: an index of 121
// untitled entries is titled in two transactions (99 entries, then the
// rest), on DynamoDB Local as on the embedded store.
func TestABigIndexIsTitledInTransactionsOf99Entries(t *testing.T) {
	calls := &client.Calls{}
	for name, db := range migrationBackends(t, calls.Option) {
		t.Run(name, func(t *testing.T) {
			ts := mustOldTagTable(t, db, calls, 240)
			if err := ts.RunBackfills(context.Background()); err != nil {
				t.Fatal(err)
			}
			// web in P0 (121 entries) and P1 (120): two each; t0…t39: one each.
			if n := ts.calls.Get("TransactWriteItems"); n != 44 {
				t.Errorf("%d transactions, want 44", n)
			}
			if v := ts.violations(t); len(v) != 0 {
				t.Errorf("violations: %q", v)
			}
			rcu, wcu := ts.calls.Capacity()
			t.Logf("the backfill of 42 indexes, 480 entries: %v read units, %v write units, %v", rcu, wcu, ts.calls)
		})
	}
}

// TestBackfillViolationsFindsAnEntryWithoutItsTitle: once tag-entry-titles
// is done, an entry whose task's title fits and that lacks it is reported;
// one whose title is too long, or before the marker, is not.
func TestBackfillViolationsFindsAnEntryWithoutItsTitle(t *testing.T) {
	const pu, tu = "01HZX3J8Q5W8G2S8V7N1K6T0AB", "01HZX3J8Q5W8G2S8V7N1K6T0CD"
	marker := map[string]any{"PK": "META", "SK": "BACKFILL#" + tagTitlesName, "type": typeBackfillMarker, "done": true}
	index := func(v string) map[string]any {
		k := tagIndexKey(pu, "web")
		return map[string]any{"PK": k.PK, "SK": k.SK, "type": typeTagIndex, attrTasks: map[string]any{tu: v}}
	}
	task := func(title string) map[string]any {
		return map[string]any{"PK": taskPK(tu), "SK": taskSK, "type": typeTask, "title": title}
	}
	long := strings.Repeat("x", maxEntryTitle+1)
	for _, c := range []struct {
		name  string
		items []map[string]any
		want  int
	}{
		{"an entry with its title", []map[string]any{marker, index("~||Fix it"), task("Fix it")}, 0},
		{"an entry without the title that fits", []map[string]any{marker, index("~|"), task("Fix it")}, 1},
		{"an entry without a title too long", []map[string]any{marker, index("~|"), task(long)}, 0},
		{"an entry without title before the backfill is done", []map[string]any{index("~|"), task("Fix it")}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := BackfillViolations(c.items); len(got) != c.want || c.want > 0 && !strings.Contains(got[0], tu) {
				t.Errorf("violations %q, want %d naming the task", got, c.want)
			}
		})
	}
}

// TestARenameRacingTheTitleBackfillWins renames a task between the
// backfill's reads and its write: to another title (its write rewrote the
// entry the backfill read), and to a title too long for an entry (its
// write left the entry as it was: only the check of the task's title
// sees it). Either way the rename's entry stands, the backfill writes the
// others, and the table holds the invariant.
func TestARenameRacingTheTitleBackfillWins(t *testing.T) {
	calls := &client.Calls{}
	for name, db := range migrationBackends(t, calls.Option) {
		for _, rename := range []string{"Renamed | short", strings.Repeat("R", maxEntryTitle+1)} {
			t.Run(fmt.Sprintf("%s/%d bytes", name, len(rename)), func(t *testing.T) {
				ctx := context.Background()
				ts := mustOldTagTable(t, db, calls, 4)
				target := ts.ds.short[0]
				writes, raced := 0, false
				ts.beforeFillWrite = func(ctx context.Context, k key) error {
					writes++
					if !raced && (k == tagIndexKey(ulidOf(target.ProjectID), "web") || k == tagIndexKey(ulidOf(target.ProjectID), "t0")) {
						raced = true
						if _, err := ts.UpdateTask(ctx, "owner", TaskPatch{ID: target.ID, Title: Some(&rename)}); err != nil {
							t.Fatal(err)
						}
					}
					return nil
				}
				if err := ts.RunBackfills(ctx); err != nil {
					t.Fatal(err)
				}
				renamed := *target
				renamed.Title = rename
				if got := ts.entry(t, target, "web"); got != entryValue(&renamed) {
					t.Errorf("the renamed task's entry: %q, want the rename's %q", got, entryValue(&renamed))
				}
				for _, tk := range ts.ds.short[1:] {
					if got := ts.entry(t, tk, "web"); got != entryValue(tk) {
						t.Errorf("the entry of %q: %q, want %q", tk.Title, got, entryValue(tk))
					}
				}
				if got := ts.entry(t, target, "t0"); got != entryValue(&renamed) {
					t.Errorf("the renamed task's other entry: %q, want the rename's %q", got, entryValue(&renamed))
				}
				// The raced transaction cancelled (and, after a rename that
				// rewrote the entries, that of the task's other index, read
				// by the same Scan page before the rename), then retried.
				m, _ := ts.getOne(ctx, backfillKey(tagTitlesName))
				if made, _ := strconv.Atoi(numOf(m, "written")); !raced || writes-made < 1 || writes-made > 2 {
					t.Errorf("raced %v; %d writes tried, the marker counts %d made: want one or two cancelled", raced, writes, made)
				}
				if v := ts.violations(t); len(v) != 0 {
					t.Errorf("violations: %q", v)
				}
			})
		}
	}
}

// laggingReplica answers eventually consistent BatchGetItems with each
// task as it was before its due date moved (a replica behind the table).
type laggingReplica struct{ *dynamodb.Client }

func (r laggingReplica) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := r.Client.BatchGetItem(ctx, in, opts...)
	for table, ka := range in.RequestItems {
		if err != nil || aws.ToBool(ka.ConsistentRead) {
			continue
		}
		for _, it := range out.Responses[table] {
			if str(it, "type") == typeTask {
				it["dueDate"] = &types.AttributeValueMemberS{Value: "2020-01-01"}
			}
		}
	}
	return out, err
}

// TestATaskReadFromALaggingReplicaIsReadAgain: a task whose first read
// (eventually consistent) is out of step with its entry is read again,
// strongly, and its entry titled: a lagging replica leaves no entry out.
func TestATaskReadFromALaggingReplicaIsReadAgain(t *testing.T) {
	calls := &client.Calls{}
	ts := mustOldTagTable(t, testEmbClient(t, calls.Option), calls, 4)
	lagging := New(laggingReplica{ts.db}, ts.Table())
	lagging.Now, lagging.Log, lagging.Sleep = ts.Now, ts.Log, ts.Sleep
	ts.Store = lagging
	if err := ts.RunBackfills(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts.ds.short {
		if got := ts.entry(t, tk, "web"); got != entryValue(tk) {
			t.Errorf("the entry of %q: %q, want %q", tk.Title, got, entryValue(tk))
		}
	}
	// 6 indexes with entries to title (web in P0 and P1, t0…t3): each
	// read twice (the replica's, then the table's), written once; urgent,
	// whose one task's title is too long, read once.
	if n, w := ts.calls.Get("BatchGetItem"), ts.calls.Get("TransactWriteItems"); n != 13 || w != 6 {
		t.Errorf("%d BatchGetItems and %d transactions, want 13 and 6", n, w)
	}
	if v := ts.violations(t); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

// TestAnInterruptedTitleBackfillResumes stops the backfill at its 20th
// write (a crash, Ctrl-C, a throttled write): the marker keeps its place;
// the next start finishes it, and no index is written twice.
func TestAnInterruptedTitleBackfillResumes(t *testing.T) {
	ts := mustOldTagTable(t, testEmbClient(t), &client.Calls{}, 40)
	ctx := context.Background()
	stop := errors.New("stopped")
	writes := 0
	ts.beforeFillWrite = func(context.Context, key) error {
		if writes++; writes == 20 {
			return stop
		}
		return nil
	}
	if err := ts.RunBackfills(ctx); !errors.Is(err, stop) {
		t.Fatalf("the run stopped at its 20th write: %v, want the stop", err)
	}
	m, err := ts.getOne(ctx, backfillKey(tagTitlesName))
	if err != nil || boolOf(m, "done") {
		t.Fatalf("the stopped backfill's marker: %v %v, want it not done (or not written: stopped in its first page)", m, err)
	}
	if _, err := ts.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if m, _ = ts.getOne(ctx, backfillKey(tagTitlesName)); !boolOf(m, "done") {
		t.Errorf("the marker after the second start: %v, want done", m)
	}
	// 42 indexes need a write (web in two projects, t0…t39); the 20th
	// was stopped before it was made: 42 + 1 calls of the hook, none twice.
	if writes != 43 {
		t.Errorf("%d writes in both runs, want 43 (each of the 42 indexes once, and the stopped one)", writes)
	}
	if v := ts.violations(t); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

// TestAJoinedBackfillsWriteFitsDynamoDBsLimits: a transaction of
// maxFillParts parts is within DynamoDB's 100 actions, and its
// expressions within 4 KB each, with the longest placeholders.
func TestAJoinedBackfillsWriteFitsDynamoDBsLimits(t *testing.T) {
	s := New(nil, "t")
	var parts []fillPart
	for i := range maxFillParts {
		tu := fmt.Sprintf("01HZX3J8Q5W8G2S8V7N1K6T%03d", i)
		parts = append(parts, fillPart{path: entryName(tu), was: &types.AttributeValueMemberS{Value: "~|"},
			value: &types.AttributeValueMemberS{Value: "~||" + strings.Repeat("x", maxEntryTitle)}, from: taskKey(tu),
			check: item{"title": &types.AttributeValueMemberS{Value: strings.Repeat("x", maxEntryTitle)}}})
	}
	if chunks := fillChunks(append(parts, parts[0])); len(chunks) != 2 || len(chunks[0]) != maxFillParts {
		t.Fatalf("chunks of %d parts: %d", maxFillParts+1, len(chunks))
	}
	// Tasks at their largest (a description of 10,000 four-byte
	// characters): as many as 3 MB hold to a transaction.
	big := slices.Clone(parts)
	for i := range big {
		big[i].size = 45_000
	}
	if chunks := fillChunks(big); len(chunks) != 2 || len(chunks[0]) != maxFillBytes/45_000 {
		t.Errorf("chunks of %d parts of 45 KB: %d, the first of %d", len(big), len(chunks), len(chunks[0]))
	}
	actions, err := s.fillWrite(key{"PROJECT#p", "TAGS#web"}, parts)
	if err != nil {
		t.Fatal(err)
	}
	u := actions[0].Update
	if len(actions) > maxTxnItems || len(*u.UpdateExpression) > 4096 || len(*u.ConditionExpression) > 4096 {
		t.Errorf("%d actions, expressions of %d and %d bytes: want at most 100 and 4 KB", len(actions), len(*u.UpdateExpression), len(*u.ConditionExpression))
	}
}

func testEmbClient(t *testing.T, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	return migrationBackends(t, opts...)["embedded"]
}
