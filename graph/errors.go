package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

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
)

var codes = map[string]string{
	domain.ENOTFOUND:    CodeNotFound,
	domain.EINVALID:     CodeBadUserInput,
	domain.EFORBIDDEN:   CodeForbidden,
	domain.ECONFLICT:    CodeConflict,
	domain.EUNAVAILABLE: CodeServiceUnavailable,
	domain.EINTERNAL:    CodeInternal,
	domain.EEXPIRED:     CodeSyncTokenExpired,
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

// badRequest answers requests that are not GraphQL over HTTP, a POST with a
// JSON body of at most maxBody bytes or a GET whose URL's query string has
// at most maxBody bytes, with a coded error (gqlgen itself would answer
// some of them without a code). Only application/json is accepted, so
// a cross-site form or text/plain POST (no CORS preflight) is refused. A
// body's documentId goes to extensions.documentId (liftDocumentID), for
// the pipeline's trusted-documents step. A GET runs queries only: one
// whose text is a mutation or a subscription is 405 with Allow: POST here,
// before anything else (getTransport checks what a documentId names).
// What it checks is where the request's transport reads its operations
// from (its row's operations, transportOf): a body, the URL's query
// string, or a socket's messages (a WebSocket, with live updates on: its
// transport reads and bounds them); a POST that no transport takes
// (not application/json, or one that asks to upgrade) is 415.
func badRequest(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, msg := 0, ""
		t := transportOf(r.Context())
		switch {
		case r.Method == http.MethodOptions:
		case t != nil && t.operations == fromMessages: // its transport reads the messages
		case t != nil && t.operations == fromURL:
			status, msg = checkGET(w, r, maxBody)
		case r.Method != http.MethodPost:
			w.Header().Set("Allow", "GET, POST, OPTIONS")
			status, msg = http.StatusMethodNotAllowed, "send GraphQL requests as POST with a JSON body, or queries as GET"
		case t == nil:
			status, msg = http.StatusUnsupportedMediaType, "the Content-Type must be application/json"
		case r.ContentLength > maxBody:
			status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body may have at most %d bytes", maxBody)
		}
		if status == 0 && r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			switch {
			case err != nil:
				status, msg = http.StatusBadRequest, "the request body could not be read"
			case int64(len(body)) > maxBody:
				status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body may have at most %d bytes", maxBody)
			default:
				if isGraphQLRequest(body) {
					body, err = liftDocumentID(body)
				} else {
					err = errNotParams
				}
				if err != nil {
					// gqlgen's own message would quote the body back.
					status, msg = http.StatusBadRequest, "the request body is not a JSON object {query, variables, operationName}"
				} else {
					r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				}
			}
		}
		if status == 0 {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{{Message: msg,
			Extensions: map[string]any{"code": CodeBadRequest}}}})
	})
}

// checkGET is badRequest's part of a GET: its query string bounded like a
// body (414) and its parameters (400); a mutation or subscription is the
// GET transport's 405. It returns 0 for a GET that may run.
func checkGET(w http.ResponseWriter, r *http.Request, maxBody int64) (int, string) {
	if int64(len(r.URL.RawQuery)) > maxBody {
		return http.StatusRequestURITooLong, fmt.Sprintf("the URL's query may have at most %d bytes: send larger requests as POST", maxBody)
	}
	if _, err := getParams(r.URL.RawQuery); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	return 0, ""
}

// isGraphQLRequest reports whether body is one JSON object whose fields
// have the types of a GraphQL request's (strings; objects or null).
func isGraphQLRequest(body []byte) bool {
	var p struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
		Extensions    map[string]any `json:"extensions"`
	}
	return json.Unmarshal(body, &p) == nil
}

// Recover turns a panic in a resolver into an internal error and logs it.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p))
		return &domain.Error{Code: domain.EINTERNAL, Message: "internal server error"}
	}
}
