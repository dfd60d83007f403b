package testenv

import (
	"context"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// FaultAt adds middleware that may answer a call itself with an error.
// In the Initialize step it runs once per call (outside the SDK's retries);
// in the Finalize step, after the retryer, once per attempt.
func FaultAt(step string, fail func(op string, in any) error) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			if step == "attempt" {
				return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("fault", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					if err := fail(awsmiddleware.GetOperationName(ctx), nil); err != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, err
					}
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
			}
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("fault", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if err := fail(awsmiddleware.GetOperationName(ctx), in.Parameters); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	}
}
