package testenv

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// noteIndexKeys keeps the key attributes of the indexes of a table created
// through the Tee, for tiesInOrder.
func (t *Tee) noteIndexKeys(in *dynamodb.CreateTableInput) {
	for _, g := range in.GlobalSecondaryIndexes {
		var k [2]string
		for _, e := range g.KeySchema {
			if e.KeyType == types.KeyTypeHash {
				k[0] = aws.ToString(e.AttributeName)
			} else {
				k[1] = aws.ToString(e.AttributeName)
			}
		}
		t.indexKeys.Store(aws.ToString(in.TableName)+"/"+aws.ToString(g.IndexName), k)
	}
}

// tiesInOrder returns items with each run of equal index keys (k: hash,
// range) in one order, their canonical JSON's: DynamoDB leaves the order
// of equal index keys open, and each store keeps its own (the embedded
// store's by table key; DynamoDB Local's, neither insertion nor key
// order). Only a run inside a page is compared so; a page that ends
// inside one may differ.
func tiesInOrder(items []map[string]types.AttributeValue, k [2]string) []map[string]types.AttributeValue {
	out := slices.Clone(items)
	key := func(it map[string]types.AttributeValue) string { return Canon(it[k[0]]) + "\x00" + Canon(it[k[1]]) }
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && key(out[j]) == key(out[i]) {
			j++
		}
		slices.SortFunc(out[i:j], func(x, y map[string]types.AttributeValue) int { return strings.Compare(CanonItem(x), CanonItem(y)) })
		i = j
	}
	return out
}
