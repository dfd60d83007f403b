package client_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Every operation of the client whose input can ask for consumed capacity
// gets TOTAL from the Capacity option (a new one in the SDK fails here until
// RequestCapacity knows it); an explicit setting is left alone.
func TestRequestCapacityCoversEveryInput(t *testing.T) {
	c := reflect.TypeFor[*dynamodb.Client]()
	n := 0
	for i := range c.NumMethod() {
		m := c.Method(i)
		if m.Type.NumIn() != 4 || m.Type.In(2).Kind() != reflect.Pointer {
			continue
		}
		in := m.Type.In(2).Elem()
		f, ok := in.FieldByName("ReturnConsumedCapacity")
		if !ok {
			if v := reflect.New(in).Interface(); client.RequestCapacity(v) {
				t.Errorf("%s: RequestCapacity claims an input without the field", m.Name)
			}
			continue
		}
		n++
		v := reflect.New(in)
		if !client.RequestCapacity(v.Interface()) {
			t.Errorf("%s: RequestCapacity does not know %s", m.Name, in.Name())
			continue
		}
		if got := v.Elem().FieldByIndex(f.Index).Interface(); got != types.ReturnConsumedCapacityTotal {
			t.Errorf("%s: ReturnConsumedCapacity %v, want TOTAL", m.Name, got)
		}
	}
	if n < 10 {
		t.Fatalf("only %d inputs with ReturnConsumedCapacity found", n)
	}
	q := &dynamodb.QueryInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
	if client.RequestCapacity(q); q.ReturnConsumedCapacity != types.ReturnConsumedCapacityIndexes {
		t.Errorf("an explicit INDEXES became %v", q.ReturnConsumedCapacity)
	}
}

func TestConsumedUnits(t *testing.T) {
	cu := func(total, read, write float64) types.ConsumedCapacity {
		c := types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(total)}
		if read != 0 || write != 0 {
			c.ReadCapacityUnits, c.WriteCapacityUnits = aws.Float64(read), aws.Float64(write)
		}
		return c
	}
	one := func(c types.ConsumedCapacity) *types.ConsumedCapacity { return &c }
	for _, c := range []struct {
		name        string
		op          string
		out         any
		read, write float64
	}{
		{"a read's total is read units", "Query", &dynamodb.QueryOutput{ConsumedCapacity: one(cu(2.5, 0, 0))}, 2.5, 0},
		{"a write's total is write units", "PutItem", &dynamodb.PutItemOutput{ConsumedCapacity: one(cu(1, 0, 0))}, 0, 1},
		{"a split is taken as it is", "TransactWriteItems", &dynamodb.TransactWriteItemsOutput{
			ConsumedCapacity: []types.ConsumedCapacity{cu(6, 2, 4)}}, 2, 4},
		{"a batch's tables add up", "BatchGetItem", &dynamodb.BatchGetItemOutput{
			ConsumedCapacity: []types.ConsumedCapacity{cu(3, 0, 0), cu(1.5, 0, 0)}}, 4.5, 0},
		{"none reported", "GetItem", &dynamodb.GetItemOutput{}, 0, 0},
		{"no output", "GetItem", nil, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w := client.ConsumedUnits(c.op, c.out)
			if r != c.read || w != c.write {
				t.Errorf("got %v/%v, want %v/%v", r, w, c.read, c.write)
			}
		})
	}
}

func TestCallsCountsEachRecordAndItsCapacity(t *testing.T) {
	var c client.Calls
	c.ObserveCall(context.Background(), &client.Call{Operation: "Query", ReadUnits: 1.5})
	c.ObserveCall(context.Background(), &client.Call{Operation: "TransactWriteItems", ReadUnits: 0.5, WriteUnits: 4})
	c.ObserveCall(context.Background(), &client.Call{Operation: "Query"})
	if r, w := c.Capacity(); r != 2 || w != 4 {
		t.Errorf("capacity %v/%v, want 2/4", r, w)
	}
	if got := c.String(); got != "Query:2 TransactWriteItems:1" {
		t.Errorf("counts %q, want Query:2 TransactWriteItems:1", got)
	}
	c.Reset()
	if r, w := c.Capacity(); r != 0 || w != 0 || c.Total() != 0 {
		t.Errorf("after Reset: %v/%v, %d calls", r, w, c.Total())
	}
}

// A client given Record twice (the production options and a test's
// Calls.Option) still counts each call once.
func TestRecordTwiceCountsEachCallOnce(t *testing.T) {
	var calls client.Calls
	opts := append(client.Options(calls.Option), client.Record)
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1")}, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _ = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}},
		client.RetryPolicy(1, time.Millisecond))
	if got := calls.Get("GetItem"); got != 1 {
		t.Errorf("GetItem counted %d times, want 1", got)
	}
}
