package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

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
		case t != nil: // what its row's source checks
			status, msg = t.operations(w, r, maxBody)
		case r.Method != http.MethodPost:
			status, msg = notPOST(w)
		default:
			status, msg = http.StatusUnsupportedMediaType, "the Content-Type must be application/json"
		}
		if status == 0 {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{{Message: msg,
			Extensions: map[string]any{"code": codes.BadRequest}}}})
	})
}

// operationSource is where a transport reads its operations from (its
// row's operations), and what badRequest checks of a request before
// anything runs: 0, or the status and message it is refused with. A
// transport whose operations come from somewhere new declares its source
// beside it; badRequest asks the row.
type operationSource func(w http.ResponseWriter, r *http.Request, maxBody int64) (status int, msg string)

// fromNothing: no operation (OPTIONS).
func fromNothing(http.ResponseWriter, *http.Request, int64) (int, string) { return 0, "" }

// fromMessages: a socket's messages, read and bounded by the transport
// itself.
func fromMessages(http.ResponseWriter, *http.Request, int64) (int, string) { return 0, "" }

// fromURL: the URL's query string, bounded and checked as a GET's
// (checkGET).
func fromURL(w http.ResponseWriter, r *http.Request, maxBody int64) (int, string) {
	return checkGET(w, r, maxBody)
}

// fromBody: a POST's JSON body of at most maxBody bytes, one GraphQL
// request, whose documentId goes to extensions.documentId
// (liftDocumentID); the body is put back for the transport.
func fromBody(w http.ResponseWriter, r *http.Request, maxBody int64) (int, string) {
	if r.Method != http.MethodPost {
		return notPOST(w)
	}
	body, status, msg := readBody(r, maxBody)
	if status != 0 {
		return status, msg
	}
	var err error
	if isGraphQLRequest(body) {
		body, err = liftDocumentID(body)
	} else {
		err = errNotParams
	}
	if err != nil { // gqlgen's own message would quote the body back.
		return http.StatusBadRequest, "the request body is not a JSON object {query, variables, operationName}"
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return 0, ""
}

// readBody reads a request's body of at most maxBody bytes (413 beyond).
func readBody(r *http.Request, maxBody int64) ([]byte, int, string) {
	tooLarge := fmt.Sprintf("the request body may have at most %d bytes", maxBody)
	if r.ContentLength > maxBody {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, "the request body could not be read"
	case int64(len(body)) > maxBody:
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	return body, 0, ""
}

func notPOST(w http.ResponseWriter) (int, string) {
	w.Header().Set("Allow", "GET, POST, OPTIONS")
	return http.StatusMethodNotAllowed, "send GraphQL requests as POST with a JSON body, or queries as GET"
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
