// Package testenv runs the real GraphQL handler in-process against a real
// DynamoDB implementation, for tests: the embedded store by default, or,
// when a test asks for it, dynalite (DYNALITE_ENDPOINT) or AWS's DynamoDB
// Local (DYNAMODB_LOCAL_ENDPOINT), both started by scripts/test. Every Env
// has a table of its own, a fixed clock, and counts its DynamoDB calls by
// operation through SDK middleware.
package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/policy"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/web"
)

// Now is the fixed clock of every Env: 2026-08-25 12:00 UTC.
var Now = time.Date(2026, 8, 25, 12, 0, 0, 0, time.UTC)

// Secret signs the tokens of every Env.
const Secret = "test-secret"

var (
	tableN atomic.Int64
	runID  = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
)

// Embedded starts an embedded store for one test, closed when it ends. Each
// test has its own: failure emulation then touches no other test.
func Embedded(tb testing.TB) *embedded.Store {
	tb.Helper()
	emb, err := embedded.Start()
	if err != nil {
		tb.Fatalf("starting the embedded store: %v", err)
	}
	tb.Cleanup(func() { _ = emb.Close() })
	return emb
}

// Calls counts DynamoDB calls by operation name.
type Calls = client.Calls

// Env is one test's server: a fresh table, the real handler, a fixed clock.
// The client, the store and the handler are wired as in production
// (package app), with a counter of calls added to the client.
//
// Every helper of an Env that can fail takes the testing.TB of the test or
// subtest it runs in as its first argument and fails that one; the Env
// holds none. Its resources (the table, the live stack) last as long as
// the test that made it (New's tb).
type Env struct {
	Store   *dynamo.Store
	Client  *dynamodb.Client
	Auth    *auth.Authenticator
	Handler http.Handler
	Calls   *Calls
	// Emb is the embedded store (nil on dynalite), for failure emulation.
	Emb *embedded.Store

	seed    *Seed
	cleanup func(func()) // Cleanup of the test that made the Env
}

// Backend names where an Env's table lives.
type Backend int

// The backends.
const (
	EmbeddedStore Backend = iota // the embedded store (dynamo/embedded)
	Dynalite                     // dynalite at DYNALITE_ENDPOINT; the test is skipped without it
	DynamoDBLocal                // AWS's DynamoDB Local at DYNAMODB_LOCAL_ENDPOINT; skipped without it
)

// String names the backend as subtests do.
func (b Backend) String() string {
	return [...]string{"embedded", "dynalite", "dynamodb-local"}[b]
}

// Endpoint returns the endpoint of dynalite or DynamoDB Local, or skips
// tb when scripts/test did not start it (and fails it when CI is set: CI
// runs every backend).
func Endpoint(tb testing.TB, b Backend) string {
	tb.Helper()
	v := map[Backend]string{Dynalite: "DYNALITE_ENDPOINT", DynamoDBLocal: "DYNAMODB_LOCAL_ENDPOINT"}[b]
	ep := os.Getenv(v)
	if ep == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set in CI; scripts/test starts %s and sets it", v, b)
		}
		tb.Skipf("%s is not set; scripts/test starts %s and sets it", v, b)
	}
	return ep
}

// Client returns an SDK client of dynalite's or DynamoDB Local's endpoint
// with the options opts (skipping tb as Endpoint does).
func Client(tb testing.TB, b Backend, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(Endpoint(tb, b)),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, opts...)
}

// New returns an Env on the embedded store.
func New(tb testing.TB) *Env { tb.Helper(); return NewOn(tb, EmbeddedStore) }

// NewOn returns an Env on the given backend.
func NewOn(tb testing.TB, b Backend) *Env {
	tb.Helper()
	calls := &Calls{}
	count := calls.Option
	e := &Env{Calls: calls, cleanup: tb.Cleanup}
	if b == EmbeddedStore {
		e.Emb = Embedded(tb)
		e.Client = e.Emb.Client(client.Options(count)...)
	} else {
		e.Client = Client(tb, b, client.Options(count)...)
	}
	e.open(tb, e.Client)
	return e
}

