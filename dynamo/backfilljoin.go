package dynamo

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// A joined backfill (backfill.join set) gives an item what it computes
// from other items as well as its own: a tag index's entries their tasks'
// titles (tagTitlesBackfill). For each item its Scan finds, the run reads
// the items join names (BatchGetItem, eventually consistent), asks fill
// for the parts to set, and writes them in as few transactions as it can:
// one Update of the item setting up to maxFillParts parts, conditioned on
// each part's document path still holding the value it was read with,
// and one ConditionCheck per item a part was computed from, conditioned on
// its attributes still being as read. A write of the item or of one of
// those items meanwhile (a rename, a due date, an assignee, a deletion)
// cancels the transaction, whatever value it wrote (even one equal to the
// value read: a task renamed to a title too long for its entry rewrites
// the entry as it was): the run reads the item and the others again,
// strongly consistent this time, and writes what is still missing, at
// most backfillAttempts times. So a stale read never wins: what a part
// writes was, at the write, what its sources said. Nor does one make the
// run leave a part out: when fill finds a source missing or out of step
// with the item (stale), the run reads them again strongly too.

// fillPart is one document path a joined backfill sets on an item: from
// the value it was read with (was) to value, computed from the item from
// and its attributes check as read. size is from's size (client.ItemSize: the
// run sets it).
type fillPart struct {
	path       string
	was, value types.AttributeValue
	from       key
	check      map[string]types.AttributeValue
	size       int
}

const (
	// maxFillParts is how many parts one transaction sets: with their
	// ConditionChecks, within the 100 actions of a transaction, and their
	// expressions within DynamoDB's 4 KB each (TestAJoinedBackfillsWriteFitsDynamoDBsLimits).
	maxFillParts = maxTxnItems - 1
	// maxFillBytes bounds the sizes of the items one transaction's parts
	// are checked on; with the item written (at most 400 KB), within the
	// 4 MB DynamoDB allows a transaction's items.
	maxFillBytes = 3 << 20
	// backfillAttempts is how many times a joined backfill reads and
	// writes one item whose sources keep changing before it gives up (the
	// next run resumes at its page).
	backfillAttempts = 8
)

// backfillRead is a joined backfill's first read of the items it joins:
// eventually consistent, as a stale value fails the write's check.
var backfillRead = Consistency{false, "a joined backfill's first read: a stale value fails its write's condition check"}

// backfillJoined gives it the parts b.fill computes; it returns the
// writes it made (transactions committed).
func (s *Store) backfillJoined(ctx context.Context, b backfill, it item, pace func(context.Context) error) (int, error) {
	written := 0
	for attempt := 0; ; attempt++ {
		keys := b.join(it)
		if len(keys) == 0 {
			return written, nil
		}
		rctx := ctx
		if attempt == 0 {
			rctx = WithConsistency(ctx, backfillRead)
		}
		got, err := s.getItems(rctx, keys)
		if err != nil {
			return written, err
		}
		joined := make(map[key]item, len(keys))
		for i, k := range keys {
			if got[i] != nil {
				joined[k] = got[i]
			}
		}
		parts, stale := b.fill(it, joined)
		for i := range parts {
			parts[i].size = client.ItemSize(joined[parts[i].from])
		}
		committed, conflict := 0, false
		for _, chunk := range fillChunks(parts) {
			ok, err := s.writeFill(ctx, keyOf(it), chunk, pace)
			if err != nil {
				return written, err
			}
			if !ok {
				conflict = true
				break
			}
			committed++
		}
		written += committed
		if !conflict && (!stale || attempt > 0) {
			return written, nil // (a source out of step after a strong read is its own writer's to mend)
		}
		if attempt == backfillAttempts-1 {
			return written, domain.Errorf(domain.EUNAVAILABLE, "the backfill %s: an item kept changing while it was written; run it again", b.name)
		}
		if it, err = s.getOne(ctx, keyOf(it)); err != nil || it == nil {
			return written, err // (deleted meanwhile: nothing to give it)
		}
	}
}

// fillChunks splits parts into the writes of one transaction each: at most
// maxFillParts parts, whose sources are distinct items (a transaction
// touches an item once) of at most maxFillBytes in all; in order.
func fillChunks(parts []fillPart) [][]fillPart {
	var out [][]fillPart
	var cur []fillPart
	bytes := 0
	for _, p := range parts {
		if len(cur) > 0 && (len(cur) == maxFillParts || bytes+p.size > maxFillBytes ||
			slices.ContainsFunc(cur, func(q fillPart) bool { return q.from == p.from })) {
			out, cur, bytes = append(out, cur), nil, 0
		}
		cur = append(cur, p)
		bytes += p.size
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// writeFill sets the parts on the item k in one transaction (fillWrite);
// ok is false when a condition failed (the item or a source changed).
func (s *Store) writeFill(ctx context.Context, k key, parts []fillPart, pace func(context.Context) error) (bool, error) {
	actions, err := s.fillWrite(k, parts)
	if err != nil {
		return false, err
	}
	if s.beforeFillWrite != nil {
		if err := s.beforeFillWrite(ctx, k); err != nil {
			return false, err
		}
	}
	if err := pace(ctx); err != nil {
		return false, wrap(err, "pacing a backfill")
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	var cancelled *types.TransactionCanceledException
	switch {
	case errors.As(err, &cancelled):
		return false, nil
	case err != nil:
		return false, wrap(err, "a backfill's write")
	}
	return true, nil
}

// fillWrite is the transaction that sets parts on item k: its Update, then
// a ConditionCheck of each part's source.
func (s *Store) fillWrite(k key, parts []fillPart) ([]types.TransactWriteItem, error) {
	cond := exists()
	var upd expression.UpdateBuilder
	for _, p := range parts {
		cond = cond.And(expression.Name(p.path).Equal(expression.Value(p.was)))
		upd = upd.Set(expression.Name(p.path), expression.Value(p.value))
	}
	ex, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return nil, internal(err, "building a backfill's write")
	}
	actions := []types.TransactWriteItem{{Update: &types.Update{TableName: &s.table, Key: k.av(), UpdateExpression: ex.Update(),
		ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}}}
	for _, p := range parts {
		check := exists()
		for _, a := range sortedNames(p.check) {
			check = check.And(expression.Name(a).Equal(expression.Value(p.check[a])))
		}
		cx, err := expression.NewBuilder().WithCondition(check).Build()
		if err != nil {
			return nil, internal(err, "building a backfill's check")
		}
		actions = append(actions, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.table, Key: p.from.av(),
			ConditionExpression: cx.Condition(), ExpressionAttributeNames: cx.Names(), ExpressionAttributeValues: cx.Values()}})
	}
	return actions, nil
}
