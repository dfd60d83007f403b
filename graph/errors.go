package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The contract's error codes, in extensions.code.
const (
	CodeUnauthenticated    = "UNAUTHENTICATED"
	CodeForbidden          = "FORBIDDEN"
	CodeNotFound           = "NOT_FOUND"
	CodeBadUserInput       = "BAD_USER_INPUT"
	CodeConflict           = "CONFLICT"
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
	CodeInternal           = "INTERNAL_SERVER_ERROR"
	CodeComplexity         = "COMPLEXITY_LIMIT_EXCEEDED"
	CodeSyncTokenExpired   = "SYNC_TOKEN_EXPIRED"
	// CodeBadRequest extends the contract: an HTTP request that is no
	// GraphQL request at all (wrong method or media type, a body that is
	// not JSON, no operation to run).
	CodeBadRequest = "BAD_REQUEST"
	// CodeTooLarge extends the contract: DynamoDB refused to store an item
	// or a transaction as too large (an item over 400 KB, a transaction
	// over 4 MB). Every item a user's input can grow is bounded well
	// below (docs/security.md, "Stored items"), so it should not happen;
	// where it does, nothing was written and retrying the same change
	// fails the same way.
	CodeTooLarge = "TOO_LARGE"
)

var codes = map[string]string{
	domain.ENOTFOUND:    CodeNotFound,
	domain.EINVALID:     CodeBadUserInput,
	domain.EFORBIDDEN:   CodeForbidden,
	domain.ECONFLICT:    CodeConflict,
	domain.EUNAVAILABLE: CodeServiceUnavailable,
	domain.EINTERNAL:    CodeInternal,
	domain.EEXPIRED:     CodeSyncTokenExpired,
	domain.ETOOLARGE:    CodeTooLarge,
}

// ErrorPresenter gives every error an extensions.code and hides the
// message of internal errors (they are logged instead).
func ErrorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		var ae *auth.Error
		var de *domain.Error
		switch {
		case errors.As(err, &ae):
			gerr.Message = ae.Error()
			gerr.Extensions["code"] = CodeUnauthenticated
		case errors.As(err, &de):
			gerr.Message = domain.ErrorMessage(de)
			gerr.Extensions["code"] = codes[de.Code]
			if (de.Code == domain.EINTERNAL || de.Code == domain.EUNAVAILABLE) && !clientLeft(ctx, err) {
				log.ErrorContext(ctx, "request failed", "path", gerr.Path.String(), "err", de.Error())
			}
		case gerr.Extensions["code"] != nil:
			// gqlgen's own parse, validation and complexity errors.
		case len(gerr.Path) == 0:
			// gqlgen's request errors (undecodable body, no operation): the
			// client's mistake, and its message names no internals.
			gerr.Extensions["code"] = CodeBadRequest
		default:
			log.ErrorContext(ctx, "request failed", "path", gerr.Path.String(), "err", err)
			gerr.Message = "internal server error"
			gerr.Extensions["code"] = CodeInternal
		}
		return gerr
	}
}

// clientLeft reports whether err is a DynamoDB call cancelled because its
// request ended (the client went away, or cancelled the operation): no
// failure of the server, and the operation's log line tells already
// (unfinished=true for a query with @defer).
func clientLeft(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && client.Cancelled(ctx)
}

// Recover turns a panic in a resolver into an internal error and logs it.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p))
		return &domain.Error{Code: domain.EINTERNAL, Message: "internal server error"}
	}
}
