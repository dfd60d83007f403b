package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	miniserver "github.com/truora/minidyn/server"
)

// storeTestNow is the fixed clock of the store tests; its nanoseconds check
// that times round-trip at full precision.
var storeTestNow = time.Date(2026, 8, 25, 12, 0, 0, 123456789, time.UTC)

var (
	testEmbOnce sync.Once
	testEmb     *Embedded
	testEmbErr  error
	testTableN  atomic.Int64
)

// testStore is a store on a fresh table of the process's embedded server.
type testStore struct {
	*Store
	client *dynamodb.Client
	calls  *Calls
	emb    *Embedded
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	testEmbOnce.Do(func() { testEmb, testEmbErr = StartEmbedded() })
	if testEmbErr != nil {
		t.Fatalf("starting the embedded store: %v", testEmbErr)
	}
	calls := &Calls{}
	client := testEmb.Client(calls.Option)
	s := New(client, fmt.Sprintf("dynamo-test-%d", testTableN.Add(1)))
	s.Now = func() time.Time { return storeTestNow }
	s.Log = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.EnsureTable(ctx); err != nil {
		t.Fatalf("creating table %s: %v", s.Table(), err)
	}
	calls.Reset()
	return &testStore{Store: s, client: client, calls: calls, emb: testEmb}
}

func (ts *testStore) mustImport(t *testing.T, d *Dataset) {
	t.Helper()
	if err := ts.Import(context.Background(), d); err != nil {
		t.Fatalf("importing: %v", err)
	}
	ts.calls.Reset()
}

// dump returns every item of the table as sorted canonical JSON, to check
// that a refused write changed nothing.
func (ts *testStore) dump(t *testing.T) string {
	t.Helper()
	var lines []string
	p := dynamodb.NewScanPaginator(ts.client, &dynamodb.ScanInput{TableName: aws.String(ts.Table())})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scanning: %v", err)
		}
		for _, it := range out.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatalf("decoding a scanned item: %v", err)
			}
			b, _ := json.Marshal(m)
			lines = append(lines, string(b))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// emulateUnprocessed installs an unprocessed-keys predicate on the store's
// table for the rest of the test.
func (ts *testStore) emulateUnprocessed(t *testing.T, match func(n int, raw map[string]*miniserver.AttributeValue) bool) {
	t.Helper()
	ts.emb.Server.EmulateUnprocessedItems(ts.Table(), match)
	t.Cleanup(func() { ts.emb.Server.EmulateUnprocessedItems(ts.Table(), nil) })
}

func rawKey(raw map[string]*miniserver.AttributeValue) string {
	s := func(a string) string {
		if v := raw[a]; v != nil && v.S != nil {
			return *v.S
		}
		return ""
	}
	return s(attrPK) + "|" + s(attrSK)
}

func refKey(t *testing.T, r Ref) string {
	t.Helper()
	k, err := r.key()
	if err != nil {
		t.Fatalf("ref %+v: %v", r, err)
	}
	return k.PK + "|" + k.SK
}

// bigDataset has 30 users, 5 projects with 6 memberships each, 60 tasks
// and 50 comments: 175 objects.
type bigDataset struct {
	d        *Dataset
	existing []Ref
	want     map[Ref]any
}

