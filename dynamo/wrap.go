package dynamo

import (
	"context"
	"errors"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// internal wraps an error of the store's own making (building an expression,
// decoding an item) as EINTERNAL; an *Error passes through.
func internal(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *domain.Error
	if errors.As(err, &e) {
		return err
	}
	return &domain.Error{Code: domain.EINTERNAL, Message: what, Err: err}
}

// wrap turns an SDK error into a coded error: throttling, server errors,
// exhausted retries and unreachable endpoints become EUNAVAILABLE, and so
// does the embedded store's answer to a write it could not keep
// (embedded.CodeReadOnly: not applied, not retried by the SDK).
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *domain.Error
	if errors.As(err, &e) {
		return err
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case embedded.CodeReadOnly:
			return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store takes no writes for now; retry later", Err: err}
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"InternalServerError", "ServiceUnavailable", "LimitExceededException":
			return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store is busy or unavailable; retry later", Err: err}
		}
	}
	var maxErr *retry.MaxAttemptsError
	var quotaErr ratelimit.QuotaExceededError
	var netErr net.Error
	if errors.As(err, &maxErr) || errors.As(err, &quotaErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the data store is busy or unavailable; retry later", Err: err}
	}
	return &domain.Error{Code: domain.EINTERNAL, Message: what, Err: err}
}
