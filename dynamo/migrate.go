package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The one-time migrations of an existing table (EnsureCopies,
// EnsureCommentIndex) read what they need with scanTypes and write it back
// with setIfExists, then write their marker.

// scanTypes reads every item whose type is one of kinds: one Scan,
// filtered, for a migration run once.
func scanTypes(ctx context.Context, sc scanner, table string, kinds ...string) ([]item, error) {
	names := make([]string, len(kinds))
	values := map[string]types.AttributeValue{}
	for i, k := range kinds {
		names[i] = fmt.Sprintf(":t%d", i)
		values[names[i]] = &types.AttributeValueMemberS{Value: k}
	}
	in := &dynamodb.ScanInput{TableName: &table, FilterExpression: aws.String("#t IN (" + strings.Join(names, ", ") + ")"),
		ExpressionAttributeNames: map[string]string{"#t": "type"}, ExpressionAttributeValues: values}
	var items []item
	for p := dynamodb.NewScanPaginator(sc, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap(err, "reading the table for a migration")
		}
		items = append(items, page.Items...)
	}
	return items, nil
}

// setEach sets the attributes attrs of each of items that keep selects on
// the stored item (setIfExists) and returns how many it set.
func (s *Store) setEach(ctx context.Context, items []item, keep func(item) bool, attrs ...string) (int, error) {
	n := 0
	for _, it := range items {
		if !keep(it) {
			continue
		}
		set, err := s.setIfExists(ctx, it, attrs...)
		if err != nil {
			return n, err
		}
		if set {
			n++
		}
	}
	return n, nil
}

// setIfExists sets the attributes attrs of it on the stored item, if it still
// exists; it reports whether it did (false: deleted meanwhile).
func (s *Store) setIfExists(ctx context.Context, it item, attrs ...string) (bool, error) {
	var upd expression.UpdateBuilder
	for _, a := range attrs {
		upd = upd.Set(expression.Name(a), expression.Value(it[a]))
	}
	ex, err := expression.NewBuilder().WithCondition(exists()).WithUpdate(upd).Build()
	if err != nil {
		return false, internal(err, "building a write")
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
		Update: &types.Update{TableName: &s.table, Key: keyOf(it).av(), UpdateExpression: ex.Update(),
			ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}}}})
	var cancelled *types.TransactionCanceledException
	switch {
	case errors.As(err, &cancelled):
		return false, nil
	case err != nil:
		return false, wrap(err, "migrating an item")
	}
	return true, nil
}
