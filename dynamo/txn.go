package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

const maxTxnItems = 100

// txn collects the actions of one TransactWriteItems call, each with the
// error to report when its condition fails.
type txn struct {
	items []types.TransactWriteItem
	fails []error
	err   error
	// result is the id of what the mutation made or changed, and project
	// the id of the project it lies in (none for a profile), recorded with
	// the idempotency key of its context, if any.
	result, project string
	// event is the change's event, if it yields one: with Store.Events
	// set, commit writes it to the outbox with the transaction and
	// publishes it after (outbox.go). Its ID and, unless set, At are
	// filled in by commit.
	event *domain.Event
	// index holds the changes of tag indexes (indexTags), written by
	// commitIndexed as one update per index, in indexOrder.
	index      map[key]*indexChange
	indexOrder []key
	// log is what the transaction writes to its project's change log, and
	// proj its action on the project's item, made at commit with the log's
	// positions (changes.go: logTo, onProject, finish).
	log  *changeLog
	proj *projectAction
}

func exists() expression.ConditionBuilder { return expression.AttributeExists(expression.Name(attrPK)) }
func absent() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(attrPK))
}

func (t *txn) build(cond *expression.ConditionBuilder, upd *expression.UpdateBuilder) (expression.Expression, bool) {
	if cond == nil && upd == nil {
		return expression.Expression{}, false
	}
	b := expression.NewBuilder()
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	if upd != nil {
		b = b.WithUpdate(*upd)
	}
	ex, err := b.Build()
	if err != nil && t.err == nil {
		t.err = internal(err, "building a write")
	}
	return ex, true
}

func (t *txn) put(table string, it item, cond *expression.ConditionBuilder, onFail error) {
	p := &types.Put{TableName: &table, Item: it}
	if ex, ok := t.build(cond, nil); ok {
		p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues = ex.Condition(), ex.Names(), ex.Values()
	}
	t.items = append(t.items, types.TransactWriteItem{Put: p})
	t.fails = append(t.fails, onFail)
}

func (t *txn) del(table string, k key, cond *expression.ConditionBuilder, onFail error) {
	d := &types.Delete{TableName: &table, Key: k.av()}
	if ex, ok := t.build(cond, nil); ok {
		d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues = ex.Condition(), ex.Names(), ex.Values()
	}
	t.items = append(t.items, types.TransactWriteItem{Delete: d})
	t.fails = append(t.fails, onFail)
}

func (t *txn) check(table string, k key, cond expression.ConditionBuilder, onFail error) {
	ex, _ := t.build(&cond, nil)
	t.items = append(t.items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: k.av(),
		ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}})
	t.fails = append(t.fails, onFail)
}

func (t *txn) update(table string, k key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, onFail error) {
	ex, _ := t.build(cond, &upd)
	t.items = append(t.items, types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: k.av(),
		UpdateExpression: ex.Update(), ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(),
		ExpressionAttributeValues: ex.Values()}})
	t.fails = append(t.fails, onFail)
}

// updateOld is update whose failed condition returns the item as it was
// (ReturnValuesOnConditionCheckFailure ALL_OLD), for onFail to tell why.
func (t *txn) updateOld(table string, k key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, onFail error) {
	t.update(table, k, upd, cond, onFail)
	t.returnOld()
}

// returnOld makes the last action's failed condition return the item as
// it was (ALL_OLD): for onFail to tell why, or commit to find a project's
// sync marks (syncmark.go).
func (t *txn) returnOld() {
	old := types.ReturnValuesOnConditionCheckFailureAllOld
	switch a := &t.items[len(t.items)-1]; {
	case a.Put != nil:
		a.Put.ReturnValuesOnConditionCheckFailure = old
	case a.Update != nil:
		a.Update.ReturnValuesOnConditionCheckFailure = old
	case a.Delete != nil:
		a.Delete.ReturnValuesOnConditionCheckFailure = old
	case a.ConditionCheck != nil:
		a.ConditionCheck.ReturnValuesOnConditionCheckFailure = old
	}
}

