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

// TestIncludeProjectionAgainstDynamoDBLocal: an index that projects
// INCLUDE (the table's GSI3: the keys and authorId, body, createdAt)
// answers with its entries only, on the embedded store as on DynamoDB
// Local: the same items (no attribute it does not project), pages and
// LastEvaluatedKeys, a Query billed by the entries' size (not the items'),
// the description's projection, and the same refusals of Select
// ALL_ATTRIBUTES and of a filter on an attribute it does not project.
// (GSI3 is sorted by the item's PK: comments of one task tie there, in
// an order each store keeps its own way, DynamoDB Local not by SK; the
// store sorts a thread it reads. Here each comment is of its own task.)
func TestIncludeProjectionAgainstDynamoDBLocal(t *testing.T) {
	once := func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
	ref := testenv.Client(t, testenv.DynamoDBLocal, client.Options(once)...)
	emb := testenv.Embedded(t).Client(client.Options(once)...)
	tee := testenv.NewTee(t, emb, ref)
	table := fmt.Sprintf("include-%d", time.Now().UnixNano())
	ctx := context.Background()
	if _, err := tee.CreateTable(ctx, dynamo.TableDefinition(table)); err != nil {
		t.Fatal(err)
	}
	// 12 comments of 12 tasks of a project, each with 3 KB of an
	// attribute GSI3 does not project; one comment outside GSI3.
	for i := range 13 {
		it := map[string]av{"PK": s(fmt.Sprintf("TASK#t%02d", i)), "SK": s(fmt.Sprintf("COMMENT#c%02d", i)),
			"authorId": s("alice"), "body": s(fmt.Sprintf("comment %d", i)), "createdAt": s("2026-12-05T14:41:05Z"),
			"type": s("COMMENT"), "notes": s(strings.Repeat("x", 3000)), "GSI3PK": s("COMMENTS#p1")}
		if i == 12 {
			delete(it, "GSI3PK")
		}
		if _, err := tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	query := func(from string, limit int32, start map[string]av) *dynamodb.QueryInput {
		in := &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("GSI3"),
			KeyConditionExpression:    aws.String("GSI3PK = :pk AND PK >= :t"),
			ExpressionAttributeValues: map[string]av{":pk": s("COMMENTS#p1"), ":t": s(from)},
			ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal, ExclusiveStartKey: start}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		return in
	}
	// The tasks' threads from three places, in pages of 5: compared by
	// the Tee (items, counts, LastEvaluatedKey); each entry without the
	// 3 KB.
	for _, task := range []string{"TASK#t00", "TASK#t05", "TASK#t11"} {
		var start map[string]av
		for range 5 {
			out, err := tee.Query(ctx, query(task, 5, start))
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range out.Items {
				if it["notes"] != nil || it["type"] != nil || it["body"] == nil {
					t.Fatalf("an entry of GSI3 holds %v, want its keys and authorId, body, createdAt", testenv.CanonItem(it))
				}
			}
			if start = out.LastEvaluatedKey; start == nil {
				break
			}
		}
	}
	// Billed by the entries' size: 12 entries of about 130 bytes, half a
	// unit, where the items (37 KB) would cost 5.
	units := func(c *dynamodb.Client) float64 {
		out, err := c.Query(ctx, query("TASK#", 0, nil))
		if err != nil || out.ConsumedCapacity == nil {
			t.Fatalf("%v %+v", err, out)
		}
		if len(out.Items) != 12 {
			t.Fatalf("%d items, want 12", len(out.Items))
		}
		return aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
	}
	if a, b := units(emb), units(ref); a != 0.5 || b != 0.5 {
		t.Errorf("a Query of 12 entries consumed %v units on the embedded store, %v on DynamoDB Local, want 0.5 on both", a, b)
	}
	// The description of the index.
	for name, c := range map[string]*dynamodb.Client{"embedded": emb, "DynamoDB Local": ref} {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == "GSI3" {
				if p := g.Projection; p.ProjectionType != types.ProjectionTypeInclude || strings.Join(p.NonKeyAttributes, " ") != "authorId body createdAt" {
					t.Errorf("%s describes GSI3's projection as %+v", name, p)
				}
			}
		}
	}
	// The refusals, the same on both (the Tee compares error codes).
	all := query("TASK#", 0, nil)
	all.Select = types.SelectAllAttributes
	if _, err := tee.Query(ctx, all); err == nil {
		t.Error("Select ALL_ATTRIBUTES on an INCLUDE index: no error")
	}
	filtered := query("TASK#", 0, nil)
	filtered.FilterExpression, filtered.ExpressionAttributeNames = aws.String("#n <> :x AND body <> :x"), map[string]string{"#n": "notes"}
	filtered.ExpressionAttributeValues[":x"] = s("")
	if _, err := tee.Query(ctx, filtered); err == nil {
		t.Error("a filter on an attribute GSI3 does not project: no error")
	}
	filtered.FilterExpression, filtered.ExpressionAttributeNames = aws.String("body <> :x"), nil
	if out, err := tee.Query(ctx, filtered); err != nil || len(out.Items) != 12 {
		t.Errorf("a filter on a projected attribute: %v", err)
	}
	if d := tee.Diffs(); d > 0 {
		t.Errorf("%d answers differ", d)
	}
}
