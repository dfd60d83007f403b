package dynamo

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// BenchmarkCapacityMiddleware is what the Capacity option adds to every
// DynamoDB call without an observer (telemetry off): setting TOTAL, reading
// the consumed units back, adding them to the request's Calls. Run:
//
//	go test ./dynamo -run '^$' -bench CapacityMiddleware -benchmem
func BenchmarkCapacityMiddleware(b *testing.B) {
	ctx := awsmiddleware.SetOperationName(WithCalls(context.Background(), &Calls{}), "Query")
	out := &dynamodb.QueryOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}
	next := middleware.InitializeHandlerFunc(func(context.Context, middleware.InitializeInput) (middleware.InitializeOutput, middleware.Metadata, error) {
		return middleware.InitializeOutput{Result: out}, middleware.Metadata{}, nil
	})
	in := middleware.InitializeInput{Parameters: &dynamodb.QueryInput{}}
	for b.Loop() {
		_, _, _ = capacityMiddleware(ctx, in, next)
	}
	if r, _ := CallsFrom(ctx).Capacity(); r == 0 {
		b.Fatal("no capacity counted")
	}
}