// commit runs the transaction, then publishes its event, if any (see
// outbox.go; a failed publication is no error). A failed condition returns the error given
// with its action (the first by position); a transaction conflict is retried
// with the same client request token, so a retry has one effect; past the
// retries it is ECONFLICT.
func (s *Store) commit(ctx context.Context, t *txn) error {
	s.remember(ctx, t)
	t.finish(s.table)
	if t.err != nil {
		return t.err
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	ev := s.stageEvent(t, token)
	if len(t.items) > maxTxnItems {
		return domain.Errorf(domain.EINVALID, "this change would touch %d items, more than the %d one transaction allows", len(t.items), maxTxnItems)
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: t.items, ClientRequestToken: aws.String(token)}
	unmarks := 0
	for attempt := 0; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, in)
		if err == nil {
			s.noteSeq(t, nil)
			if ev != nil {
				s.publish(ctx, ev)
			}
			return nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return wrap(err, "writing a change")
		}
		if users, pu := marksIn(tce.CancellationReasons); len(users) > 0 && unmarks < txnRetries {
			// A project with sync marks, which its change must delete
			// first (syncmark.go): then the same transaction again.
			unmarks++
			if err := s.unmark(ctx, pu, users); err != nil {
				return err
			}
			attempt--
			continue
		}
		conflict, err := s.cancelled(t, tce, err)
		if !conflict {
			return err
		}
		if attempt >= txnRetries || !backoff(ctx, attempt) {
			return domain.Errorf(domain.ECONFLICT, concurrentChange)
		}
	}
}

// cancelled is the error of a cancelled transaction (err, whose reasons
// tce holds): the error given with the first action whose condition
// failed, ETOOLARGE, EUNAVAILABLE; or conflict, when it is worth sending
// again (a TransactionConflict).
func (s *Store) cancelled(t *txn, tce *types.TransactionCanceledException, err error) (conflict bool, out error) {
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			if i < len(t.fails) && t.fails[i] != nil {
				switch miss := t.fails[i].(type) {
				case *tagIndexMiss:
					return false, miss.with(tce.CancellationReasons[i+1:], t.fails[i+1:])
				case *profileMiss:
					return false, miss.of(r.Item)
				}
				s.noteSeq(t, t.fails[i])
				return false, t.fails[i]
			}
			return false, domain.Errorf(domain.ECONFLICT, concurrentChange)
		case "ValidationError":
			if tooLarge("ValidationError", aws.ToString(r.Message)) {
				return false, &domain.Error{Code: domain.ETOOLARGE, Message: errTooLarge, Err: err}
			}
		case "TransactionConflict":
			conflict = true
		case "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			return false, &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store is busy; retry later", Err: err}
		}
	}
	if !conflict {
		return false, wrap(err, "writing a change")
	}
	return true, nil
}

// marksIn returns the users who hold sync marks of a project whose item a
// failed condition returned (ALL_OLD: a write that needs it unmarked,
// syncmark.go), and the project's ULID.
func marksIn(reasons []types.CancellationReason) (users []string, pu string) {
	for _, r := range reasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" && str(r.Item, "type") == typeProject {
			if users = markedBy(r.Item); len(users) > 0 {
				return users, ulidOf(str(r.Item, "id"))
			}
		}
	}
	return nil, ""
}

// put writes one item on a condition; a failed condition is errRetry. With
// an idempotency key in ctx, or an event ev while events are on, the item,
// the key's record (result, project: see txn) and the event's outbox item
// are written by one transaction.
func (s *Store) put(ctx context.Context, it item, cond expression.ConditionBuilder, result, project string, ev *domain.Event) error {
	if _, ok := idemFrom(ctx); ok || (ev != nil && s.Events != nil) {
		t := txn{result: result, project: project, event: ev}
		t.put(s.table, it, &cond, errRetry)
		t.returnOld() // a project's sync marks, for commit (syncmark.go)
		return s.commit(ctx, &t)
	}
	ex, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return internal(err, "building a write")
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it, ConditionExpression: ex.Condition(),
		ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// A project with sync marks (syncmark.go): deleted, then read again.
		if users := markedBy(ccf.Item); len(users) > 0 && str(ccf.Item, "type") == typeProject {
			if err := s.unmark(ctx, ulidOf(str(ccf.Item, "id")), users); err != nil {
				return err
			}
		}
		return errRetry
	}
	return wrap(err, "saving a change")
}

// revIs is the condition that an item written whole (a profile, a project)
// is still at the rev read.
func revIs(rev int) expression.ConditionBuilder {
	return expression.Name("rev").Equal(expression.Value(rev))
}

func ptr[T any](v T) *T { return &v }
