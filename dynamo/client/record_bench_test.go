package client

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// BenchmarkRecord is what the Record option adds to every DynamoDB call of
// an operation with telemetry off (its Calls the one observer): setting
// TOTAL, describing the call, counting it and its consumed units. Run:
//
//	go test ./dynamo/client -run '^$' -bench Record -benchmem
func BenchmarkRecord(b *testing.B) {
	ctx := awsmiddleware.SetOperationName(WithObserver(context.Background(), &Calls{}), "Query")
	out := &dynamodb.QueryOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}
	next := middleware.InitializeHandlerFunc(func(context.Context, middleware.InitializeInput) (middleware.InitializeOutput, middleware.Metadata, error) {
		return middleware.InitializeOutput{Result: out}, middleware.Metadata{}, nil
	})
	in := middleware.InitializeInput{Parameters: &dynamodb.QueryInput{}}
	for b.Loop() {
		_, _, _ = record(ctx, in, next)
	}
	if r, _ := CallsFrom(ctx).Capacity(); r == 0 {
		b.Fatal("no capacity counted")
	}
}

type seen struct{ calls []Call }

func (s *seen) ObserveCall(_ context.Context, c *Call) { s.calls = append(s.calls, *c) }

// One record per call reaches every observer of the context, each told the
// same thing: the counter and telemetry read one description of the call.
func TestRecordHandsOneRecordToEveryObserver(t *testing.T) {
	counter, other := &Calls{}, &seen{}
	ctx := WithObserver(WithObserver(context.Background(), counter), other)
	ctx = awsmiddleware.SetOperationName(ctx, "Query")
	out := &dynamodb.QueryOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}
	next := middleware.InitializeHandlerFunc(func(context.Context, middleware.InitializeInput) (middleware.InitializeOutput, middleware.Metadata, error) {
		return middleware.InitializeOutput{Result: out}, middleware.Metadata{}, nil
	})
	in := &dynamodb.QueryInput{TableName: aws.String("t"), IndexName: aws.String("GSI1")}
	if _, _, err := record(ctx, middleware.InitializeInput{Parameters: in}, next); err != nil {
		t.Fatal(err)
	}
	if in.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		t.Errorf("ReturnConsumedCapacity %q, want TOTAL", in.ReturnConsumedCapacity)
	}
	if counter.Get("Query") != 1 {
		t.Errorf("counter: %s, want Query:1", counter)
	}
	if r, _ := counter.Capacity(); r != 0.5 {
		t.Errorf("counter read units %v, want 0.5", r)
	}
	if len(other.calls) != 1 {
		t.Fatalf("other observer saw %d calls, want 1", len(other.calls))
	}
	if c := other.calls[0]; c.Operation != "Query" || c.Table != "t" || c.Index != "GSI1" || c.ReadUnits != 0.5 || c.Attempts != 1 || c.End.Before(c.Start) {
		t.Errorf("record %+v", c)
	}
	if CallsFrom(ctx) != counter {
		t.Error("CallsFrom does not find the counter among the observers")
	}
}
