package dynamo

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Batch reads and writes: BatchGetItem and BatchWriteItem in chunks of
// their limits, chunks run at once (at most Store.Parallel), and what an
// answer leaves unprocessed sent again with backoff (drain).

const (
	maxBatchGet   = 100
	maxBatchWrite = 25
	// batchRetries is how many rounds of a batch read or write may make no
	// progress at all before it gives up (see drain).
	batchRetries = 8
)

// getItems reads keys with BatchGetItem, at most 100 keys a call, calls run
// concurrently, unprocessed keys retried with backoff as long as rounds make
// progress (drain). The result is in the order of keys; a missing item is
// nil.
func (s *Store) getItems(ctx context.Context, keys []key) ([]item, error) {
	return s.getItemsOf(ctx, keys, nil)
}

// getItemsOf is getItems reading only the attributes (document paths)
// names of each item, and its keys (nil: every attribute).
func (s *Store) getItemsOf(ctx context.Context, keys []key, names []string) ([]item, error) {
	var proj *string
	var projNames map[string]string
	if len(names) > 0 {
		nb := make([]expression.NameBuilder, len(names))
		for i, n := range names {
			nb[i] = expression.Name(n)
		}
		ex, err := expression.NewBuilder().WithProjection(expression.NamesList(nb[0], nb[1:]...)).Build()
		if err != nil {
			return nil, internal(err, "building a projection")
		}
		proj, projNames = ex.Projection(), ex.Names()
	}
	found := make(map[key]item, len(keys))
	var uniq []key
	seen := make(map[key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	var mu sync.Mutex
	err := s.forEachChunk(ctx, len(uniq), maxBatchGet, func(ctx context.Context, lo, hi int) error {
		req := make([]item, 0, hi-lo)
		for _, k := range uniq[lo:hi] {
			req = append(req, k.av())
		}
		ok, err := drain(ctx, req, backoff, func(ctx context.Context, req []item) ([]item, error) {
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				s.table: {Keys: req, ConsistentRead: aws.Bool(strong(ctx)), ProjectionExpression: proj, ExpressionAttributeNames: projNames}}})
			if err != nil {
				return nil, wrap(err, "reading items")
			}
			mu.Lock()
			for _, it := range out.Responses[s.table] {
				found[keyOf(it)] = it
			}
			mu.Unlock()
			return out.UnprocessedKeys[s.table].Keys, nil
		})
		if err == nil && !ok {
			err = &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store did not answer every read; retry later"}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	res := make([]item, len(keys))
	for i, k := range keys {
		res[i] = found[k]
	}
	return res, nil
}

// batchWrite writes with BatchWriteItem, 25 requests a call, unprocessed
// items retried with backoff as long as rounds make progress (drain).
// Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	return s.forEachChunk(ctx, len(reqs), maxBatchWrite, func(ctx context.Context, lo, hi int) error {
		ok, err := drain(ctx, reqs[lo:hi], backoff, func(ctx context.Context, req []types.WriteRequest) ([]types.WriteRequest, error) {
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: req}})
			if err != nil {
				return nil, wrap(err, "writing items")
			}
			return out.UnprocessedItems[s.table], nil
		})
		if err == nil && !ok {
			err = &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store did not take every write; retry later"}
		}
		return err
	})
}

// drain sends req, then what each answer left unprocessed, until nothing is
// left, with backoff between rounds (AWS's advice for UnprocessedKeys and
// UnprocessedItems). It goes on as long as rounds make progress, bounded by
// ctx and the request's deadline, not by a count: under heavy throttling
// every round may leave some requests over. Rounds that make no progress at
// all count, and after batchRetries of them it gives up. It reports whether
// everything was processed; send's error ends it at once. wait is backoff
// (tests pass one that does not sleep).
func drain[T any](ctx context.Context, req []T, wait func(ctx context.Context, n int) bool, send func(ctx context.Context, req []T) (left []T, err error)) (bool, error) {
	stalls := 0
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > 0 && !wait(ctx, attempt-1) {
			return false, nil
		}
		left, err := send(ctx, req)
		if err != nil {
			return false, err
		}
		if len(left) >= len(req) {
			if stalls++; stalls >= batchRetries {
				return false, nil
			}
		}
		req = left
	}
	return true, nil
}

// forEachChunk calls fn on [lo,hi) chunks of n at most size long, at most
// s.Parallel at once, and returns the first error.
func (s *Store) forEachChunk(ctx context.Context, n, size int, fn func(ctx context.Context, lo, hi int) error) error {
	if n <= size {
		if n == 0 {
			return nil
		}
		return fn(ctx, 0, n)
	}
	var jobs [][2]int
	for lo := 0; lo < n; lo += size {
		jobs = append(jobs, [2]int{lo, min(lo+size, n)})
	}
	return s.parallel(ctx, len(jobs), func(ctx context.Context, i int) error { return fn(ctx, jobs[i][0], jobs[i][1]) })
}

// parallel runs fn(0..n-1), at most s.Parallel at once, on pooled
// goroutines (Go); the first error cancels the others' context and is
// returned.
func (s *Store) parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	limit := max(s.Parallel, 1)
	fork, counted := ctx.Value(forkKey{}).(func(int) func())
	if counted {
		// Counted goroutines all start at once: one waiting for a slot
		// would count as running while the others wait (WithFork).
		limit = n
	}
	done := doneNothing
	if counted {
		done = fork(n)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		slots = make(chan struct{}, limit)
	)
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		client.Go(func() {
			defer func() { <-slots; wg.Done(); done() }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}