func makeBigDataset(ts *testStore) *bigDataset {
	b := ts.NewDataset(storeTestNow)
	var users []*User
	for i := range 30 {
		email := ""
		if i%2 == 0 {
			email = fmt.Sprintf("u%02d@example.com", i)
		}
		users = append(users, b.User(fmt.Sprintf("u%02d", i), fmt.Sprintf("User %d", i), email))
	}
	var projects []*Project
	for i := range 5 {
		owner := users[i*6]
		projects = append(projects, b.Project(fmt.Sprintf("P%d", i), "", owner, users[i*6+1:i*6+6]...))
	}
	var tasks []*Task
	for i := range 60 {
		p := projects[i%5]
		var due *Date
		if i%4 != 0 {
			d := DateOf(storeTestNow).AddDays(i%9 - 4)
			due = &d
		}
		var assignee *User
		if i%3 == 0 {
			assignee = users[(i%5)*6+1]
		}
		status := []TaskStatus{StatusTodo, StatusInProgress, StatusDone}[i%3]
		tasks = append(tasks, b.Task(p, fmt.Sprintf("Task %d", i), status, due, assignee, fmt.Sprintf("t%d", i%4)))
	}
	for i := range 50 {
		t := tasks[i%60]
		b.Comment(t, users[(i%5)*6], fmt.Sprintf("Comment %d", i))
	}
	bd := &bigDataset{d: &b.D, want: map[Ref]any{}}
	add := func(r Ref, v any) { bd.existing = append(bd.existing, r); bd.want[r] = v }
	for _, u := range b.D.Users {
		add(UserRef(u.ID), u)
	}
	for _, p := range b.D.Projects {
		add(ProjectRef(p.ID), p)
	}
	for _, m := range b.D.Members {
		add(MemberRef(m.ProjectID, m.UserID), m)
	}
	for _, t := range b.D.Tasks {
		add(TaskRef(t.ID), t)
	}
	for _, c := range b.D.Comments {
		add(CommentRef(c.ID), c)
	}
	return bd
}

// checkGot fails unless got is the object want, field by field.
func checkGot(t *testing.T, i int, r Ref, got any, err error, want any) {
	t.Helper()
	if err != nil {
		t.Errorf("ref %d %+v: error %v, want %+v", i, r, err, want)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ref %d %+v:\n got %s\nwant %s", i, r, show(got), show(want))
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf("%T%s", v, b)
}

func TestGetManyRefs(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)
	if len(bd.existing) != 175 {
		t.Fatalf("dataset has %d objects, want 175", len(bd.existing))
	}
	fresh := freshULIDs(t, 20)
	p0 := bd.d.Projects[0]
	t0 := bd.d.Tasks[0]

	// 25 well-formed refs to nothing.
	var missing []Ref
	for i := range 5 {
		missing = append(missing, UserRef(fmt.Sprintf("ghost-%d", i)), ProjectRef(projectID(fresh[i])),
			TaskRef(taskID(fresh[5+i])), CommentRef(commentID(ulidOf(t0.ID), fresh[10+i])))
	}
	for i := range 5 {
		// u29 is a member of P4 only; fresh[15..] name no project.
		if i < 4 {
			missing = append(missing, MemberRef(bd.d.Projects[i].ID, "u29"))
		} else {
			missing = append(missing, MemberRef(projectID(fresh[15]), "u00"))
		}
	}
	// 10 malformed refs.
	malformed := []Ref{
		UserRef(""), UserRef("has space"), UserRef("a#b"), ProjectRef("prj#nope"), ProjectRef(t0.ID),
		MemberRef(p0.ID, "bad#user"), TaskRef(p0.ID), TaskRef(strings.ToLower(t0.ID)), CommentRef(t0.ID),
		{Kind: KindUnknown, ID: "u00"},
	}
	// 40 duplicates of existing and missing refs.
	rng := rand.New(rand.NewPCG(7, 11))
	var dups []Ref
	pool := append(slices.Clone(bd.existing), missing...)
	for range 40 {
		dups = append(dups, pool[rng.IntN(len(pool))])
	}
	refs := slices.Concat(bd.existing, missing, malformed, dups)
	rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	if len(refs) != 250 {
		t.Fatalf("%d refs, want 250", len(refs))
	}
	isMissing := map[Ref]bool{}
	for _, r := range missing {
		isMissing[r] = true
	}
	isMalformed := map[Ref]bool{}
	for _, r := range malformed {
		isMalformed[r] = true
	}
	uniq := map[Ref]bool{}
	for _, r := range refs {
		if !isMalformed[r] {
			uniq[r] = true
		}
	}

	vals, errs := ts.Get(context.Background(), refs)
	if len(vals) != len(refs) || len(errs) != len(refs) {
		t.Fatalf("Get returned %d values and %d errors for %d refs", len(vals), len(errs), len(refs))
	}

	t.Run("results are in input order and equal what was stored", func(t *testing.T) {
		for i, r := range refs {
			if want, ok := bd.want[r]; ok {
				checkGot(t, i, r, vals[i], errs[i], want)
			}
		}
	})
	t.Run("missing objects are ENOTFOUND with no value", func(t *testing.T) {
		for i, r := range refs {
			if isMissing[r] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], ENOTFOUND)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %v for a missing object", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("malformed refs are EINVALID with no value", func(t *testing.T) {
		for i, r := range refs {
			if isMalformed[r] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], EINVALID)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %v for a malformed ref", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("one BatchGetItem per 100 unique keys and no other call", func(t *testing.T) {
		want := (len(uniq) + maxBatchGet - 1) / maxBatchGet
		if len(uniq) != 200 || want != 2 {
			t.Fatalf("test set-up: %d unique keys", len(uniq))
		}
		if got := ts.calls.Get("BatchGetItem"); got != want {
			t.Errorf("BatchGetItem calls = %d, want %d for %d unique keys (%s)", got, want, len(uniq), ts.calls)
		}
		if got := ts.calls.Get("GetItem"); got != 0 {
			t.Errorf("GetItem calls = %d, want 0", got)
		}
	})
	t.Run("no refs make no call", func(t *testing.T) {
		ts.calls.Reset()
		vals, errs := ts.Get(context.Background(), nil)
		if len(vals) != 0 || len(errs) != 0 || ts.calls.Get("BatchGetItem") != 0 {
			t.Errorf("Get(nil) = %v, %v with %s", vals, errs, ts.calls)
		}
		vals, errs = ts.Get(context.Background(), malformed)
		if ts.calls.Get("BatchGetItem") != 0 {
			t.Errorf("only malformed refs still read: %s", ts.calls)
		}
		for i := range malformed {
			wantCode(t, fmt.Sprintf("malformed %d", i), errs[i], EINVALID)
			if vals[i] != nil {
				t.Errorf("malformed %d: value %v", i, vals[i])
			}
		}
	})
}

