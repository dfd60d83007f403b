package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

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
			gerr.Extensions["code"] = codes.Unauthenticated
		case errors.As(err, &de):
			gerr.Message = domain.ErrorMessage(de)
			gerr.Extensions["code"] = codes.OfDomain(de.Code)
			if (de.Code == domain.EINTERNAL || de.Code == domain.EUNAVAILABLE) && !clientLeft(ctx, err) {
				log.ErrorContext(ctx, "request failed", "path", gerr.Path.String(), "err", de.Error())
			}
		case gerr.Extensions["code"] != nil:
			// gqlgen's own parse, validation and complexity errors.
		case len(gerr.Path) == 0:
			// gqlgen's request errors (undecodable body, no operation): the
			// client's mistake, and its message names no internals.
			gerr.Extensions["code"] = codes.BadRequest
		default:
			log.ErrorContext(ctx, "request failed", "path", gerr.Path.String(), "err", err)
			gerr.Message = "internal server error"
			gerr.Extensions["code"] = codes.Internal
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
