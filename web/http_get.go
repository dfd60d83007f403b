package web

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/etag"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// getTransport is GraphQL over HTTP GET: a query's parameters in the URL's
// query string (query, operationName, variables and extensions as JSON,
// documentId). It hands them to the one executor as every transport does,
// so the operation pipeline applies to it alike; a GET runs queries only
// (a mutation or a subscription is 405 with Allow: POST, before it runs).
// badRequest has already bounded the query string by the body limit and
// checked its parameters. A query's answer is HTTP-cacheable
// (graph/etag): Cache-Control: private, no-cache, Vary: Authorization,
// Accept, and an ETag where the pipeline could tag it; an If-None-Match
// with a tag still valid answers 304 Not Modified, the query not run. What the operation is (its text, or what a
// documentId or persisted-query hash names) is known once the pipeline has
// parsed it, so the transport checks its type then, before it runs.
type getTransport struct{}

var _ graphql.Transport = getTransport{}

func (getTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

func (getTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	w.Header().Set("Content-Type", responseMediaType(r))
	start := graphql.Now()
	p, err := getParams(r.URL.RawQuery)
	if err != nil { // badRequest refused it already
		w.WriteHeader(http.StatusBadRequest)
		writeResponse(w, &graphql.Response{Errors: gqlerror.List{badRequestError(err.Error())}})
		return
	}
	p.Headers = r.Header
	p.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	// HTTP caching (graph/etag): the pipeline checks the client's tag
	// before the query runs, records what the answer shows, and tags it.
	cache := etag.NewRequest(r.URL.RawQuery, w.Header().Get("Content-Type"), r.Header.Get("If-None-Match"))
	ctx = etag.With(ctx, cache)
	rc, errs := exec.CreateOperationContext(ctx, p)
	if errs == nil && rc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		refuseWith(ctx, http.StatusMethodNotAllowed)
		errs = gqlerror.List{badRequestError(msgGETQueriesOnly)}
	}
	if errs != nil {
		// The request error's status (and no data entry) is httpScope's.
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	res := responses(ctx)
	h := w.Header()
	h.Set("Cache-Control", "private, no-cache")
	h.Add("Vary", "Authorization, Accept")
	if tag := cache.Tag(); tag != "" {
		h.Set("ETag", `"`+tag+`"`)
	}
	if cache.NotModified() {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeResponse(w, res)
}

const msgGETQueriesOnly = "a GET runs queries only: send mutations and subscriptions as POST"

func badRequestError(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": codes.BadRequest}}
}

// writeResponse writes a response as one JSON body (one write: httpScope's
// writer may rewrite it whole).
func writeResponse(w http.ResponseWriter, res *graphql.Response) {
	b, err := json.Marshal(res)
	if err != nil { // a response is JSON already: never seen
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"` + codes.Internal + `"}}]}`)
	}
	_, _ = w.Write(b)
}

// responseMediaType is the media type of a JSON answer to r, by its Accept
// header as gqlgen's POST transport chooses it: application/json when it
// accepts that, any type (*/*, application/*) or names none;
// application/graphql-response+json when it accepts that first or accepts
// neither.
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// The media types of JSON answers.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// getParams decodes a GET's GraphQL request parameters from its URL's
// query string: query and operationName as they are, variables and
// extensions as JSON objects (or null), and documentId, which goes to
// extensions.documentId as liftDocumentID puts a POST body's, for the
// pipeline's trusted-documents step. A parameter given twice, or JSON that
// is not one object, is an error; other parameters are ignored.
func getParams(rawQuery string) (*graphql.RawParams, error) {
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, errGetParams
	}
	p := &graphql.RawParams{}
	for _, k := range []string{"query", "operationName", "variables", "extensions", pipeline.DocumentIDExtension} {
		if len(vals[k]) > 1 {
			return nil, errGetParams
		}
	}
	p.Query, p.OperationName = vals.Get("query"), vals.Get("operationName")
	if v := vals.Get("variables"); v != "" {
		if err := decodeObject(v, &p.Variables); err != nil {
			return nil, errGetParams
		}
	}
	if v := vals.Get("extensions"); v != "" {
		if err := decodeObject(v, &p.Extensions); err != nil {
			return nil, errGetParams
		}
	}
	if id, ok := vals[pipeline.DocumentIDExtension]; ok {
		if p.Extensions == nil {
			p.Extensions = map[string]any{}
		}
		p.Extensions[pipeline.DocumentIDExtension] = id[0]
	}
	return p, nil
}

var errGetParams = errors.New("the URL's query is not GraphQL request parameters: query, operationName, " +
	"variables and extensions (JSON objects) or documentId, each at most once")

// decodeObject decodes s, one JSON object or null, into m.
func decodeObject(s string, m *map[string]any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(m); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errNotParams
	}
	return nil
}
