package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// Idempotency keys: a client may send a key with a mutation; the mutation's
// transaction then also writes a record of (viewer, key) with the id of its
// result, on the condition that there is none yet. A retry with the same key
// finds the record and answers with the first call's result instead of
// acting again; two racing calls cannot both commit. Records expire after
// IdempotencyTTL (the table's TTL attribute "expiresAt", where enabled).

// IdempotencyTTL is how long a mutation's idempotency record is kept.
const IdempotencyTTL = 24 * time.Hour

const maxIdemKeyLen = 64

type idemCtxKey struct{}

type idem struct{ viewer, key, op string }

// WithIdempotencyKey returns a context whose mutation (named op, e.g. the
// GraphQL field or alias) by viewer is done at most once per key. A key is
// 1-64 characters of A-Z, a-z, 0-9, '-', '_', '.', ':'. Returns EINVALID.
func WithIdempotencyKey(ctx context.Context, viewer, key, op string) (context.Context, error) {
	if key == "" || len(key) > maxIdemKeyLen {
		return ctx, Errorf(EINVALID, "an idempotency key has 1 to %d characters", maxIdemKeyLen)
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':') {
			return ctx, Errorf(EINVALID, "an idempotency key may only contain A-Z, a-z, 0-9, '-', '_', '.' and ':'")
		}
	}
	return context.WithValue(ctx, idemCtxKey{}, idem{viewer: viewer, key: key, op: op}), nil
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
	Result    string `dynamodbav:"result"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

const typeIdem = "IDEMPOTENCY"

// errReplay marks a failed condition on the idempotency record: another call
// with the same key committed first.
var errReplay = errors.New("idempotency key already used")

// remember adds the idempotency record of ctx, if any, to a transaction
// whose result is t.result.
func (s *Store) remember(ctx context.Context, t *txn) {
	rec, ok := idemFrom(ctx)
	if !ok || t.result == "" {
		return
	}
	k := idemKey(rec.viewer, rec.key, rec.op)
	t.put(s.table, marshal(idemItem{PK: k.PK, SK: k.SK, Type: typeIdem, Op: rec.op, Result: t.result,
		ExpiresAt: s.now().Add(IdempotencyTTL).Unix()}), ptr(absent()), errReplay)
}

// recall returns the result recorded for the key of ctx, if any.
func (s *Store) recall(ctx context.Context) (string, bool, error) {
	rec, ok := idemFrom(ctx)
	if !ok {
		return "", false, nil
	}
	it, err := s.getOne(ctx, idemKey(rec.viewer, rec.key, rec.op))
	if err != nil || it == nil {
		return "", false, err
	}
	var r idemItem
	if err := attributevalue.UnmarshalMap(it, &r); err != nil {
		return "", false, internal(err, "decoding an item")
	}
	if r.ExpiresAt <= s.now().Unix() {
		return "", false, nil // expired; TTL deletes it eventually
	}
	if r.Op != rec.op {
		return "", false, Errorf(EINVALID, "this idempotency key was used for %s, not %s", r.Op, rec.op)
	}
	return r.Result, true, nil
}

// once runs a mutation at most once per idempotency key in ctx: a call whose
// key was seen answers with replay(the recorded result id).
func once[T any](ctx context.Context, s *Store, run func() (T, error), replay func(context.Context, string) (T, error)) (T, error) {
	if id, ok, err := s.recall(ctx); err != nil || ok {
		if err != nil {
			var zero T
			return zero, err
		}
		return replay(ctx, id)
	}
	v, err := run()
	if errors.Is(err, errReplay) { // a concurrent call with the same key committed first
		id, ok, rerr := s.recall(ctx)
		if rerr != nil || !ok {
			return v, Errorf(ECONFLICT, "a concurrent call with the same idempotency key is in progress; retry")
		}
		return replay(ctx, id)
	}
	return v, err
}

func replayID(_ context.Context, id string) (string, error) { return id, nil }

func projectRefKey(id string) (key, error) { return ProjectRef(id).key() }
func taskRefKey(id string) (key, error)    { return TaskRef(id).key() }
func commentRefKey(id string) (key, error) { return CommentRef(id).key() }

// loadAs returns a replay function that reads the recorded object.
func loadAs[T any](s *Store, keyOf func(string) (key, error)) func(context.Context, string) (T, error) {
	return func(ctx context.Context, id string) (T, error) {
		var zero T
		k, err := keyOf(id)
		if err != nil {
			return zero, err
		}
		it, err := s.getOne(ctx, k)
		if err != nil {
			return zero, err
		}
		if it == nil {
			return zero, Errorf(ENOTFOUND, "the result of the first call with this idempotency key no longer exists")
		}
		return decodeAs[T](it)
	}
}
