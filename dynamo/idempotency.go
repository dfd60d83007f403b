package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/policy"
)

// Idempotency keys: a client may send a key with a mutation; the mutation's
// transaction then also writes a record of (viewer, key, field) with the id
// of its result, the project that result lies in and a digest of the
// operation, on the condition that there is no live record yet. A retry with
// the same key finds the record and answers with the first call's result
// instead of acting again; two racing calls cannot both commit.
//
// A replay is a read like any other: the object it answers with is read
// again, with the viewer's membership of its project, and the viewer gets it
// only if they may see it now (see replayer). A key used again for another
// mutation or other input is refused (EINVALID), never answered with the
// first call's result. Records expire after IdempotencyTTL: the table's TTL
// attribute "expiresAt" deletes them where enabled, and an expired record
// counts as absent everywhere else.

// IdempotencyTTL is how long a mutation's idempotency record is kept.
const IdempotencyTTL = 24 * time.Hour

const maxIdemKeyLen = 64

type idemCtxKey struct{}

type idem struct{ viewer, key, op, digest string }

// WithIdempotencyKey returns a context whose mutation (named op, e.g. the
// GraphQL field or alias) by viewer is done at most once per key. digest
// identifies the operation (the mutation field and its input, canonicalised):
// the key answers only retries of that operation. A key is 1-64 characters
// of A-Z, a-z, 0-9, '-', '_', '.', ':'. Returns EINVALID.
func WithIdempotencyKey(ctx context.Context, viewer, key, op, digest string) (context.Context, error) {
	if key == "" || len(key) > maxIdemKeyLen {
		return ctx, domain.Errorf(domain.EINVALID, "an idempotency key has 1 to %d characters", maxIdemKeyLen)
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':') {
			return ctx, domain.Errorf(domain.EINVALID, "an idempotency key may only contain A-Z, a-z, 0-9, '-', '_', '.' and ':'")
		}
	}
	return context.WithValue(ctx, idemCtxKey{}, idem{viewer: viewer, key: key, op: op, digest: digest}), nil
}

func idemFrom(ctx context.Context) (idem, bool) {
	v, ok := ctx.Value(idemCtxKey{}).(idem)
	return v, ok
}

