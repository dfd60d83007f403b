// Package dynamo is taskgraph's single-table DynamoDB store over the types of
// package domain: the key design and the access patterns (keys.go), one method per access
// pattern and per mutation, in one file per noun (profile.go, project.go,
// member.go, task.go, tag.go, comment.go), and the transactions that keep the
// table consistent (txn.go). docs/design.md has a map of the files.
package dynamo

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
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

	// Events, when set, receives the event of every committed change to a
	// project, its members, tasks and comments, through the outbox (see
	// outbox.go). Nil: no events and no outbox items.
	Events domain.EventSink
	// PublishTimeout bounds one Events.Publish call.
	PublishTimeout time.Duration

	// MembershipCap is how many projects one user may be a member of
	// (copies.go); 0 means DefaultMembershipCap. CommentCap is how many
	// comments one task may have (counts.go); 0 means DefaultCommentCap.
	MembershipCap, CommentCap int

	// BackfillRate bounds a backfill's writes a second (backfill.go); 0
	// means DefaultBackfillRate. Sleep, when set, is how a backfill waits
	// (tests count the waits rather than take them).
	BackfillRate int
	Sleep        func(ctx context.Context, d time.Duration) error
	// beforeFillWrite, when set (tests), runs between a joined backfill's
	// reads and each of its writes of an item k (backfilljoin.go): a write
	// made there races it; an error stops the run.
	beforeFillWrite func(ctx context.Context, k key) error

	// TagIndexCap is how many tasks a tag index lists before it is marked
	// full (tagindex.go); 0 means DefaultTagIndexCap.
	TagIndexCap int
	// tagIndexed: the table's tag indexes are complete (tagIndexedKey).
	tagIndexed atomic.Bool
	// commentIndexed: the table's comments carry their project collection's
	// keys (commentIndexedKey).
	commentIndexed atomic.Bool
	// fullIndexes are the tag indexes known to be full (key → true).
	fullIndexes sync.Map
	// backfilled are the backfills known done on the table (name → true):
	// a read that needs their attributes on every item waits for them
	// (backfill.go).
	backfilled sync.Map

	// SyncRetention is how long the change log keeps what was deleted and
	// how old a sync token may be (changes.go); 0 means
	// DefaultSyncRetention.
	SyncRetention time.Duration
	// MarkEverySync has every sync write its viewer's marks
	// (syncmark.go), whatever the number of their projects: tests that
	// prove the marks on a few projects set it.
	MarkEverySync bool
	// changeEpoch is the epoch of the table's change logs; nil: the table
	// has none (ChangeEpoch).
	changeEpoch atomic.Pointer[string]
	// locks serialize this instance's changes to each project (changes.go).
	locks projectLocks

	cleanupMu   sync.Mutex
	cleanupKick chan struct{}

	outboxDel  outboxDeleter
	outboxKick chan struct{} // KickOutbox: a sweep now
	// outboxOwed is the commit time (unix ns) of the latest event whose
	// publication failed on this instance, until a sweep published it
	// (owe); 0: none.
	outboxOwed atomic.Int64
	// outboxKicked is when KickOutbox was last called, outboxSwept when
	// the last sweep of every item that succeeded began (unix ns, the
	// store's clock).
	outboxKicked, outboxSwept atomic.Int64
}

// New returns a store on the named table.
func New(db API, table string) *Store {
	s := &Store{table: table, ids: newIDGen(), Now: time.Now, Log: slog.Default(), Parallel: 64, CleanupSettle: 10 * time.Second,
		PublishTimeout: DefaultPublishTimeout, cleanupKick: make(chan struct{}, 1), outboxKick: make(chan struct{}, 1)}
	s.db = newLeanClient(db, func() bool { return s.hasBackfill(leanItemsGate) })
	return s
}

// Table returns the name of the store's table.
func (s *Store) Table() string { return s.table }

func (s *Store) now() time.Time { return s.Now().UTC() }

// Ping checks that the table can be reached. Returns EUNAVAILABLE or EINTERNAL.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	return wrap(err, "describing the table")
}
