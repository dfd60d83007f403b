package testenv

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Lag is a client of the embedded store whose eventually consistent reads
// of the items it holds (Hold) serve the version they had when held, as a
// replica of DynamoDB that has not caught up yet; strongly consistent
// reads, writes and index reads are the store's. CatchUp ends the lag.
type Lag struct {
	dynamo.API
	mu    sync.Mutex
	held  map[[2]string]map[string]types.AttributeValue // key → item (nil: absent when held)
	stale int
}

// NewLagging returns an Env on the embedded store through a Lag.
func NewLagging(tb testing.TB) (*Env, *Lag) {
	tb.Helper()
	calls := &Calls{}
	e := &Env{Calls: calls, Emb: Embedded(tb), cleanup: tb.Cleanup}
	e.Client = e.Emb.Client(client.Options(calls.Option)...)
	l := &Lag{API: e.Client, held: map[[2]string]map[string]types.AttributeValue{}}
	e.open(tb, l)
	return e, l
}

// Hold reads the item (pk, sk) strongly now and serves that version to
// the eventually consistent reads of it until CatchUp.
func (l *Lag) Hold(tb testing.TB, table, pk, sk string) {
	tb.Helper()
	out, err := l.API.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	if err != nil {
		tb.Fatal(err)
	}
	l.mu.Lock()
	l.held[[2]string{pk, sk}] = out.Item
	l.mu.Unlock()
}

// CatchUp ends the lag: every read sees the store.
func (l *Lag) CatchUp() {
	l.mu.Lock()
	clear(l.held)
	l.mu.Unlock()
}

// Stale is how many items the eventually consistent reads served from a
// held version.
func (l *Lag) Stale() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stale
}

func keyOf(it map[string]types.AttributeValue) [2]string {
	s := func(n string) string {
		if v, ok := it[n].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	return [2]string{s("PK"), s("SK")}
}

// lagged returns the held version of the item with key k, if held.
func (l *Lag) lagged(k [2]string) (map[string]types.AttributeValue, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it, ok := l.held[k]
	if ok {
		l.stale++
	}
	return it, ok
}

// GetItem implements dynamo.API.
func (l *Lag) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := l.API.GetItem(ctx, in, o...)
	if err == nil && !aws.ToBool(in.ConsistentRead) {
		if it, ok := l.lagged(keyOf(in.Key)); ok {
			out.Item = it
		}
	}
	return out, err
}

// BatchGetItem implements dynamo.API.
func (l *Lag) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := l.API.BatchGetItem(ctx, in, o...)
	if err != nil {
		return out, err
	}
	for table, ka := range in.RequestItems {
		if aws.ToBool(ka.ConsistentRead) {
			continue
		}
		got := map[[2]string]map[string]types.AttributeValue{}
		for _, it := range out.Responses[table] {
			got[keyOf(it)] = it
		}
		for _, k := range ka.Keys {
			if it, ok := l.lagged(keyOf(k)); ok {
				if it == nil {
					delete(got, keyOf(k))
				} else {
					got[keyOf(k)] = it
				}
			}
		}
		items := make([]map[string]types.AttributeValue, 0, len(got))
		for _, it := range got {
			items = append(items, it)
		}
		out.Responses[table] = items
	}
	return out, nil
}