type idemItem struct {
	PK        string
	SK        string
	Type      string `dynamodbav:"type"`
	Op        string `dynamodbav:"op"`
	Digest    string `dynamodbav:"digest"`
	Result    string `dynamodbav:"result"`
	Project   string `dynamodbav:"project,omitempty"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

const typeIdem = "IDEMPOTENCY"

// errReplay marks a failed condition on the idempotency record: another call
// with the same key committed first.
var errReplay = errors.New("idempotency key already used")

var errKeyReused = domain.Errorf(domain.EINVALID,
	"this idempotency key was used for another mutation or other input; use a new key for a new operation")

// remember adds the idempotency record of ctx, if any, to a transaction
// whose result is t.result. An expired record that TTL has not deleted yet
// is overwritten.
func (s *Store) remember(ctx context.Context, t *txn) {
	rec, ok := idemFrom(ctx)
	if !ok || t.result == "" {
		return
	}
	now := s.now()
	k := idemKey(rec.viewer, rec.key, rec.op)
	free := absent().Or(expression.Name("expiresAt").LessThanEqual(expression.Value(now.Unix())))
	t.put(s.table, marshal(idemItem{PK: k.PK, SK: k.SK, Type: typeIdem, Op: rec.op, Digest: rec.digest, Result: t.result,
		Project: t.project, ExpiresAt: now.Add(IdempotencyTTL).Unix()}), &free, errReplay)
}

// recall returns the live record for the key of ctx, if any. A record of
// another operation is EINVALID.
func (s *Store) recall(ctx context.Context) (*idemItem, error) {
	rec, ok := idemFrom(ctx)
	if !ok {
		return nil, nil
	}
	it, err := s.getOne(ctx, idemKey(rec.viewer, rec.key, rec.op))
	if err != nil || it == nil {
		return nil, err
	}
	var r idemItem
	if err := attributevalue.UnmarshalMap(it, &r); err != nil {
		return nil, internal(err, "decoding an item")
	}
	if r.ExpiresAt <= s.now().Unix() {
		return nil, nil // expired: absent; TTL deletes it eventually
	}
	if r.Op != rec.op || r.Digest != rec.digest {
		return nil, errKeyReused
	}
	return &r, nil
}

// replayer answers a retried mutation from its idempotency record. Only the
// constructors below make one, and each checks what the viewer may see at
// replay time, so once cannot answer without that check.
type replayer[T any] struct {
	answer func(ctx context.Context, s *Store, viewer string, r *idemItem) (T, error)
}

// once runs a mutation at most once per idempotency key in ctx: a call whose
// key was seen answers through replay.
func once[T any](ctx context.Context, s *Store, run func() (T, error), replay replayer[T]) (T, error) {
	var zero T
	rec, _ := idemFrom(ctx)
	r, err := s.recall(ctx)
	if err != nil {
		return zero, err
	}
	if r != nil {
		return replay.answer(ctx, s, rec.viewer, r)
	}
	v, err := run()
	if errors.Is(err, errReplay) { // a concurrent call with the same key committed first
		r, rerr := s.recall(ctx)
		if rerr != nil {
			return zero, rerr
		}
		if r == nil {
			return zero, domain.Errorf(domain.ECONFLICT, "a concurrent call with the same idempotency key is in progress; retry")
		}
		return replay.answer(ctx, s, rec.viewer, r)
	}
	return v, err
}

// replayDeleted answers a replayed delete with the id the client sent: it
// reveals nothing the client did not give. The record's digest already
// proved it is the same operation.
func replayDeleted() replayer[string] {
	return replayer[string]{answer: func(_ context.Context, _ *Store, _ string, r *idemItem) (string, error) {
		return r.Result, nil
	}}
}

// replayInProject answers with the recorded object when the viewer may see
// it now. keysOf gives the object's key first, then the keys of the objects
// it is visible with (a comment's task); these, the recorded project and
// the viewer's membership of it are read in one batch, and a missing one
// answers ENOTFOUND, as a fresh read of an object the viewer may not see
// would. The record's project was written by the same transaction as its
// result, and objects never move between projects.
func replayInProject[T any](keysOf func(id string) ([]key, error)) replayer[T] {
	return replayer[T]{answer: func(ctx context.Context, s *Store, viewer string, r *idemItem) (T, error) {
		var zero T
		keys, err := keysOf(r.Result)
		if err != nil {
			return zero, err
		}
		pu, err := domain.ParseProjectID(r.Project)
		if err != nil {
			return zero, errReplayGone
		}
		// The result beside the viewer's profile (visibility), in one read.
		items, err := s.getItems(ctx, append(keys, userKey(viewer)))
		if err != nil {
			return zero, err
		}
		n := len(keys)
		for _, it := range items[:n] {
			if it == nil {
				return zero, errReplayGone
			}
		}
		var u *domain.User
		if items[n] != nil {
			if u, err = decodeAs[*domain.User](items[n]); err != nil {
				return zero, err
			}
		}
		if !policy.SeesProject(u, domain.ProjectIDOf(pu)) {
			return zero, errReplayGone
		}
		return decodeAs[T](items[0])
	}}
}

// replaySelf answers with the viewer's own profile, which they may always
// see (policy.SeesUser, whose first case needs no profile); a record of
// anyone else's answers ENOTFOUND.
func replaySelf() replayer[*domain.User] {
	return replayer[*domain.User]{answer: func(ctx context.Context, s *Store, viewer string, r *idemItem) (*domain.User, error) {
		if !policy.SeesUser(viewer, nil, r.Result, nil) {
			return nil, errReplayGone
		}
		it, err := s.getOne(ctx, userKey(viewer))
		if err != nil {
			return nil, err
		}
		if it == nil {
			return nil, errReplayGone
		}
		return decodeAs[*domain.User](it)
	}}
}

var errReplayGone = domain.Errorf(domain.ENOTFOUND, "the result of the first call with this idempotency key was not found")

var (
	replayProject = replayInProject[*domain.Project](func(id string) ([]key, error) {
		p, err := domain.ParseProjectID(id)
		return []key{projectKey(p)}, err
	})
	replayTask = replayInProject[*domain.Task](func(id string) ([]key, error) {
		t, err := domain.ParseTaskID(id)
		return []key{taskKey(t)}, err
	})
	replayComment = replayInProject[*domain.Comment](func(id string) ([]key, error) {
		t, c, err := domain.SplitCommentID(id)
		return []key{commentKey(t, c), taskKey(t)}, err
	})
)
