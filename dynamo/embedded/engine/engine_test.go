package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// call makes one call on s and decodes its answer into a map; err is the
// call's error code ("" for none).
func call(t *testing.T, s *Server, op, body string) (out map[string]any, code string) {
	t.Helper()
	b, err := s.Call(op, []byte(body))
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("%s: %v", op, err)
		}
		return nil, e.Code
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s answered %s: %v", op, b, err)
	}
	return out, ""
}

func mustCall(t *testing.T, s *Server, op, body string) map[string]any {
	t.Helper()
	out, code := call(t, s, op, body)
	if code != "" {
		t.Fatalf("%s %s: %s", op, body, code)
	}
	return out
}

// newTable returns a server with table "t" as the project defines it: PK,
// SK and GSI1 on GSI1PK, GSI1SK.
func newTable(t *testing.T) *Server {
	t.Helper()
	s := NewServer()
	mustCall(t, s, "CreateTable", `{"TableName":"t","AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"},{"AttributeName":"SK","AttributeType":"S"},
		{"AttributeName":"G","AttributeType":"S"},{"AttributeName":"GS","AttributeType":"S"}],
		"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],
		"GlobalSecondaryIndexes":[{"IndexName":"GSI1","KeySchema":[{"AttributeName":"G","KeyType":"HASH"},{"AttributeName":"GS","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
		"BillingMode":"PAY_PER_REQUEST"}`)
	return s
}

func put(t *testing.T, s *Server, item string) {
	t.Helper()
	mustCall(t, s, "PutItem", `{"TableName":"t","Item":`+item+`}`)
}

// sks returns the SK of each item of a Query's answer.
func sks(out map[string]any) string {
	var ks []string
	for _, it := range out["Items"].([]any) {
		ks = append(ks, it.(map[string]any)["SK"].(map[string]any)["S"].(string))
	}
	return strings.Join(ks, ",")
}

// A Query visits the items it returns and at most one more on each side,
// however many items the table holds: no walk of a table or partition.
func TestAQueryVisitsWhatItReturns(t *testing.T) {
	s := newTable(t)
	for p := range 200 { // 200 partitions of 200 items, on the table and GSI1
		for from := 0; from < 200; from += 25 {
			var reqs []string
			for i := from; i < from+25; i++ {
				reqs = append(reqs, fmt.Sprintf(`{"PutRequest":{"Item":{"PK":{"S":"p%03d"},"SK":{"S":"s%03d"},"G":{"S":"g%d"},"GS":{"S":"p%03d#%03d"}}}}`, p, i, p%2, p, i))
			}
			mustCall(t, s, "BatchWriteItem", `{"RequestItems":{"t":[`+strings.Join(reqs, ",")+`]}}`)
		}
	}
	cases := []struct {
		name, in string
		want     int
	}{
		{"a partition's first page", `"KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"p100"}},"Limit":10`, 10},
		{"a page backwards", `"KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"p100"}},"Limit":10,"ScanIndexForward":false`, 10},
		{"BETWEEN in the middle", `"KeyConditionExpression":"PK = :p AND SK BETWEEN :a AND :b","ExpressionAttributeValues":{":p":{"S":"p007"},":a":{"S":"s100"},":b":{"S":"s120"}}`, 21},
		{"after a start key", `"KeyConditionExpression":"PK = :p AND begins_with(SK, :b)","ExpressionAttributeValues":{":p":{"S":"p199"},":b":{"S":"s1"}},"Limit":5,"ExclusiveStartKey":{"PK":{"S":"p199"},"SK":{"S":"s150"}}`, 5},
		{"an index partition", `"IndexName":"GSI1","KeyConditionExpression":"G = :g AND GS > :x","ExpressionAttributeValues":{":g":{"S":"g1"},":x":{"S":"p101#110"}},"Limit":20`, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := visits.Load()
			out := mustCall(t, s, "Query", `{"TableName":"t",`+c.in+`}`)
			n := int(visits.Load() - before)
			if got := len(out["Items"].([]any)); got != c.want {
				t.Fatalf("%d items, want %d", got, c.want)
			}
			if n > c.want+2 {
				t.Errorf("visited %d items of %d for %d", n, 200*200, c.want)
			}
		})
	}
}