func TestGetRetriesUnprocessedKeys(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)

	var mu sync.Mutex
	asked := map[string]int{}
	leftOut := map[string]bool{}
	ts.emulateUnprocessed(t, func(n int, raw map[string]*miniserver.AttributeValue) bool {
		mu.Lock()
		defer mu.Unlock()
		k := rawKey(raw)
		asked[k]++
		if asked[k] == 1 && n%3 == 0 {
			leftOut[k] = true
			return true
		}
		return false
	})

	vals, errs := ts.Get(context.Background(), bd.existing)
	t.Run("every item is returned correctly", func(t *testing.T) {
		for i, r := range bd.existing {
			checkGot(t, i, r, vals[i], errs[i], bd.want[r])
		}
	})
	t.Run("only the unprocessed keys are asked again", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if len(leftOut) == 0 {
			t.Fatal("the emulation left no key unprocessed")
		}
		for _, r := range bd.existing {
			k := refKey(t, r)
			want := 1
			if leftOut[k] {
				want = 2
			}
			if asked[k] != want {
				t.Errorf("key %s asked %d times, want %d (left out the first time: %v)", k, asked[k], want, leftOut[k])
			}
		}
	})
	t.Run("one retry call per chunk", func(t *testing.T) {
		// 175 keys: two chunks, each with unprocessed keys, each retried once.
		if got := ts.calls.Get("BatchGetItem"); got != 4 {
			t.Errorf("BatchGetItem calls = %d, want 4 (%s)", got, ts.calls)
		}
	})
}

