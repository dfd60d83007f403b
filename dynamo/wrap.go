package dynamo

import (
	"context"
	"errors"
	"net"
	"strings"

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

// errTooLarge is the message of ETOOLARGE.
const errTooLarge = "this change would make a stored item larger than 400 KB or a write larger than 4 MB, which DynamoDB refuses; nothing was written"

// tooLarge reports whether DynamoDB's error (its code and message, or a
// transaction's cancellation reason) refuses an item or a request as too
// large: "Item size has exceeded the maximum allowed size", "Item size to
// update has exceeded …", "Transaction request cannot be larger than 4 MB".
func tooLarge(code, message string) bool {
	if code != "ValidationException" && code != "ValidationError" {
		return false
	}
	m := strings.ToLower(message)
	return strings.Contains(m, "size") && strings.Contains(m, "exceed") || strings.Contains(m, "cannot be larger than")
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
		if tooLarge(apiErr.ErrorCode(), apiErr.ErrorMessage()) {
			return &domain.Error{Code: domain.ETOOLARGE, Message: errTooLarge, Err: err}
		}
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
