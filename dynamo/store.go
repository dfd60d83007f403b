// Package dynamo is taskgraph's single-table DynamoDB store: the domain types,
// the key design (keys.go), one method per access pattern and per mutation,
// and the transactions that keep the table consistent.
package dynamo

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// API is the part of the DynamoDB client the store uses; *dynamodb.Client
// satisfies it.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// Store reads and writes taskgraph's objects in one DynamoDB table.
type Store struct {
	db    API
	table string
	ids   *idGen

	// Now is the clock; tests replace it. Overdue depends on today.
	Now func() time.Time
	// Log receives background errors (cleanup); defaults to slog.Default().
	Log *slog.Logger
	// Parallel bounds the calls one read (a merged list, a batch of more
	// than 100 keys) runs at once.
	Parallel int
	// CleanupSettle is how long a cleanup job keeps looking for stragglers
	// (see RunCleanup).
	CleanupSettle time.Duration

	cleanupMu   sync.Mutex
	cleanupKick chan struct{}
}

// New returns a store on the named table.
func New(db API, table string) *Store {
	return &Store{db: db, table: table, ids: newIDGen(), Now: time.Now, Log: slog.Default(), Parallel: 64, CleanupSettle: 10 * time.Second,
		cleanupKick: make(chan struct{}, 1)}
}

// Table returns the name of the store's table.
func (s *Store) Table() string { return s.table }

func (s *Store) now() time.Time { return s.Now().UTC() }

// wrap turns an SDK error into a coded error: throttling, server errors,
// exhausted retries and unreachable endpoints become EUNAVAILABLE.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"InternalServerError", "ServiceUnavailable", "LimitExceededException":
			return &Error{Code: EUNAVAILABLE, Message: "the data store is busy or unavailable; retry later", Err: err}
		}
	}
	var maxErr *retry.MaxAttemptsError
	var quotaErr ratelimit.QuotaExceededError
	var netErr net.Error
	if errors.As(err, &maxErr) || errors.As(err, &quotaErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: EUNAVAILABLE, Message: "the data store is busy or unavailable; retry later", Err: err}
	}
	return &Error{Code: EINTERNAL, Message: what, Err: err}
}

// Ping checks that the table can be reached. Returns EUNAVAILABLE or EINTERNAL.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	return wrap(err, "describing the table")
}

// backoff sleeps before retry attempt n (0-based): exponential with full
// jitter, capped at a second. It returns false, at once, when ctx has ended
// or the sleep would pass the request's deadline (WithDeadline): there would
// be no time left for the call.
func backoff(ctx context.Context, n int) bool {
	d := min(25*time.Millisecond<<min(n, 6), time.Second)
	d = rand.N(d) + time.Millisecond
	if t, ok := ctx.Value(deadlineKey{}).(time.Time); ok && time.Until(t) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
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
				s.table: {Keys: req, ConsistentRead: aws.Bool(true)}}})
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
			err = &Error{Code: EUNAVAILABLE, Message: "the data store did not answer every read; retry later"}
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

// parallel runs fn(0..n-1), at most s.Parallel at once, and returns the first error.
func (s *Store) parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, max(s.Parallel, 1))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if errs[i] = fn(ctx, i); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// Ref names one object for a point read.
type Ref struct {
	Kind Kind
	ID   string // user, project, task or comment id
	User string // with KindProject and a non-empty User: that user's membership
}

// UserRef, ProjectRef, MemberRef, TaskRef and CommentRef make Refs.
func UserRef(id string) Ref              { return Ref{Kind: KindUser, ID: id} }
func ProjectRef(id string) Ref           { return Ref{Kind: KindProject, ID: id} }
func MemberRef(project, user string) Ref { return Ref{Kind: KindProject, ID: project, User: user} }
func TaskRef(id string) Ref              { return Ref{Kind: KindTask, ID: id} }
func CommentRef(id string) Ref           { return Ref{Kind: KindComment, ID: id} }

func (r Ref) key() (key, error) {
	switch r.Kind {
	case KindUser:
		if err := ValidUserID(r.ID); err != nil {
			return key{}, err
		}
		return userKey(r.ID), nil
	case KindProject:
		p, err := ParseProjectID(r.ID)
		if err != nil {
			return key{}, err
		}
		if r.User != "" {
			if err := ValidUserID(r.User); err != nil {
				return key{}, err
			}
			return memberKey(p, r.User), nil
		}
		return projectKey(p), nil
	case KindTask:
		t, err := ParseTaskID(r.ID)
		if err != nil {
			return key{}, err
		}
		return taskKey(t), nil
	case KindComment:
		t, c, err := parseCommentID(r.ID)
		if err != nil {
			return key{}, err
		}
		return commentKey(t, c), nil
	}
	return key{}, Errorf(EINVALID, "%q is not an id", clip(r.ID))
}

// Get reads many objects by reference in as few BatchGetItem calls as the
// 100-key limit allows. It returns, in the order of refs, a *User, *Project,
// *Member, *Task or *Comment, or an error per ref: ENOTFOUND for a missing
// object, EINVALID for a malformed id. A failure of the table is returned for
// every ref (EUNAVAILABLE, EINTERNAL).
func (s *Store) Get(ctx context.Context, refs []Ref) ([]any, []error) {
	vals := make([]any, len(refs))
	errs := make([]error, len(refs))
	keys := make([]key, 0, len(refs))
	idx := make([]int, 0, len(refs))
	for i, r := range refs {
		k, err := r.key()
		if err != nil {
			errs[i] = err
			continue
		}
		keys = append(keys, k)
		idx = append(idx, i)
	}
	items, err := s.getItems(ctx, keys)
	for j, i := range idx {
		switch {
		case err != nil:
			errs[i] = err
		case items[j] == nil:
			errs[i] = Errorf(ENOTFOUND, "%s not found", refs[i].what())
		default:
			vals[i], errs[i] = decode(items[j])
			errs[i] = internal(errs[i], "decoding an item")
		}
	}
	return vals, errs
}

func (r Ref) what() string {
	switch {
	case r.Kind == KindUser:
		return "user " + clip(r.ID)
	case r.Kind == KindProject && r.User != "":
		return "membership"
	case r.Kind == KindProject:
		return "project " + r.ID
	case r.Kind == KindTask:
		return "task " + r.ID
	case r.Kind == KindComment:
		return "comment " + r.ID
	}
	return "object"
}

// getOne reads one item with a strongly consistent GetItem; nil when missing.
func (s *Store) getOne(ctx context.Context, k key) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k.av(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, wrap(err, "reading an item")
	}
	return out.Item, nil
}
