package web

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/incremental"
	"github.com/vektah/gqlparser/v2/ast"
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
	parts := incremental.NewParts(format.parts)
	responses, ctx := exec.DispatchOperation(incremental.WithParts(ctx, parts), rc)
	pw := &partWriter{w: w, rc: http.NewResponseController(w), enc: format.newEncoder(parts)}
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
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"` + codes.Internal + `"}}],"hasNext":false}`)
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
// answer, and the media type parameter that names it (in the request's
// Accept and the answer's Content-Type). Two are served, chosen by the
// request's Accept (incrementalFormatOf): the 2022-08-24 format
// (deferSpec20220824) and graphql-js 17's (incrementalSpecV02). The
// pipeline answers in the format the transport names (incremental.Parts): what
// each payload holds is graphql-js 17's, the encoder only writes it.
type incrementalFormat struct {
	mediaTypeParam string
	parts          incremental.PartFormat
	newEncoder     func(payloads) partEncoder
}

// payloads is where an encoder of graphql-js 17's format reads what each
// payload has besides its response (incremental.Parts).
type payloads interface {
	Take() *incremental.PayloadV02
}

// partEncoder turns the responses of one operation, in order, into the
// payloads of its parts; last: no part follows.
type partEncoder interface {
	encode(res *graphql.Response) (payload any, last bool)
}

// deferSpec20220824 is the 2022-08-24 format (Apollo Client's
// Defer20220824Handler, urql; graphql-js 17's legacyExecuteIncrementally):
// the initial payload as it is, each later one an incremental result
// (its data at its path, with its label and errors; data null, with the
// error, for a fragment a non-null field of which failed), hasNext on
// every payload. It is the default.
var deferSpec20220824 = incrementalFormat{mediaTypeParam: "deferSpec=20220824", parts: incremental.Parts20220824,
	newEncoder: func(payloads) partEncoder { return &encoder20220824{} }}

// incrementalSpecV02 is graphql-js 17's format
// (experimentalExecuteIncrementally, as 17.0.0-alpha.9 wrote it: Apollo
// Client's GraphQL17Alpha9Handler, urql): each deferred fragment
// announced in pending, with an id, its path and label, with the payload
// that delivers its parent; its fields in incremental under that id (and
// a subPath below its path), once; its end in completed, with the error
// that nulled it if one did; hasNext on every payload.
var incrementalSpecV02 = incrementalFormat{mediaTypeParam: "incrementalSpec=v0.2", parts: incremental.PartsV02,
	newEncoder: func(p payloads) partEncoder { return &encoderV02{parts: p} }}

// incrementalFormatOf is the format r's Accept asks for: the first
// multipart/mixed media range that names one it serves
// (incrementalSpec=v0.2, as Apollo Client's GraphQL17Alpha9Handler
// sends; deferSpec=20220824, as its Defer20220824Handler sends), else the
// 2022-08-24 format (a bare multipart/mixed, as urql sends).
func incrementalFormatOf(r *http.Request) incrementalFormat {
	for _, v := range r.Header.Values("Accept") {
		for _, mr := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(mr))
			if err != nil || mt != "multipart/mixed" {
				continue
			}
			switch {
			case strings.EqualFold(params["incrementalspec"], "v0.2"):
				return incrementalSpecV02
			case params["deferspec"] == "20220824":
				return deferSpec20220824
			}
		}
	}
	return deferSpec20220824
}

type encoder20220824 struct{ later bool }

// The later payloads of the 2022-08-24 format.
type (
	incremental20220824 struct {
		Incremental []result20220824 `json:"incremental,omitempty"`
		HasNext     bool             `json:"hasNext"`
		Extensions  map[string]any   `json:"extensions,omitempty"`
	}
	result20220824 struct {
		Data   json.RawMessage `json:"data"`
		Path   ast.Path        `json:"path"`
		Label  string          `json:"label,omitempty"`
		Errors gqlerror.List   `json:"errors,omitempty"`
	}
)

func (e *encoder20220824) encode(res *graphql.Response) (any, bool) {
	hasNext := res.HasNext != nil && *res.HasNext
	if !e.later { // the initial response; without @defer, the only one
		e.later = true
		return res, !hasNext
	}
	out := incremental20220824{HasNext: hasNext, Extensions: res.Extensions}
	if res.Data != nil { // one incremental result
		path := res.Path
		if path == nil { // the root's: [], never null
			path = ast.Path{}
		}
		out.Incremental = []result20220824{{Data: res.Data, Path: path, Label: res.Label, Errors: res.Errors}}
	}
	return out, !hasNext
}

// encoderV02 writes graphql-js 17's format: each response with what the
// pipeline's Parts has for its payload.
type encoderV02 struct {
	parts payloads
	later bool
}

// The payloads of graphql-js 17's format.
type (
	initialV02 struct {
		Data       json.RawMessage          `json:"data"`
		Errors     gqlerror.List            `json:"errors,omitempty"`
		Pending    []incremental.PendingV02 `json:"pending"`
		HasNext    bool                     `json:"hasNext"`
		Extensions map[string]any           `json:"extensions,omitempty"`
	}
	subsequentV02 struct {
		Pending     []incremental.PendingV02     `json:"pending,omitempty"`
		Incremental []incremental.IncrementalV02 `json:"incremental,omitempty"`
		Completed   []incremental.CompletedV02   `json:"completed,omitempty"`
		HasNext     bool                         `json:"hasNext"`
		Extensions  map[string]any               `json:"extensions,omitempty"`
	}
)

func (e *encoderV02) encode(res *graphql.Response) (any, bool) {
	hasNext := res.HasNext != nil && *res.HasNext
	pl := e.parts.Take()
	if pl == nil {
		pl = &incremental.PayloadV02{}
	}
	if !e.later {
		e.later = true
		if res.HasNext == nil { // nothing deferred: one plain response
			return res, true
		}
		pending := pl.Pending
		if pending == nil {
			pending = []incremental.PendingV02{}
		}
		return initialV02{Data: res.Data, Errors: res.Errors, Pending: pending, HasNext: hasNext, Extensions: res.Extensions}, !hasNext
	}
	return subsequentV02{Pending: pl.Pending, Incremental: pl.Incremental, Completed: pl.Completed, HasNext: hasNext,
		Extensions: res.Extensions}, !hasNext
}