func TestGetKeysUnprocessedForever(t *testing.T) {
	ts := newTestStore(t)
	bd := makeBigDataset(ts)
	ts.mustImport(t, bd.d)
	refs := bd.existing[:12]
	stuck := map[string]bool{refKey(t, refs[2]): true, refKey(t, refs[7]): true, refKey(t, refs[11]): true}
	ts.emulateUnprocessed(t, func(_ int, raw map[string]*miniserver.AttributeValue) bool {
		return stuck[rawKey(raw)]
	})

	start := time.Now()
	vals, errs := ts.Get(context.Background(), refs)
	t.Logf("Get gave up after %v and %d BatchGetItem calls", time.Since(start), ts.calls.Get("BatchGetItem"))

	t.Run("stuck keys are EUNAVAILABLE with no value", func(t *testing.T) {
		for i, r := range refs {
			if stuck[refKey(t, r)] {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], EUNAVAILABLE)
				if vals[i] != nil {
					t.Errorf("ref %d %+v: value %s for a key never read", i, r, show(vals[i]))
				}
			}
		}
	})
	t.Run("other refs are right or EUNAVAILABLE, never wrong or silently nil", func(t *testing.T) {
		for i, r := range refs {
			if stuck[refKey(t, r)] {
				continue
			}
			if errs[i] != nil {
				wantCode(t, fmt.Sprintf("ref %d %+v", i, r), errs[i], EUNAVAILABLE)
				if vals[i] != nil {
					t.Errorf("ref %d: both a value and an error", i)
				}
				continue
			}
			checkGot(t, i, r, vals[i], errs[i], bd.want[r])
		}
	})
	t.Run("it retries a bounded number of times", func(t *testing.T) {
		if got := ts.calls.Get("BatchGetItem"); got != 1+batchRetries {
			t.Errorf("BatchGetItem calls = %d, want %d", got, 1+batchRetries)
		}
	})
	t.Run("a cancelled context ends the retries at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ts.calls.Reset()
		_, errs := ts.Get(ctx, refs[2:3])
		if code := ErrorCode(errs[0]); code != EUNAVAILABLE && code != EINTERNAL {
			t.Errorf("error %v, want EUNAVAILABLE or EINTERNAL", errs[0])
		}
		if got := ts.calls.Get("BatchGetItem"); got > 1 {
			t.Errorf("BatchGetItem calls = %d after cancel, want at most 1", got)
		}
	})
}