// NewDiff returns an Env whose store makes every call on the embedded
// store and on DynamoDB Local through a Tee, which compares their answers
// (the differential test); the Env's Client and Emb are the embedded
// store's. Skipped without DynamoDB Local.
func NewDiff(tb testing.TB) (*Env, *Tee) {
	tb.Helper()
	ref := Client(tb, DynamoDBLocal, client.Options()...)
	calls := &Calls{}
	e := &Env{Calls: calls, Emb: Embedded(tb), cleanup: tb.Cleanup}
	e.Client = e.Emb.Client(client.Options(calls.Option)...)
	tee := NewTee(tb, e.Client, ref)
	e.open(tb, tee)
	return e, tee
}

// open makes the Env's table through db, its store, authenticator and
// handler, failing tb.
func (e *Env) open(tb testing.TB, db dynamo.API) {
	tb.Helper()
	calls := e.Calls
	// A run id keeps tables apart when several runs share one dynalite or
	// DynamoDB Local.
	name := fmt.Sprintf("t%s-%d-%s", runID, tableN.Add(1), sanitize(tb.Name()))
	e.Store = app.NewStore(db, name, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return Now })
	e.Store.CleanupSettle = 0 // the clock stands still in tests
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.Store.EnsureTable(ctx); err != nil {
		tb.Fatalf("creating table %s: %v", name, err)
	}
	e.Auth = &auth.Authenticator{Secret: []byte(Secret), Now: func() time.Time { return Now }}
	e.Handler = e.NewHandler(pipeline.Options{})
	calls.Reset()
}

// NewHandler returns a GraphQL handler on the Env's store and
// authenticator (o's, when it gives them), wired as in production
// (app.NewHandler) with the options o and HTTP's defaults: its clock and
// log are the store's unless o sets them.
func (e *Env) NewHandler(o pipeline.Options) http.Handler {
	return e.NewHTTPHandler(web.Options{Options: o})
}

// NewHTTPHandler is NewHandler with HTTP's options too (CORS, the body
// limit).
func (e *Env) NewHTTPHandler(o web.Options) http.Handler {
	store, authn := e.Store, e.Auth
	if o.Store != nil {
		store = o.Store
	}
	if o.Auth != nil {
		authn = o.Auth
	}
	return app.NewHandler(store, authn, o)
}

// onEnd runs f when the test that made the Env ends; on an Env made by
// hand (a struct literal, not New), when tb ends.
func (e *Env) onEnd(tb testing.TB, f func()) {
	if e.cleanup == nil {
		tb.Cleanup(f)
		return
	}
	e.cleanup(f)
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		}
		if b.Len() >= 180 {
			break
		}
	}
	return b.String()
}

// Token returns a valid bearer token for the viewer.
func (e *Env) Token(tb testing.TB, viewer string) string {
	tb.Helper()
	t, err := e.Auth.Sign(viewer, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// MustImport loads a dataset with batch writes.
func (e *Env) MustImport(tb testing.TB, d *dynamo.Dataset) {
	tb.Helper()
	if err := e.Store.Import(context.Background(), d); err != nil {
		tb.Fatalf("importing: %v", err)
	}
	e.Calls.Reset()
}

// Items returns every item of the table, for checks of what a mutation
// wrote (or did not). Each item is decoded to plain Go values, with what a
// lean task or comment item leaves out filled in from its keys
// (dynamo.WholeItem), as the store reads it; e.Client reads items as
// stored.
func (e *Env) Items(tb testing.TB) []map[string]any {
	tb.Helper()
	var all []map[string]any
	p := dynamodb.NewScanPaginator(e.Client, &dynamodb.ScanInput{TableName: aws.String(e.Store.Table())})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			tb.Fatalf("scanning: %v", err)
		}
		for _, it := range out.Items {
			m := map[string]any{}
			for k, v := range it {
				m[k] = plain(v)
			}
			if t := m["type"]; t == "TASK" || t == "COMMENT" {
				dynamo.WholeItem(m) // what disagrees is left as stored: CheckTable reports it
			}
			all = append(all, m)
		}
	}
	return all
}

