package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkJournaledWrite measures a write call through the SDK to a
// journaled store: a PutItem of one item and a TransactWriteItems of ten,
// with the journal flushed per write (commit) and not (off).
func BenchmarkJournaledWrite(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, items := range []int{1, 10} {
			b.Run(fmt.Sprintf("sync=%v/items=%d", sync, items), func(b *testing.B) {
				e, _ := mustJournaledStore(b, sync, nil)
				db := e.Client()
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					var err error
					if items == 1 {
						_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: benchItem(i % 100)})
					} else {
						var tx []types.TransactWriteItem
						for k := range items {
							tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: aws.String("t"), Item: benchItem((i*items + k) % 100)}})
						}
						_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func benchItem(n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK":    &types.AttributeValueMemberS{Value: fmt.Sprintf("item#%d", n)},
		"title": &types.AttributeValueMemberS{Value: "a task of a benchmark, with a title of some length"},
		"n":     &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
	}
}

// mustTableStore starts a store with a table t (key PK), no journal.
func mustTableStore(tb testing.TB) *Store {
	tb.Helper()
	e, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	if _, err := e.call("CreateTable", map[string]any{"TableName": "t",
		"AttributeDefinitions": []map[string]string{{"AttributeName": "PK", "AttributeType": "S"}},
		"KeySchema":            []map[string]string{{"AttributeName": "PK", "KeyType": "HASH"}},
		"BillingMode":          "PAY_PER_REQUEST"}); err != nil {
		tb.Fatal(err)
	}
	return e
}

// mustJournaledStore starts a store with a table t (key PK) and a journal
// in a new directory, and returns the journal's prefix.
func mustJournaledStore(tb testing.TB, sync bool, log *slog.Logger) (*Store, string) {
	tb.Helper()
	e := mustTableStore(tb)
	prefix := filepath.Join(tb.TempDir(), "t.journal")
	if err := e.StartJournal(prefix, sync, log); err != nil {
		tb.Fatal(err)
	}
	return e, prefix
}