// Reads hold the engine's lock shared: one waits for no other, while a
// write waits for the reads in progress.
func TestReadersRunSideBySide(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"a"},"SK":{"S":"1"}}`)
	s.e.mu.RLock() // a read in progress
	done := make(chan string, 2)
	go func() {
		_, code := call(t, s, "GetItem", `{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}}}`)
		done <- "read" + code
	}()
	if got := <-done; got != "read" {
		t.Fatalf("a read beside another: %s", got)
	}
	go func() {
		_, code := call(t, s, "PutItem", `{"TableName":"t","Item":{"PK":{"S":"a"},"SK":{"S":"2"}}}`)
		done <- "write" + code
	}()
	select {
	case got := <-done:
		t.Fatalf("a write ran beside a read: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	s.e.mu.RUnlock()
	if got := <-done; got != "write" {
		t.Fatalf("the write after the read: %s", got)
	}
}

// An item that loses its index keys leaves the index, and one that gains
// them joins it (the embedded store used to keep stale entries); an empty
// map and a top-level REMOVE behave as on DynamoDB.
func TestIndexesFollowTheirItems(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"a"},"SK":{"S":"1"},"G":{"S":"g"},"GS":{"S":"x1"},"m":{"M":{}}}`)
	put(t, s, `{"PK":{"S":"a"},"SK":{"S":"2"},"G":{"S":"g"},"GS":{"S":"x2"}}`)
	q := `{"TableName":"t","IndexName":"GSI1","KeyConditionExpression":"G = :g","ExpressionAttributeValues":{":g":{"S":"g"}}}`
	if got := sks(mustCall(t, s, "Query", q)); got != "1,2" {
		t.Fatalf("index holds %s, want 1,2", got)
	}
	mustCall(t, s, "UpdateItem", `{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}},"UpdateExpression":"REMOVE G, m"}`)
	if got := sks(mustCall(t, s, "Query", q)); got != "2" {
		t.Fatalf("after REMOVE G the index holds %s, want 2", got)
	}
	it := mustCall(t, s, "GetItem", `{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}}}`)["Item"].(map[string]any)
	if _, ok := it["m"]; ok {
		t.Fatalf("REMOVE m left %v", it)
	}
	mustCall(t, s, "UpdateItem", `{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}},"UpdateExpression":"SET G = :g, GS = :s","ExpressionAttributeValues":{":g":{"S":"g"},":s":{"S":"x3"}}}`)
	if got := sks(mustCall(t, s, "Query", q)); got != "2,1" {
		t.Fatalf("after SET G the index holds %s, want 2,1 (x2 before x3)", got)
	}
	put(t, s, `{"PK":{"S":"b"},"SK":{"S":"1"},"m":{"M":{}}}`)
	if got := sks(mustCall(t, s, "Query", `{"TableName":"t","KeyConditionExpression":"PK = :p","FilterExpression":"attribute_exists(m)","ExpressionAttributeValues":{":p":{"S":"b"}}}`)); got != "1" {
		t.Fatalf("a partition holding an empty map: %s", got)
	}
}

// A transaction is all or nothing, says why it was cancelled item by item,
// and a client request token makes a retry answer without acting again.
func TestTransactions(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"a"},"SK":{"S":"1"},"n":{"N":"1"}}`)
	tx := func(token, cond string) string {
		return `{"ClientRequestToken":"` + token + `","TransactItems":[
			{"Update":{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}},
			{"Put":{"TableName":"t","Item":{"PK":{"S":"a"},"SK":{"S":"2"}},"ConditionExpression":"` + cond + `"}}]}`
	}
	n := func() string {
		it := mustCall(t, s, "GetItem", `{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"1"}}}`)["Item"].(map[string]any)
		return it["n"].(map[string]any)["N"].(string)
	}
	_, err := s.Call("TransactWriteItems", []byte(tx("t1", "attribute_exists(PK)")))
	e, ok := err.(*Error)
	if !ok || e.Code != "TransactionCanceledException" || len(e.Reasons) != 2 || e.Reasons[0].Code != "None" || e.Reasons[1].Code != "ConditionalCheckFailed" {
		t.Fatalf("a failed condition: %v %+v", err, e)
	}
	if n() != "1" {
		t.Fatalf("a cancelled transaction changed n to %s", n())
	}
	mustCall(t, s, "TransactWriteItems", tx("t2", "attribute_not_exists(PK)"))
	mustCall(t, s, "TransactWriteItems", tx("t2", "attribute_not_exists(PK)")) // a retry: answered, not applied
	if n() != "2" {
		t.Fatalf("a transaction and its retry made n %s, want 2", n())
	}
	if _, code := call(t, s, "TransactWriteItems", tx("t2", "attribute_exists(PK)")); code != "IdempotentParameterMismatchException" {
		t.Fatalf("the token with another request: %q", code)
	}
	s.e.now = func() time.Time { return time.Now().Add(tokenLife + time.Minute) }
	if _, code := call(t, s, "TransactWriteItems", tx("t2", "attribute_not_exists(PK)")); code != "TransactionCanceledException" {
		t.Fatalf("an expired token is a new request: %q", code)
	}
}

// The items of a batch read under a 16 MB answer, and a Query stops after
// the item that reaches 1 MB.
func TestPagesStopAtTheirSize(t *testing.T) {
	s := newTable(t)
	big := strings.Repeat("x", 300_000)
	for i := range 5 {
		put(t, s, fmt.Sprintf(`{"PK":{"S":"a"},"SK":{"S":"%d"},"x":{"S":"%s"}}`, i, big))
	}
	out := mustCall(t, s, "Query", `{"TableName":"t","KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"a"}}}`)
	if got, lek := sks(out), out["LastEvaluatedKey"]; got != "0,1,2,3" || lek == nil {
		t.Fatalf("a Query of 5 items of 300 KB answered %s, LastEvaluatedKey %v; want 0-3 and a key", got, lek)
	}
	if _, code := call(t, s, "PutItem", `{"TableName":"t","Item":{"PK":{"S":"a"},"SK":{"S":"x"},"x":{"S":"`+strings.Repeat("x", 410_000)+`"}}}`); code != "ValidationException" {
		t.Fatalf("an item past 400 KB: %q", code)
	}
}

// A Query runs while other Queries and writes run (the race detector
// checks the locking).
func TestConcurrentCalls(t *testing.T) {
	s := newTable(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				put(t, s, fmt.Sprintf(`{"PK":{"S":"p%d"},"SK":{"S":"%03d"}}`, w, i))
				mustCall(t, s, "Query", fmt.Sprintf(`{"TableName":"t","KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"p%d"}},"Limit":5,"ScanIndexForward":false}`, w))
			}
		}()
	}
	wg.Wait()
	out := mustCall(t, s, "DescribeTable", `{"TableName":"t"}`)
	if n := out["Table"].(map[string]any)["ItemCount"].(float64); n != 400 {
		t.Fatalf("ItemCount %v, want 400", n)
	}
}
