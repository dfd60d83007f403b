package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// storeTestNow is the fixed clock of the store tests; its nanoseconds check
// that times round-trip at full precision.
var storeTestNow = time.Date(2026, 8, 25, 12, 0, 0, 123456789, time.UTC)

var (
	testEmbOnce sync.Once
	testEmb     *embedded.Store
	testEmbErr  error
	testTableN  atomic.Int64
)

// testStore is a store on a fresh table of the process's embedded server.
type testStore struct {
	*Store
	client *dynamodb.Client
	calls  *client.Calls
	emb    *embedded.Store
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	testEmbOnce.Do(func() { testEmb, testEmbErr = embedded.Start() })
	if testEmbErr != nil {
		t.Fatalf("starting the embedded store: %v", testEmbErr)
	}
	calls := &client.Calls{}
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
func (ts *testStore) emulateUnprocessed(t *testing.T, match func(n int, key map[string]string) bool) {
	t.Helper()
	ts.emb.Server.EmulateUnprocessedItems(ts.Table(), match)
	t.Cleanup(func() { ts.emb.Server.EmulateUnprocessedItems(ts.Table(), nil) })
}

func rawKey(key map[string]string) string {
	return key[attrPK] + "|" + key[attrSK]
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
	var users []*domain.User
	for i := range 30 {
		email := ""
		if i%2 == 0 {
			email = fmt.Sprintf("u%02d@example.com", i)
		}
		users = append(users, b.User(fmt.Sprintf("u%02d", i), fmt.Sprintf("User %d", i), email))
	}
	var projects []*domain.Project
	for i := range 5 {
		owner := users[i*6]
		projects = append(projects, b.Project(fmt.Sprintf("P%d", i), "", owner, users[i*6+1:i*6+6]...))
	}
	var tasks []*domain.Task
	for i := range 60 {
		p := projects[i%5]
		var due *domain.Date
		if i%4 != 0 {
			d := domain.DateOf(storeTestNow).AddDays(i%9 - 4)
			due = &d
		}
		var assignee *domain.User
		if i%3 == 0 {
			assignee = users[(i%5)*6+1]
		}
		status := []domain.TaskStatus{domain.StatusTodo, domain.StatusInProgress, domain.StatusDone}[i%3]
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