// Dump returns every item of the table as canonical JSON, sorted, for
// checking that a refused mutation changed nothing.
func (e *Env) Dump(tb testing.TB) string {
	tb.Helper()
	items := e.Items(tb)
	lines := make([]string, len(items))
	for i, it := range items {
		b, _ := json.Marshal(it) // map keys come out sorted
		lines[i] = string(b)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// Seed is the demo dataset plus "eve", a user in no project.
type Seed struct {
	*dynamo.Dataset
}

// MustSeed loads the demo dataset (as of Now) and eve into the table.
func (e *Env) MustSeed(tb testing.TB) *Seed {
	tb.Helper()
	d := e.Store.Demo(Now)
	d.Users = append(d.Users, &domain.User{ID: "eve", Name: "Eve Outsider", CreatedAt: Now})
	e.MustImport(tb, d)
	e.seed = &Seed{d}
	return e.seed
}

// Seed returns the demo dataset as MustSeed made it, without loading it
// (the ids are those of the last MustSeed of this Env).
func (e *Env) Seed(tb testing.TB) *Seed {
	tb.Helper()
	if e.seed == nil {
		tb.Fatal("Seed before MustSeed")
	}
	return e.seed
}

// Project returns the seeded project of that name.
func (s *Seed) Project(name string) *domain.Project {
	for _, p := range s.Projects {
		if p.Name == name {
			return p
		}
	}
	panic("no project " + name)
}

// Task returns the seeded task of that title.
func (s *Seed) Task(title string) *domain.Task {
	for _, t := range s.Tasks {
		if t.Title == title {
			return t
		}
	}
	panic("no task " + title)
}

// TasksOf returns the seeded tasks of the project with that id, in the
// seed's order.
func (s *Seed) TasksOf(projectID string) []*domain.Task {
	var ts []*domain.Task
	for _, t := range s.Tasks {
		if t.ProjectID == projectID {
			ts = append(ts, t)
		}
	}
	return ts
}

// MayDeleteTask returns a member of the seeded task t's project whom
// policy lets delete it (policy.MayDeleteTask, on the seeded facts):
// prefer when policy lets them, else the first that it lets in the order
// of the members' ids. A test that deletes a task names its viewer so,
// and follows a change of the rule unedited.
func (s *Seed) MayDeleteTask(t *domain.Task, prefer string) string {
	var p *domain.Project
	for _, q := range s.Projects {
		if q.ID == t.ProjectID {
			p = q
		}
	}
	var ids []string
	for _, m := range s.Members {
		if m.ProjectID == t.ProjectID {
			ids = append(ids, m.UserID)
		}
	}
	slices.Sort(ids)
	for _, id := range append([]string{prefer}, ids...) {
		if _, err := policy.MayDeleteTask(id, t, p); err == nil && slices.Contains(ids, id) {
			return id
		}
	}
	panic("policy lets no member delete " + t.Title)
}

// MustSweepExpired sweeps the change log (dynamo.Store.SweepChanges) as if
// its retention, and the margin after it, had passed: what remains of a
// deleted project's log, and every tombstone, is gone after it. The
// store's clock is back at Now when it returns.
func (e *Env) MustSweepExpired(tb testing.TB) {
	tb.Helper()
	now := e.Store.Now
	e.Store.Now = func() time.Time { return now().Add(e.Store.Retention() + 49*time.Hour) }
	defer func() { e.Store.Now = now }()
	if _, err := e.Store.SweepChanges(context.Background()); err != nil {
		tb.Fatalf("sweeping the change log: %v", err)
	}
}