// taggedDataset has three projects with tasks tagged "x" (and some not), due
// on overlapping dates, some never, made in an interleaved order.
func taggedDataset(ts *testStore) (*Dataset, []*Project, []*Task) {
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	dave := b.User("dave", "Dave", "")
	var ps []*Project
	for i := range 3 {
		ps = append(ps, b.Project(fmt.Sprintf("P%d", i), "", owner, dave))
	}
	today := DateOf(storeTestNow)
	offsets := []int{3, -2, 0, 3, 100, -30, 0}
	var tagged []*Task
	for i := range 24 {
		p := ps[i%3]
		var due *Date
		if i%5 != 4 {
			d := today.AddDays(offsets[i%len(offsets)])
			due = &d
		}
		status := []TaskStatus{StatusTodo, StatusDone, StatusInProgress, StatusTodo}[i%4]
		var assignee *User
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

func dueOrder(tasks []*Task) []string {
	s := slices.Clone(tasks)
	slices.SortStableFunc(s, func(a, b *Task) int {
		return dueLess(dueEntry{a.DueDate, ulidOf(a.ID)}, dueEntry{b.DueDate, ulidOf(b.ID)})
	})
	ids := make([]string, len(s))
	for i, t := range s {
		ids[i] = t.ID
	}
	return ids
}

// pageAll reads every page of a list with page size first and checks the
// pagination rules on the way; it returns the ids in list order.
func pageAll[T any](t *testing.T, first int, read func(Page) (*Conn[T], error), id func(T) string) []string {
	t.Helper()
	var ids []string
	var after *string
	for n := 0; ; n++ {
		if n > 200 {
			t.Fatal("pagination does not end")
		}
		c, err := read(Page{First: first, After: after})
		if err != nil {
			t.Fatalf("page %d: %v", n, err)
		}
		if len(c.Items) > first || len(c.Cursors) != len(c.Items) {
			t.Fatalf("page %d: %d items, %d cursors, first %d", n, len(c.Items), len(c.Cursors), first)
		}
		if c.HasNext && len(c.Items) < first {
			t.Fatalf("page %d: %d items (short) while hasNext", n, len(c.Items))
		}
		for _, it := range c.Items {
			ids = append(ids, id(it))
		}
		if !c.HasNext {
			return ids
		}
		after = c.EndCursor()
	}
}

func TestListMergesPartitions(t *testing.T) {
	ts := newTestStore(t)
	d, ps, tagged := taggedDataset(ts)
	ts.mustImport(t, d)
	ctx := context.Background()
	projectIDs := []string{ps[2].ID, ps[0].ID, ps[1].ID}
	byID := map[string]*Task{}
	for _, task := range d.Tasks {
		byID[task.ID] = task
	}
	wantTagged := dueOrder(tagged)
	self := func(s string) string { return s }
	taskID := func(t *Task) string { return t.ID }

	for _, first := range []int{1, 2, 5, 7, 100} {
		t.Run(fmt.Sprintf("TaskIDsByTag merges projects by due date, pages of %d", first), func(t *testing.T) {
			got := pageAll(t, first, func(p Page) (*Conn[string], error) {
				return ts.TaskIDsByTag(ctx, " X ", projectIDs, p, nil)
			}, self)
			if !slices.Equal(got, wantTagged) {
				t.Errorf("got  %v\nwant %v", got, wantTagged)
			}
		})
	}
	t.Run("TaskIDsByTag reads each project once for one page", func(t *testing.T) {
		ts.calls.Reset()
		c, err := ts.TaskIDsByTag(ctx, "x", projectIDs, Page{First: MaxFirst}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Items) != len(wantTagged) || c.HasNext {
			t.Errorf("%d items, hasNext %v; want %d, false", len(c.Items), c.HasNext, len(wantTagged))
		}
		if got := ts.calls.Get("Query"); got != len(projectIDs) {
			t.Errorf("Query calls = %d, want %d", got, len(projectIDs))
		}
	})
	t.Run("TaskIDsByTag with a keep filter fills every page", func(t *testing.T) {
		keepSeen := 0
		keep := func(_ context.Context, cand []string) ([]bool, error) {
			ok := make([]bool, len(cand))
			for i, id := range cand {
				keepSeen++
				ok[i] = byID[id].ProjectID != ps[1].ID
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
			got := pageAll(t, first, func(p Page) (*Conn[string], error) {
				return ts.TaskIDsByTag(ctx, "x", projectIDs, p, keep)
			}, self)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
		if keepSeen == 0 {
			t.Error("keep was never called")
		}
	})
	t.Run("TaskIDsByTag with no projects is empty without reading", func(t *testing.T) {
		ts.calls.Reset()
		c, err := ts.TaskIDsByTag(ctx, "x", nil, Page{First: 10}, nil)
		if err != nil || len(c.Items) != 0 || c.HasNext {
			t.Errorf("got %+v, %v", c, err)
		}
		if n := ts.calls.Get("Query"); n != 0 {
			t.Errorf("Query calls = %d, want 0", n)
		}
	})
	t.Run("TaskIDsByTag refuses a bad tag, a bad project id, a bad page", func(t *testing.T) {
		for _, c := range []struct {
			tag  string
			pids []string
			page Page
		}{
			{"not a tag!", projectIDs, Page{First: 1}},
			{"x", []string{"prj#nope"}, Page{First: 1}},
			{"x", projectIDs, Page{First: 0}},
			{"x", projectIDs, Page{First: MaxFirst + 1}},
			{"x", projectIDs, Page{First: 1, After: aws.String("garbage")}},
			{"x", projectIDs, Page{First: 1, After: aws.String(encodeCursor(commentSK(ulidOf(tagged[0].ID))))}},
		} {
			_, err := ts.TaskIDsByTag(ctx, c.tag, c.pids, c.page, nil)
			wantCode(t, fmt.Sprintf("TaskIDsByTag(%q, %v, %+v)", c.tag, c.pids, c.page), err, EINVALID)
		}
	})
	t.Run("TasksAssignedTo merges open and done tasks by due date", func(t *testing.T) {
		var mine []*Task
		for _, task := range d.Tasks {
			if task.AssigneeID != nil && *task.AssigneeID == "dave" {
				mine = append(mine, task)
			}
		}
		want := dueOrder(mine)
		for _, first := range []int{1, 4, 100} {
			got := pageAll(t, first, func(p Page) (*Conn[*Task], error) {
				return ts.TasksAssignedTo(ctx, "dave", p, nil)
			}, taskID)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
	})
	t.Run("OverdueTasks lists open tasks due before the date", func(t *testing.T) {
		asOf := DateOf(storeTestNow)
		var overdue []*Task
		for _, task := range d.Tasks {
			if task.AssigneeID != nil && task.Status != StatusDone && task.DueDate != nil && task.DueDate.String() < asOf.String() {
				overdue = append(overdue, task)
			}
		}
		if len(overdue) == 0 {
			t.Fatal("test set-up: nothing overdue")
		}
		want := dueOrder(overdue)
		for _, first := range []int{1, 2, 100} {
			got := pageAll(t, first, func(p Page) (*Conn[*Task], error) {
				return ts.OverdueTasks(ctx, "dave", asOf, p, nil)
			}, taskID)
			if !slices.Equal(got, want) {
				t.Errorf("first %d: got  %v\nwant %v", first, got, want)
			}
		}
	})
	t.Run("TasksOfProject with a status filter fills pages", func(t *testing.T) {
		done := StatusDone
		for _, p := range ps {
			var want []*Task
			for _, task := range d.Tasks {
				if task.ProjectID == p.ID && task.Status == StatusDone {
					want = append(want, task)
				}
			}
			for _, first := range []int{1, 2} {
				got := pageAll(t, first, func(pg Page) (*Conn[*Task], error) {
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
		got := pageAll(t, 1, func(p Page) (*Conn[*Member], error) {
			return ts.ProjectsOfUser(ctx, "dave", p, nil)
		}, func(m *Member) string { return m.ProjectID })
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestCommitMapsFailedConditions(t *testing.T) {
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	member := b.User("member", "Member", "")
	outsider := b.User("outsider", "Outsider", "")
	p := b.Project("P", "", owner, member)
	other := b.Project("Other", "", outsider)
	ts.mustImport(t, &b.D)
	ctx := context.Background()
	missingProject := projectID(freshULIDs(t, 1)[0])

	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"CreateTask in a missing project is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "owner", TaskInput{ProjectID: missingProject, Title: "t"})
			return err
		}, ENOTFOUND},
		{"CreateTask by a non-member is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", TaskInput{ProjectID: p.ID, Title: "t"})
			return err
		}, ENOTFOUND},
		{"CreateTask assigned to a user who is no member is EINVALID", func() error {
			_, err := ts.CreateTask(ctx, "owner", TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(outsider.ID)})
			return err
		}, EINVALID},
		{"CreateTask assigned to a user who does not exist is EINVALID", func() error {
			_, err := ts.CreateTask(ctx, "owner", TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String("nobody")})
			return err
		}, EINVALID},
		{"CreateTask by a non-member assigning a member is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(member.ID)})
			return err
		}, ENOTFOUND},
		{"CreateTask assigning oneself in another's project is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(outsider.ID)})
			return err
		}, ENOTFOUND},
		{"CreateProject without a profile is ENOTFOUND", func() error {
			_, err := ts.CreateProject(ctx, "no-profile", ProjectInput{Name: "n"})
			return err
		}, ENOTFOUND},
		{"AddProjectMember of a user without a profile is ENOTFOUND", func() error {
			_, err := ts.AddProjectMember(ctx, "owner", p.ID, "nobody")
			return err
		}, ENOTFOUND},
		{"AddProjectMember of a member again succeeds and changes nothing", func() error {
			_, err := ts.AddProjectMember(ctx, "owner", p.ID, member.ID)
			return err
		}, ""},
		{"AddProjectMember by a member is EFORBIDDEN", func() error {
			_, err := ts.AddProjectMember(ctx, "member", p.ID, outsider.ID)
			return err
		}, EFORBIDDEN},
		{"AddComment to a task in a missing project is ENOTFOUND", func() error {
			_, err := ts.AddComment(ctx, "owner", CommentInput{TaskID: taskID(freshULIDs(t, 1)[0]), Body: "b"})
			return err
		}, ENOTFOUND},
		{"DeleteProject by a non-member is ENOTFOUND", func() error {
			return ts.DeleteProject(ctx, "owner", other.ID)
		}, ENOTFOUND},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := ts.dump(t)
			err := c.do()
			wantCode(t, c.name, err, c.want)
			if after := ts.dump(t); after != before {
				t.Errorf("the table changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	t.Run("a failed condition reports the error of its own action", func(t *testing.T) {
		errA, errB := Errorf(EINVALID, "A"), Errorf(EFORBIDDEN, "B")
		pu := ulidOf(p.ID)
		for _, c := range []struct {
			name  string
			build func(*txn)
			want  error
			code  string
		}{
			{"second action fails", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errB)
				x.check(ts.table, userKey("nobody"), exists(), errA)
			}, errA, ""},
			{"third action fails", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errA)
				x.check(ts.table, memberKey(pu, "member"), exists(), errA)
				x.put(ts.table, userToItem(&User{ID: "owner", Name: "X", CreatedAt: storeTestNow}, 0), ptr(absent()), errB)
			}, errB, ""},
			{"a failed action without an error is ECONFLICT", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errA)
				x.del(ts.table, userKey("owner"), ptr(absent()), nil)
			}, nil, ECONFLICT},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := ts.dump(t)
				var x txn
				c.build(&x)
				err := ts.commit(ctx, &x)
				if c.want != nil && err != c.want {
					t.Errorf("commit = %v, want %v", err, c.want)
				}
				if c.code != "" {
					wantCode(t, "commit", err, c.code)
				}
				if after := ts.dump(t); after != before {
					t.Error("the failed transaction changed the table")
				}
			})
		}
	})
	t.Run("CreateTask assigned to a member succeeds and bumps nothing else", func(t *testing.T) {
		task, err := ts.CreateTask(ctx, "owner", TaskInput{ProjectID: p.ID, Title: " t ", AssigneeID: aws.String(member.ID),
			Tags: []string{"A", "a", " b"}})
		if err != nil {
			t.Fatal(err)
		}
		if task.Title != "t" || !slices.Equal(task.Tags, []string{"a", "b"}) || *task.AssigneeID != "member" || task.Version != 1 {
			t.Errorf("task %s", show(task))
		}
		vals, errs := ts.Get(ctx, []Ref{TaskRef(task.ID)})
		checkGot(t, 0, TaskRef(task.ID), vals[0], errs[0], task)
	})
}

