package dynamo

// The change log's epoch and marker, its expiry and sweep, and what the
// cleanup of deleted projects and tasks does to it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ChangeEpoch returns the epoch of the table's change logs, which changes
// when they are rebuilt (an import), and false for a table without them
// (written by a version without the change log: sync needs an export and
// import first).
func (s *Store) ChangeEpoch() (string, bool) {
	e := s.changeEpoch.Load()
	if e == nil {
		return "", false
	}
	return *e, true
}

func (s *Store) setChangeEpoch(e string) {
	if e == "" {
		s.changeEpoch.Store(nil)
		return
	}
	s.changeEpoch.Store(&e)
}

// changeLogMarker is the marker of a table whose change logs are complete,
// with a new epoch (random), or the epoch of a new, empty table.
func changeLogMarker(epoch string) item {
	if epoch == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		epoch = hex.EncodeToString(b[:])
	}
	it := changeLogKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeChangeMarker}
	it["epoch"] = &types.AttributeValueMemberS{Value: epoch}
	return it
}

// newTableEpoch is the epoch of a table created empty: the same for every
// new table, so that a journal replayed over a new table (whose marker no
// journal holds) ends in the table it recorded. A client's token of
// another table names projects this one lacks: their tombstones follow.
const newTableEpoch = "new"

// DetectChangeLog reads the table's marker of complete change logs (and
// their epoch), which EnsureTable writes into a new table and an import
// into a rebuilt one. Returns EUNAVAILABLE.
func (s *Store) DetectChangeLog(ctx context.Context) error {
	it, err := s.getOne(ctx, changeLogKey)
	if err != nil {
		return err
	}
	s.setChangeEpoch(str(it, "epoch"))
	if it == nil {
		s.Log.Warn("this table was written by a version without the change log: sync answers SERVICE_UNAVAILABLE until an export and import builds it (docs/operations.md)")
	}
	return nil
}

// markChangeLog writes the marker of complete change logs into a new,
// empty table.
func (s *Store) markChangeLog(ctx context.Context) error {
	m := changeLogMarker(newTableEpoch)
	err := s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: m}}})
	if err == nil {
		s.setChangeEpoch(str(m, "epoch"))
	}
	return err
}

// SweepChanges deletes the change log items whose expiry has passed: one
// Query of each of the sweep's GSI2 partitions, then BatchWriteItem. On
// AWS the table's TTL deletes them too; the embedded store has none. It
// returns how many it deleted. Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) SweepChanges(ctx context.Context) (int, error) {
	return s.sweepChanges(ctx, 0, expiryShards)
}

// sweepChanges is SweepChanges over the GSI2 partitions lo to hi-1 (the
// slow sweep reads one at a time: background.go).
func (s *Store) sweepChanges(ctx context.Context, lo, hi int) (int, error) {
	before := expirySK(s.now().Unix())
	shards := make([][]key, hi-lo)
	err := s.forEachChunk(ctx, hi-lo, 1, func(ctx context.Context, i, _ int) error {
		p := expiredChanges
		kb := expression.KeyAnd(expression.Key(p.pkAttr).Equal(expression.Value(expiryPrefix+strconv.Itoa(lo+i))),
			expression.KeyLessThan(expression.Key(p.skAttr), expression.Value(before)))
		ex, err := expression.NewBuilder().WithKeyCondition(kb).
			WithProjection(expression.NamesList(expression.Name(attrPK), expression.Name(attrSK))).Build()
		if err != nil {
			return internal(err, "building a query")
		}
		in := &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String(p.index), KeyConditionExpression: ex.KeyCondition(),
			ProjectionExpression: ex.Projection(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}
		q := dynamodb.NewQueryPaginator(s.db, in)
		for q.HasMorePages() {
			res, err := q.NextPage(ctx)
			if err != nil {
				return wrap(err, "reading the expired changes")
			}
			for _, it := range res.Items {
				shards[i] = append(shards[i], keyOf(it))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	keys := slices.Concat(shards...)
	if len(keys) == 0 {
		return 0, nil
	}
	return len(keys), s.deleteKeys(ctx, keys)
}

// expireLog gives every item of a deleted project's change log that has
// none an expiry, from now (the cleanup of the project): members offline
// when it was deleted still get the tombstones of everything in it until
// their tokens expire. It returns how many items it changed.
func (s *Store) expireLog(ctx context.Context, pu string) (int, error) {
	items, err := s.queryAll(ctx, wholePartition, changesPK(pu))
	if err != nil {
		return 0, err
	}
	now := s.now()
	var reqs []types.WriteRequest
	for _, it := range items {
		if _, ok := it[TTLAttribute]; ok {
			continue
		}
		var pk, sk string
		var exp int64
		s.expire(&pk, &sk, &exp, keyOf(it), now)
		it[attrGSI2PK], it[attrGSI2SK] = &types.AttributeValueMemberS{Value: pk}, &types.AttributeValueMemberS{Value: sk}
		it[TTLAttribute] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	return len(reqs), s.batchWrite(ctx, reqs)
}

// dropCommentEntries deletes the entries of a deleted task's comments
// (items: what was left of the task's partition) from its project's log;
// the task's own gone entry names them.
func (s *Store) dropCommentEntries(ctx context.Context, pu string, items []item) error {
	var keys []key
	for _, it := range items {
		if str(it, "type") == typeComment {
			if pos := numberOf(it, attrSyncSeq); pos > 0 {
				keys = append(keys, changeKey(pu, pos))
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return s.deleteKeys(ctx, keys)
}
