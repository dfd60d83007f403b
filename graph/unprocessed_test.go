package graph_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// leaveUnprocessed is client middleware that plays a throttled DynamoDB:
// of every BatchGetItem and BatchWriteItem call it sends only part of the
// keys (items) and answers the others as unprocessed, held(n) of n of them.
// It counts the keys and items it held back.
func leaveUnprocessed(held func(n int) int, count *atomic.Int64) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("unprocessed", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch awsmiddleware.GetOperationName(ctx) {
				case "BatchGetItem":
					req := in.Parameters.(*dynamodb.BatchGetItemInput)
					send, left := map[string]types.KeysAndAttributes{}, map[string]types.KeysAndAttributes{}
					for table, ka := range req.RequestItems {
						cut := len(ka.Keys) - held(len(ka.Keys))
						count.Add(int64(len(ka.Keys) - cut))
						s, l := ka, ka
						s.Keys, l.Keys = slices.Clone(ka.Keys[:cut]), slices.Clone(ka.Keys[cut:])
						if len(s.Keys) > 0 {
							send[table] = s
						}
						if len(l.Keys) > 0 {
							left[table] = l
						}
					}
					out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
					var md middleware.Metadata
					if len(send) > 0 {
						in.Parameters = &dynamodb.BatchGetItemInput{RequestItems: send}
						res, m, err := next.HandleInitialize(ctx, in)
						if err != nil {
							return res, m, err
						}
						out, md = res.Result.(*dynamodb.BatchGetItemOutput), m
					}
					if out.UnprocessedKeys == nil {
						out.UnprocessedKeys = map[string]types.KeysAndAttributes{}
					}
					for table, l := range left {
						u := out.UnprocessedKeys[table]
						u.Keys, u.ConsistentRead = append(u.Keys, l.Keys...), l.ConsistentRead
						out.UnprocessedKeys[table] = u
					}
					return middleware.InitializeOutput{Result: out}, md, nil
				case "BatchWriteItem":
					req := in.Parameters.(*dynamodb.BatchWriteItemInput)
					send, left := map[string][]types.WriteRequest{}, map[string][]types.WriteRequest{}
					for table, ws := range req.RequestItems {
						cut := len(ws) - held(len(ws))
						count.Add(int64(len(ws) - cut))
						if cut > 0 {
							send[table] = slices.Clone(ws[:cut])
						}
						if cut < len(ws) {
							left[table] = slices.Clone(ws[cut:])
						}
					}
					out := &dynamodb.BatchWriteItemOutput{}
					var md middleware.Metadata
					if len(send) > 0 {
						in.Parameters = &dynamodb.BatchWriteItemInput{RequestItems: send}
						res, m, err := next.HandleInitialize(ctx, in)
						if err != nil {
							return res, m, err
						}
						out, md = res.Result.(*dynamodb.BatchWriteItemOutput), m
					}
					if out.UnprocessedItems == nil {
						out.UnprocessedItems = map[string][]types.WriteRequest{}
					}
					for table, l := range left {
						out.UnprocessedItems[table] = append(out.UnprocessedItems[table], l...)
					}
					return middleware.InitializeOutput{Result: out}, md, nil
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	}
}

// throttledStore is a store on e's table whose client leaves keys
// unprocessed (leaveUnprocessed), and a handler on it.
func throttledStore(tb testing.TB, e *testenv.Env, held func(int) int, count *atomic.Int64, timeout time.Duration) (*dynamo.Store, *testenv.Env) {
	tb.Helper()
	store := dynamo.New(e.Emb.Client(leaveUnprocessed(held, count), client.Deadlines, client.RetryPolicy(5, 5*time.Millisecond)), e.Store.Table())
	store.Now, store.Log, store.CleanupSettle = e.Store.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), 0
	f := *e
	f.Store = store
	f.Handler = f.NewHandler(pipeline.Options{Limits: pipeline.Limits{Timeout: timeout}}) // on f's store
	return store, &f
}

const (
	qTasksByTag = `{ tasksByTag(tag: "alpha", first: 20) { nodes { id title status dueDate project { id name } assignee { id name } }
		pageInfo { hasNextPage endCursor } } }`
	qDashboard = `{ me { id name projects(first: 10) { nodes { id name members { role user { id name } }
		tasks(first: 20) { nodes { id title status dueDate assignee { id name } tags { name }
			comments(first: 5) { nodes { id body author { id name } } pageInfo { hasNextPage } } }
		pageInfo { hasNextPage endCursor } } } } } }`
)

func TestThrottledHalfUnprocessedStillCompletes(t *testing.T) {
	e := testenv.New(t)
	p := seedWide(t, e, 20)
	var held atomic.Int64
	store, slow := throttledStore(t, e, func(n int) int { return n / 2 }, &held, 0)

	for _, tc := range []struct{ name, query string }{
		{"a full tasksByTag page equals the unthrottled one", qTasksByTag},
		{"a dashboard equals the unthrottled one", qDashboard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := e.Query(t, "owner", tc.query, nil)
			if len(want.Errors) > 0 || len(want.Data) < 1000 {
				t.Fatalf("unthrottled answer: %s %+v", want.Data, want.Errors)
			}
			before := held.Load()
			got := slow.Query(t, "owner", tc.query, nil)
			if len(got.Errors) > 0 {
				t.Fatalf("throttled answer has errors: %+v", got.Errors)
			}
			if string(got.Data) != string(want.Data) {
				t.Fatalf("throttled answer differs:\n got %s\nwant %s", got.Data, want.Data)
			}
			if held.Load() == before {
				t.Fatal("no key was left unprocessed: the fault is not in place")
			}
		})
	}

	t.Run("cleanup's batch writes complete", func(t *testing.T) {
		slow.MustQuery(t, "owner", `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": p.ID}, nil)
		before := held.Load()
		n, err := store.RunCleanup(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("RunCleanup = %d, %v; want 1 job done", n, err)
		}
		if held.Load() == before {
			t.Fatal("no write was left unprocessed: the fault is not in place")
		}
		e.MustSweepExpired(t) // the deleted project's change log outlives it until the retention passed
		for _, it := range e.Items(t) {
			if !slices.Contains([]any{"USER", "MARKER", "CHANGELOG", "COPIES", "COMMENTINDEX", "BACKFILL"}, it["type"]) { // the table's markers stay
				t.Errorf("left after the cleanup: %v", it)
			}
		}
	})
}

func TestUnprocessedForeverIsUnavailableWithinTheDeadline(t *testing.T) {
	e := testenv.New(t)
	seedWide(t, e, 20)
	var held atomic.Int64
	_, stuck := throttledStore(t, e, func(n int) int { return n }, &held, 300*time.Millisecond)
	res := stuck.Query(t, "owner", qTasksByTag, nil)
	if len(res.Errors) == 0 || string(res.Data) != "null" {
		t.Fatalf("want no tasks and an error, got %s %+v", res.Data, res.Errors)
	}
	for _, err := range res.Errors {
		if err.Code() != "SERVICE_UNAVAILABLE" {
			t.Errorf("error %+v, want SERVICE_UNAVAILABLE", err)
		}
	}
	if held.Load() == 0 {
		t.Fatal("no key was left unprocessed: the fault is not in place")
	}
}
