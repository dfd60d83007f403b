package graph_test

import (
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// faultEnv is an Env whose store talks to the embedded store through a
// client with extra SDK middleware (fault injection).
func faultEnv(t *testing.T, inject func(*dynamodb.Options)) *testenv.Env {
	t.Helper()
	e := testenv.New(t)
	e.MustSeed(t)
	store := dynamo.New(e.Emb.Client(inject, client.Deadlines, client.RetryPolicy(5, 5*time.Millisecond)), e.Store.Table())
	store.Now, store.Log = e.Store.Now, slog.New(slog.NewTextHandler(io.Discard, nil))
	e.Store = store
	e.Handler = e.NewHandler(pipeline.Options{}) // on e's store, now the faulty one
	return e
}

// faultAt adds middleware that may answer a call itself with an error
// (testenv.FaultAt).
var faultAt = testenv.FaultAt

const faultCreate = `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Survives", tags: ["bug", "urgent"]}) { id } }` // tags the project has: their indexes exist

func faultTasks(tb testing.TB, e *testenv.Env, title string) int {
	tb.Helper()
	n := 0
	for _, it := range e.Items(tb) {
		if it["type"] == "TASK" && it["title"] == title {
			n++
		}
	}
	return n
}

func TestFaultTransactionConflictIsRetriedWithTheSameToken(t *testing.T) {
	var tokens []string
	var mu sync.Mutex
	e := faultEnv(t, faultAt("call", func(op string, in any) error {
		if op != "TransactWriteItems" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, aws.ToString(in.(*dynamodb.TransactWriteItemsInput).ClientRequestToken))
		if len(tokens) <= 2 { // the first two attempts lose to a concurrent transaction
			return &types.TransactionCanceledException{Message: aws.String("conflict"), CancellationReasons: []types.CancellationReason{
				{Code: aws.String("TransactionConflict")}, {Code: aws.String("None")}}}
		}
		return nil
	}))
	s := e.Seed(t)
	res := e.Query(t, "alice", faultCreate, map[string]any{"p": s.Project("Website relaunch").ID})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	if len(tokens) != 3 || tokens[0] == "" || tokens[0] != tokens[1] || tokens[1] != tokens[2] {
		t.Fatalf("client request tokens %q, want three equal ones", tokens)
	}
	if n := faultTasks(t, e, "Survives"); n != 1 {
		t.Fatalf("%d tasks written, want 1", n)
	}
}

func TestFaultTransactionConflictPastTheRetriesIsConflict(t *testing.T) {
	e := faultEnv(t, faultAt("call", func(op string, _ any) error {
		if op == "TransactWriteItems" {
			return &types.TransactionCanceledException{Message: aws.String("conflict"), CancellationReasons: []types.CancellationReason{
				{Code: aws.String("TransactionConflict")}}}
		}
		return nil
	}))
	s := e.Seed(t)
	before := e.Dump(t)
	e.MustFail(t, "alice", "CONFLICT", faultCreate, map[string]any{"p": s.Project("Website relaunch").ID})
	if e.Dump(t) != before {
		t.Fatal("a failed mutation changed the table")
	}
}

func TestFaultThrottling(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int64 // attempts throttled before DynamoDB answers
		code     string
	}{
		{"a throttled read is retried by the SDK and succeeds", 2, ""},
		{"a read throttled past the retries is SERVICE_UNAVAILABLE", 1 << 20, "SERVICE_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int64
			e := faultEnv(t, faultAt("attempt", func(op string, _ any) error {
				if op == "BatchGetItem" && attempts.Add(1) <= tc.failures {
					return &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
				}
				return nil
			}))
			res := e.Query(t, "alice", "{ me { name } }", nil)
			switch {
			case tc.code == "" && (len(res.Errors) > 0 || string(res.Data) != `{"me":{"name":"Alice Example"}}`):
				t.Fatalf("got %s %+v", res.Data, res.Errors)
			case tc.code != "" && (len(res.Errors) != 1 || res.Errors[0].Code() != tc.code):
				t.Fatalf("want %s, got %s %+v", tc.code, res.Data, res.Errors)
			}
			if tc.code != "" && attempts.Load() != 5 {
				t.Errorf("%d attempts, want 5 (the retry policy's)", attempts.Load())
			}
		})
	}
}

func TestFaultViewersNeverShareLoaders(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	task := s.Task("Benchmark the new model") // in Research: dave sees it, alice does not
	q := `query($id: ID!) { task(id: $id) { title assignee { email } } }`
	var wg sync.WaitGroup
	for i := range 40 {
		viewer := []string{"alice", "dave"}[i%2]
		wg.Go(func() {
			res := e.Query(t, viewer, q, map[string]any{"id": task.ID})
			want := `{"task":null}`
			if viewer == "dave" {
				want = `{"task":{"title":"Benchmark the new model","assignee":{"email":"dave@example.com"}}}`
			}
			if len(res.Errors) > 0 || string(res.Data) != want {
				t.Errorf("%s got %s %+v, want %s", viewer, res.Data, res.Errors, want)
			}
		})
	}
	wg.Wait()
}
