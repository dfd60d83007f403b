package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// An index created KEYS_ONLY (on a table that holds items, UpdateTable)
// answers the table's and its own keys only, and is billed by them; a
// projection DynamoDB refuses is refused (INCLUDE without attributes, ALL
// with some, an unknown type). (INCLUDE on the project's table:
// TestIncludeProjectionAgainstDynamoDBLocal.)
func TestIndexProjectionsKeepTheirAttributes(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"a"},"K":{"S":"k"},"big":{"S":"`+strings.Repeat("x", 9000)+`"},"v":{"N":"1"}}`)
	mustCall(t, s, "UpdateTable", `{"TableName":"t","AttributeDefinitions":[{"AttributeName":"K","AttributeType":"S"},{"AttributeName":"SK","AttributeType":"S"}],
		"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"KO","KeySchema":[{"AttributeName":"K","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],
		"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}`)
	out := mustCall(t, s, "Query", `{"TableName":"t","IndexName":"KO","KeyConditionExpression":"K = :k","ExpressionAttributeValues":{":k":{"S":"k"}},"ReturnConsumedCapacity":"TOTAL"}`)
	items := out["Items"].([]any)
	if len(items) != 1 || len(items[0].(map[string]any)) != 3 {
		t.Fatalf("a KEYS_ONLY entry: %v, want PK, SK and K", items)
	}
	if u := out["ConsumedCapacity"].(map[string]any)["CapacityUnits"]; u != 0.5 {
		t.Errorf("a Query of one KEYS_ONLY entry consumed %v units, want 0.5 (the 9 KB item: 1.5)", u)
	}
	desc := mustCall(t, s, "DescribeTable", `{"TableName":"t"}`)
	if !strings.Contains(mustJSON(t, desc), `"IndexName":"KO","IndexStatus":"ACTIVE","ItemCount":1,"KeySchema":[{"AttributeName":"K","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}`) {
		t.Errorf("the index's description: %s", mustJSON(t, desc))
	}
	for _, p := range []string{`{"ProjectionType":"INCLUDE"}`, `{"ProjectionType":"ALL","NonKeyAttributes":["v"]}`, `{"ProjectionType":"SOME"}`, `{}`} {
		_, code := call(t, s, "UpdateTable", `{"TableName":"t","AttributeDefinitions":[{"AttributeName":"K","AttributeType":"S"}],
			"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"X","KeySchema":[{"AttributeName":"K","KeyType":"HASH"}],"Projection":`+p+`}}]}`)
		if code != "ValidationException" {
			t.Errorf("projection %s: %q, want ValidationException", p, code)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
