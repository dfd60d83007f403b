package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestSizeLimitsAgainstDynamoDBLocal makes the calls that meet DynamoDB's
// limits of sizes on the embedded store and on DynamoDB Local (testenv.Tee
// compares every answer, error and cancellation reason): keys past 2,048
// and 1,024 bytes in the table (refused, in a transaction as a reason of
// their own) and in an index (refused when put), an item past 400 KB put
// and made by an update (in a transaction: a reason of its own), and a
// transaction past its 4 MB payload; and a set a DELETE empties, which is
// no attribute any more.
func TestSizeLimitsAgainstDynamoDBLocal(t *testing.T) {
	once := func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
	ref := testenv.Client(t, testenv.DynamoDBLocal, client.Options(once)...)
	emb := testenv.Embedded(t)
	tee := testenv.NewTee(t, emb.Client(client.Options(once)...), ref)
	table := fmt.Sprintf("limits-%d", time.Now().UnixNano())
	ctx := context.Background()
	if _, err := tee.CreateTable(ctx, dynamo.TableDefinition(table)); err != nil {
		t.Fatal(err)
	}
	tb := aws.String(table)
	long, longer := strings.Repeat("k", 1025), strings.Repeat("h", 2049)
	key := func(pk, sk string) map[string]av { return map[string]av{"PK": s(pk), "SK": s(sk)} }
	with := func(k map[string]av, kv ...string) map[string]av {
		for i := 0; i+1 < len(kv); i += 2 {
			k[kv[i]] = s(kv[i+1])
		}
		return k
	}
	set := func(v string) (*string, map[string]av) { return aws.String("SET v = :v"), map[string]av{":v": s(v)} }
	big, huge := strings.Repeat("y", 300*1024), strings.Repeat("z", 401*1024)

	// Keys.
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: key("a", long)})
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: key(longer, "a")})
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: with(key("a", "b"), "GSI1PK", "x", "GSI1SK", long)})
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: with(key("a", "c"), "GSI2PK", longer, "GSI2SK", "x")})
	u, v := set("x")
	_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("a", long), UpdateExpression: u, ExpressionAttributeValues: v})
	_, _ = tee.GetItem(ctx, &dynamodb.GetItemInput{TableName: tb, Key: key("a", long)})
	_, _ = tee.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
		{PutRequest: &types.PutRequest{Item: key("a", long)}}}}})
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: tb, Key: key("a", long), UpdateExpression: u, ExpressionAttributeValues: v}},
		{ConditionCheck: &types.ConditionCheck{TableName: tb, Key: key("none", "b"), ConditionExpression: aws.String("attribute_exists(PK)")}},
		{Put: &types.Put{TableName: tb, Item: key("b", "c")}}}})
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: tb, Item: with(key("a", "d"), "GSI1PK", "x", "GSI1SK", long)}}}})

	// Items.
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: with(key("big", "1"), "v", big)})
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: with(key("big", "2"), "v", huge)})
	u, v = set(big)
	_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("big", "1"), UpdateExpression: aws.String("SET w = :v"), ExpressionAttributeValues: v})
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: tb, Key: key("big", "1"), UpdateExpression: aws.String("SET w = :v"), ExpressionAttributeValues: v}},
		{Put: &types.Put{TableName: tb, Item: key("b", "d")}}}})
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: tb, Item: with(key("big", "3"), "v", huge)}}}})
	_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("big", "4"), UpdateExpression: u, ExpressionAttributeValues: v})

	// A transaction's payload: twelve puts of 390 KB, then twelve small
	// updates of the 300 KB item's neighbours (what is stored does not
	// count, what is sent does).
	var puts, small []types.TransactWriteItem
	for i := range 12 {
		puts = append(puts, types.TransactWriteItem{Put: &types.Put{TableName: tb, Item: with(key("p", fmt.Sprint(i)), "v", strings.Repeat("q", 390*1024))}})
		small = append(small, types.TransactWriteItem{Update: &types.Update{TableName: tb, Key: key("big", fmt.Sprint(i%4+1)),
			UpdateExpression: aws.String(fmt.Sprintf("SET s%d = :v", i)), ExpressionAttributeValues: map[string]av{":v": s("x")}}})
	}
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts})
	_, _ = tee.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: small[:4]})
	// A set emptied by DELETE is no attribute any more.
	_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: map[string]av{"PK": s("set"), "SK": s("1"), "ss": ss("a", "b")}})
	_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("set", "1"), UpdateExpression: aws.String("DELETE ss :ab"),
		ExpressionAttributeValues: map[string]av{":ab": ss("a", "b")}, ReturnValues: types.ReturnValueAllNew})
	_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("set", "1"), UpdateExpression: aws.String("ADD ss :ab"),
		ConditionExpression: aws.String("attribute_not_exists(ss)"), ExpressionAttributeValues: map[string]av{":ab": ss("a")}})
	sameTables(t, emb.Client(), ref, table)
	if tee.Diffs() > 0 {
		t.Errorf("%d answers differ", tee.Diffs())
	}
	t.Logf("%v calls compared", tee.Calls())
}
