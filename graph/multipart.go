package graph

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// multipartMixed is incremental delivery over HTTP (GraphQL over HTTP's
// incremental delivery RFC): a POST with a JSON body that accepts
// multipart/mixed gets the responses of its operation as the parts of one
// multipart/mixed body, each written and flushed as soon as the executor
// hands it over, in the format of incremental delivery its Accept names
// (incrementalFormat). An operation refused before it runs is one JSON
// body, its status httpScope's.
//
// It takes the place of gqlgen's MultipartMixed transport, which batches
// parts with a 1 ms ticker on a goroutine of its own for as long as the
// operation runs, and writes the 2022-08-24 format only.
type multipartMixed struct{}

var _ graphql.Transport = multipartMixed{}

// Supports takes a POST with a JSON body that accepts multipart/mixed
// (Apollo Client's and urql's Accept for @defer).
func (multipartMixed) Supports(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && err == nil && mt == mediaJSON && strings.Contains(r.Header.Get("Accept"), "multipart/mixed")
}

// multipartBoundary separates the parts (gqlgen's, which clients read
// today): a part's JSON has no line break, so no part holds its line.
const multipartBoundary = "-"

func (multipartMixed) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	p := &graphql.RawParams{}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(p); err != nil { // badRequest refused it already
		w.Header().Set("Content-Type", responseMediaType(r))
		w.WriteHeader(http.StatusBadRequest)
		writeResponse(w, &graphql.Response{Errors: gqlerror.List{badRequestError("the request body is not a JSON object {query, variables, operationName}")}})
		return
	}
	p.Headers = r.Header
	p.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, errs := exec.CreateOperationContext(ctx, p)
	if errs != nil {
		// The request error's status (and no data entry) is httpScope's.
		w.Header().Set("Content-Type", responseMediaType(r))
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs))
		return
	}
	format := incrementalFormatOf(r)
	w.Header().Set("Content-Type", `multipart/mixed;boundary="`+multipartBoundary+`";`+format.mediaTypeParam)
	w.Header().Set("Cache-Control", "no-cache")
	responses, ctx := exec.DispatchOperation(ctx, rc)
	pw := &partWriter{w: w, rc: http.NewResponseController(w), enc: format.newEncoder()}
	for res := responses(ctx); res != nil; res = responses(ctx) {
		// Once a write fails (the client is gone) the rest is only
		// received: the operation ends with its request's context, and its
		// one log line comes with the last response.
		pw.write(res)
	}
}

// partWriter writes the parts of one multipart/mixed answer: each
// response encoded, then the boundary that ends it (the closing one after
// the last), flushed at once so that the client has the part.
type partWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	enc     partEncoder
	started bool
	failed  bool
}

func (pw *partWriter) write(res *graphql.Response) {
	if pw.failed {
		return
	}
	payload, last := pw.enc.encode(res)
	b, err := json.Marshal(payload)
	if err != nil { // a response is JSON already: never seen
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"` + CodeInternal + `"}}],"hasNext":false}`)
		last = true
	}
	var buf bytes.Buffer
	if !pw.started {
		buf.WriteString("--" + multipartBoundary + "\r\n")
		pw.started = true
	}
	buf.WriteString("Content-Type: application/json\r\n\r\n")
	buf.Write(b)
	buf.WriteString("\r\n--" + multipartBoundary)
	if last {
		buf.WriteString("--")
	}
	buf.WriteString("\r\n")
	if _, err := pw.w.Write(buf.Bytes()); err != nil {
		pw.failed = true
		return
	}
	if err := pw.rc.Flush(); err != nil {
		pw.failed = true
	}
}

// incrementalFormat is a format of incremental delivery: how the
// responses of an operation with @defer become the payloads of its
// answer, and the media type parameter that names it. The one served is
// the 2022-08-24 format (deferSpec=20220824: Apollo Client's
// Defer20220824Handler, urql); a second (graphql-js 17's pending,
// incremental with ids and completed) is a second value here, chosen by
// the request's Accept in incrementalFormatOf, with an encoder of its own.
type incrementalFormat struct {
	mediaTypeParam string
	newEncoder     func() partEncoder
}

// partEncoder turns the responses of one operation, in order, into the
// payloads of its parts; last: no part follows.
type partEncoder interface {
	encode(res *graphql.Response) (payload any, last bool)
}

// deferSpec20220824 is the 2022-08-24 format: the initial response as it
// is, each later one inside incremental, hasNext on every payload.
var deferSpec20220824 = incrementalFormat{mediaTypeParam: "deferSpec=20220824", newEncoder: func() partEncoder { return &encoder20220824{} }}

// incrementalFormatOf is the format r asks for: the 2022-08-24 one, which
// Apollo Client sends in its Accept (deferSpec=20220824) and urql reads
// without naming it.
func incrementalFormatOf(*http.Request) incrementalFormat { return deferSpec20220824 }

type encoder20220824 struct{ later bool }

// incremental20220824 is a later payload of the 2022-08-24 format.
type incremental20220824 struct {
	Incremental []*graphql.Response `json:"incremental"`
	HasNext     bool                `json:"hasNext"`
}

func (e *encoder20220824) encode(res *graphql.Response) (any, bool) {
	hasNext := res.HasNext != nil && *res.HasNext
	if !e.later { // the initial response; without @defer, the only one
		e.later = true
		return res, !hasNext
	}
	return incremental20220824{Incremental: []*graphql.Response{res}, HasNext: hasNext}, !hasNext
}
