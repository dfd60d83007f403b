package dynamo

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Queries of a pattern's partitions: the key conditions every read of a
// pattern uses, written once, and the reads of whole partitions.

// queryAll reads every item of one partition of a pattern (its sort keys
// beginning with the pattern's prefix), in ascending sort-key order.
func (s *Store) queryAll(ctx context.Context, p pattern, pk string) ([]item, error) {
	return s.queryAllBefore(ctx, p, pk, "", "reading a list")
}

// queryAllBefore is queryAll, and with before set reads only the items
// whose sort keys sort before it (a pattern with no prefix: a key
// condition has one sort-key term). what names the read in its error.
func (s *Store) queryAllBefore(ctx context.Context, p pattern, pk, before, what string) ([]item, error) {
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}}
	cond, names := keyEqual, p.pkName()
	switch {
	case before != "" && p.prefix != "":
		return nil, internal(errors.New("a key condition holds one sort-key term: a prefix or a bound"), what)
	case before != "":
		cond, names = keyBefore, p.names()
		values[":hi"] = &types.AttributeValueMemberS{Value: before}
	case p.prefix != "":
		cond, names = keyBeginsWith, p.names()
		values[":prefix"] = &types.AttributeValueMemberS{Value: p.prefix}
	}
	in := &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}
	if p.index != "" {
		in.IndexName = aws.String(p.index)
	} else {
		in.ConsistentRead = aws.Bool(strong(ctx))
	}
	var all []item
	q := dynamodb.NewQueryPaginator(s.db, in)
	for q.HasMorePages() {
		res, err := q.NextPage(ctx)
		if err != nil {
			return nil, wrap(err, what)
		}
		all = append(all, res.Items...)
	}
	return all, nil
}

// Key conditions: the same four texts for every pattern, written once
// rather than through the expression builder on every call. The partition
// and sort key attributes are the names #pk and #sk (keySchema.names), the
// values :pk and :lo/:hi or :prefix.
const (
	keyBetween    = "#pk = :pk AND #sk BETWEEN :lo AND :hi"
	keyBeginsWith = "#pk = :pk AND begins_with(#sk, :prefix)"
	keyBefore     = "#pk = :pk AND #sk < :hi"
	keyEqual      = "#pk = :pk"
)

// The key conditions' attribute names of each key schema, with and
// without the sort key (a Query must use every name it sends): one map
// each, shared by every Query (the SDK only reads them).
var keyNames, pkNames = map[keySchema]map[string]string{}, map[keySchema]map[string]string{}

func init() {
	for _, k := range []keySchema{onTable, onGSI1, onGSI2, onGSI3} {
		keyNames[k] = map[string]string{"#pk": k.pkAttr, "#sk": k.skAttr}
		pkNames[k] = map[string]string{"#pk": k.pkAttr}
	}
}

// names returns the names #pk and #sk of the key schema.
func (k keySchema) names() map[string]string {
	if n, ok := keyNames[k]; ok {
		return n
	}
	return map[string]string{"#pk": k.pkAttr, "#sk": k.skAttr}
}

// pkName returns the name #pk of the key schema.
func (k keySchema) pkName() map[string]string {
	if n, ok := pkNames[k]; ok {
		return n
	}
	return map[string]string{"#pk": k.pkAttr}
}

// queryAllAs is queryAll decoding each item as a T.
func queryAllAs[T any](ctx context.Context, s *Store, p pattern, pk string) ([]T, error) {
	items, err := s.queryAll(ctx, p, pk)
	if err != nil {
		return nil, err
	}
	return decodeAll[T](items)
}
