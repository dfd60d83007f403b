package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Load stores items as PutItems one after another would: over the items
// with their keys (the last of several with one key wins), in the table
// and its index, and refuses the whole load for one item that is not
// valid.
func TestLoadIsPutItemsInBulk(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"1"},"G":{"S":"old"},"GS":{"S":"1"}}`)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"9"},"v":{"S":"kept"}}`)
	var items [][]byte
	for i := 5; i >= 1; i-- { // out of order
		items = append(items, fmt.Appendf(nil, `{"PK":{"S":"p"},"SK":{"S":"%d"},"G":{"S":"g"},"GS":{"S":"%d"}}`, i, i))
	}
	items = append(items, []byte(`{"PK":{"S":"p"},"SK":{"S":"3"},"G":{"S":"g"},"GS":{"S":"3"},"v":{"S":"last"}}`))
	if err := s.Engine().Load("t", items); err != nil {
		t.Fatal(err)
	}
	if got := sks(mustCall(t, s, "Query", `{"TableName":"t","KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"p"}}}`)); got != "1,2,3,4,5,9" {
		t.Fatalf("the table holds %s; want 1,2,3,4,5,9", got)
	}
	if got := sks(mustCall(t, s, "Query", `{"TableName":"t","IndexName":"GSI1","KeyConditionExpression":"G = :g","ExpressionAttributeValues":{":g":{"S":"g"}}}`)); got != "1,2,3,4,5" {
		t.Fatalf("the index holds %s; want 1,2,3,4,5", got)
	}
	if got := mustCall(t, s, "Query", `{"TableName":"t","IndexName":"GSI1","KeyConditionExpression":"G = :g","ExpressionAttributeValues":{":g":{"S":"old"}}}`); len(got["Items"].([]any)) != 0 {
		t.Fatalf("the replaced item is still in the index under its old key: %v", got)
	}
	if got := mustCall(t, s, "GetItem", `{"TableName":"t","Key":{"PK":{"S":"p"},"SK":{"S":"3"}}}`); !strings.Contains(fmt.Sprint(got), "last") {
		t.Fatalf("item 3 is %v; want the last one loaded", got)
	}
	if n, err := s.Engine().ItemCount("t"); n != 6 || err != nil {
		t.Fatalf("ItemCount = %d, %v; want 6", n, err)
	}

	bad := [][]byte{[]byte(`{"PK":{"S":"q"},"SK":{"S":"1"}}`), []byte(`{"PK":{"S":"q"}}`)}
	var le *LoadError
	if err := s.Engine().Load("t", bad); !errors.As(err, &le) || le.N != 1 || !strings.Contains(err.Error(), "Missing the key SK") {
		t.Fatalf("Load of an item without its SK = %v; want a LoadError for item 1", err)
	}
	if got := mustCall(t, s, "GetItem", `{"TableName":"t","Key":{"PK":{"S":"q"},"SK":{"S":"1"}}}`); got["Item"] != nil {
		t.Fatal("a refused load stored an item")
	}
}

// Set is a journal record's image: an item put over its key, or no item.
func TestSetPutsAnImageOrDeletes(t *testing.T) {
	s := newTable(t)
	e := s.Engine()
	if err := e.Set("t", nil, []byte(`{"PK":{"S":"p"},"SK":{"S":"1"},"G":{"S":"g"},"GS":{"S":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.Set("t", nil, []byte(`{"PK":{"S":"p"},"SK":{"S":"1"},"v":{"N":"2"}}`)); err != nil {
		t.Fatal(err)
	}
	if got := mustCall(t, s, "Query", `{"TableName":"t","IndexName":"GSI1","KeyConditionExpression":"G = :g","ExpressionAttributeValues":{":g":{"S":"g"}}}`); len(got["Items"].([]any)) != 0 {
		t.Fatal("the image without G left the item in the index")
	}
	if err := e.Set("t", []byte(`{"PK":{"S":"p"},"SK":{"S":"1"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.ItemCount("t"); n != 0 {
		t.Fatalf("%d items after the delete", n)
	}
}

// A view is the table when it was taken: writes after it change the
// table, not the view.
func TestAViewIsOnePointInTime(t *testing.T) {
	s := newTable(t)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"1"},"v":{"S":"before"}}`)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"2"}}`)
	v, err := s.Engine().View("t")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"1"},"v":{"S":"after"}}`)
	put(t, s, `{"PK":{"S":"p"},"SK":{"S":"3"}}`)
	mustCall(t, s, "DeleteItem", `{"TableName":"t","Key":{"PK":{"S":"p"},"SK":{"S":"2"}}}`)
	var got []string
	for raw := range v.Items {
		got = append(got, string(raw))
	}
	want := []string{`{"PK":{"S":"p"},"SK":{"S":"1"},"v":{"S":"before"}}`, `{"PK":{"S":"p"},"SK":{"S":"2"}}`}
	if v.Len() != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the view holds %d items:\n%s\nwant:\n%s", v.Len(), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