func TestImportRoundTrip(t *testing.T) {
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	withEmail := b.User("auth0|abc123", "Zoë Ångström 日本", "zoe@example.com")
	noEmail := b.User("9b2f7c1e-3a4d-4e5f-8a6b-7c8d9e0f1a2b", "No Email", "")
	withEmail.CreatedAt = storeTestNow.Add(-48*time.Hour + 7)
	described := b.Project("Described", "A description\nwith lines and \"quotes\"", withEmail, noEmail)
	bare := b.Project("Bare", "", noEmail)
	due := DateOf(storeTestNow).AddDays(-400)
	full := b.Task(described, "Full", StatusInProgress, &due, noEmail, "a", "b.c", "d-e_f")
	desc := "Some **markdown**\n\t- item"
	full.Description = &desc
	full.UpdatedAt = storeTestNow.Add(time.Hour + 1)
	full.Version = 7
	empty := b.Task(bare, "Empty", StatusTodo, nil, nil)
	done := b.Task(described, "Done", StatusDone, &due, withEmail, "z")
	c1 := b.Comment(full, withEmail, "💬 comment\nwith lines")
	c2 := b.Comment(empty, noEmail, strings.Repeat("x", MaxTextLen))
	b.D.Members[0].JoinedAt = storeTestNow.Add(-time.Minute)
	ts.mustImport(t, &b.D)

	if noEmail.Email != nil || bare.Description != nil || empty.DueDate != nil || empty.AssigneeID != nil ||
		empty.Description != nil || len(empty.Tags) != 0 || empty.Tags == nil {
		t.Fatal("test set-up: the empty objects are not empty")
	}
	var refs []Ref
	var want []any
	for _, u := range b.D.Users {
		refs, want = append(refs, UserRef(u.ID)), append(want, u)
	}
	for _, p := range b.D.Projects {
		refs, want = append(refs, ProjectRef(p.ID)), append(want, p)
	}
	for _, m := range b.D.Members {
		refs, want = append(refs, MemberRef(m.ProjectID, m.UserID)), append(want, m)
	}
	for _, task := range []*Task{full, empty, done} {
		refs, want = append(refs, TaskRef(task.ID)), append(want, task)
	}
	for _, c := range []*Comment{c1, c2} {
		refs, want = append(refs, CommentRef(c.ID)), append(want, c)
	}
	vals, errs := ts.Get(context.Background(), refs)
	for i, r := range refs {
		t.Run(fmt.Sprintf("%T %s", want[i], r.ID+r.User), func(t *testing.T) {
			checkGot(t, i, r, vals[i], errs[i], want[i])
		})
	}
	t.Run("the task without tags reads back with an empty, non-nil tag list", func(t *testing.T) {
		got, ok := vals[slices.Index(refs, TaskRef(empty.ID))].(*Task)
		if !ok || got.Tags == nil || len(got.Tags) != 0 || got.DueDate != nil || got.Description != nil || got.AssigneeID != nil {
			t.Errorf("got %s", show(got))
		}
	})
	t.Run("the user without email reads back with a nil email", func(t *testing.T) {
		got, ok := vals[slices.Index(refs, UserRef(noEmail.ID))].(*User)
		if !ok || got.Email != nil {
			t.Errorf("got %s", show(got))
		}
	})
	t.Run("imported tasks appear in their lists", func(t *testing.T) {
		c, err := ts.TasksOfProject(context.Background(), described.ID, nil, Page{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(c.Items))
		for i, task := range c.Items {
			ids[i] = task.ID
		}
		sort.Strings(ids)
		want := []string{full.ID, done.ID}
		sort.Strings(want)
		if !slices.Equal(ids, want) {
			t.Errorf("tasks of %s = %v, want %v", described.Name, ids, want)
		}
	})
}

func TestBatchWriteRetriesUnprocessedItems(t *testing.T) {
	ts := newTestStore(t)
	seen := map[string]bool{}
	var mu sync.Mutex
	// Every item is left unprocessed the first time it is sent.
	ts.emulateUnprocessed(t, func(_ int, raw map[string]*miniserver.AttributeValue) bool {
		mu.Lock()
		defer mu.Unlock()
		k := rawKey(raw)
		first := !seen[k]
		seen[k] = true
		return first
	})
	d := ts.Demo(storeTestNow)
	if err := ts.Import(context.Background(), d); err != nil {
		t.Fatalf("import: %v", err)
	}
	ts.emb.Server.EmulateUnprocessedItems(ts.Table(), nil)
	refs := []Ref{UserRef("alice"), ProjectRef(d.Projects[0].ID), TaskRef(d.Tasks[len(d.Tasks)-1].ID), CommentRef(d.Comments[0].ID)}
	vals, errs := ts.Get(context.Background(), refs)
	for i := range refs {
		if errs[i] != nil || vals[i] == nil {
			t.Errorf("%v after an import with unprocessed items: %v", refs[i], errs[i])
		}
	}
	if n := ts.calls.Get("BatchWriteItem"); n < 2*((len(seen)+24)/25) {
		t.Errorf("%d BatchWriteItem calls for %d items sent twice each, want at least %d", n, len(seen), 2*((len(seen)+24)/25))
	}
}
