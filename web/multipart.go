package web

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph"
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
	if payload == nil { // held for a later part
		return
	}
	b, err := json.Marshal(payload)
	if err != nil { // a response is JSON already: never seen
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"` + graph.CodeInternal + `"}}],"hasNext":false}`)
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
// (deferSpec20220824) and graphql-js 17's (incrementalSpecV02).
type incrementalFormat struct {
	mediaTypeParam string
	newEncoder     func() partEncoder
}

// partEncoder turns the responses of one operation, in order, into the
// payloads of its parts; last: no part follows. A nil payload writes no
// part (a response held for a later one).
type partEncoder interface {
	encode(res *graphql.Response) (payload any, last bool)
}

// deferSpec20220824 is the 2022-08-24 format (Apollo Client's
// Defer20220824Handler, urql): the initial response as it is, each later
// one inside incremental with its path and label, hasNext on every
// payload. It is the default.
var deferSpec20220824 = incrementalFormat{mediaTypeParam: "deferSpec=20220824", newEncoder: func() partEncoder { return &encoder20220824{} }}

// incrementalSpecV02 is graphql-js 17's format (17.0.0-alpha.9; Apollo's
// incremental v0.2: Apollo Client's GraphQL17Alpha9Handler, urql): each
// deferred fragment announced in pending with an id, its path and label,
// its data in incremental under that id, its end in completed (with its
// errors when its data is null), hasNext on every payload.
var incrementalSpecV02 = incrementalFormat{mediaTypeParam: "incrementalSpec=v0.2", newEncoder: func() partEncoder { return &encoderV02{} }}

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

// encoderV02 writes graphql-js 17's format from gqlgen's responses.
//
// gqlgen's executor tells of a deferred fragment only when it hands over
// its part (its path and label), never before: so each fragment is
// announced in pending in the payload that carries its data and
// completes it, the initial payload's pending empty. A fragment deferred
// inside another (its path under data the other delivers) may be resolved
// first: its part is held until the data at its path has arrived, as a
// client can only merge into what it has; held parts whose place never
// arrives (under a fragment whose data is null) are dropped at the end,
// as graphql-js never announces a fragment under a null. gqlgen's initial
// response carries each deferred field as null, which the fragment's
// data replaces.
type encoderV02 struct {
	later bool
	// initial is the initial response's data, decoded into tree when the
	// first later part comes: the data as the client has it, but for the
	// parts delivered and not yet merged into it (unmerged), merged only
	// when a part's place is under one of theirs (a nested fragment), so
	// that parts without any inside them are never decoded.
	initial  json.RawMessage
	tree     any
	decoded  bool
	unmerged []*graphql.Response
	nextID   int
	held     []*graphql.Response
}

// The payloads of graphql-js 17's format.
type (
	initialV02 struct {
		Data       json.RawMessage `json:"data"`
		Errors     gqlerror.List   `json:"errors,omitempty"`
		Pending    []pendingV02    `json:"pending"`
		HasNext    bool            `json:"hasNext"`
		Extensions map[string]any  `json:"extensions,omitempty"`
	}
	subsequentV02 struct {
		Pending     []pendingV02     `json:"pending,omitempty"`
		Incremental []incrementalV02 `json:"incremental,omitempty"`
		Completed   []completedV02   `json:"completed,omitempty"`
		HasNext     bool             `json:"hasNext"`
		Extensions  map[string]any   `json:"extensions,omitempty"`
	}
	pendingV02 struct {
		ID    string   `json:"id"`
		Path  ast.Path `json:"path"`
		Label string   `json:"label,omitempty"`
	}
	incrementalV02 struct {
		ID     string          `json:"id"`
		Data   json.RawMessage `json:"data"`
		Errors gqlerror.List   `json:"errors,omitempty"`
	}
	completedV02 struct {
		ID     string        `json:"id"`
		Errors gqlerror.List `json:"errors,omitempty"`
	}
)

func (e *encoderV02) encode(res *graphql.Response) (any, bool) {
	hasNext := res.HasNext != nil && *res.HasNext
	if !e.later {
		e.later = true
		if res.HasNext == nil { // nothing deferred: one plain response
			return res, true
		}
		e.initial = res.Data
		return initialV02{Data: res.Data, Errors: res.Errors, Pending: []pendingV02{}, HasNext: hasNext, Extensions: res.Extensions}, !hasNext
	}
	if !e.decoded {
		e.decoded = true
		_ = json.Unmarshal(e.initial, &e.tree) // JSON from the executor; null if not
		e.initial = nil
	}
	out := subsequentV02{HasNext: hasNext, Extensions: res.Extensions}
	e.held = append(e.held, res)
	for progress := true; progress; {
		progress = false
		for i, h := range e.held {
			if !e.placed(h.Path) {
				continue
			}
			e.held = append(e.held[:i], e.held[i+1:]...)
			e.deliver(&out, h)
			progress = true
			break
		}
	}
	if !hasNext {
		e.held = nil // under a null: never announced
	}
	if len(out.Completed) == 0 && hasNext {
		return nil, false // held for a later part
	}
	return out, !hasNext
}

// placed reports whether the client has an object at path: in the data
// merged so far, or once the delivered parts above path are merged.
func (e *encoderV02) placed(path ast.Path) bool {
	if _, ok := objectAt(e.tree, path); ok {
		return true
	}
	merged := false
	for i := 0; i < len(e.unmerged); i++ {
		u := e.unmerged[i]
		if len(u.Path) >= len(path) || !slices.Equal(u.Path, path[:len(u.Path)]) {
			continue
		}
		e.unmerged = slices.Delete(e.unmerged, i, i+1)
		i--
		var data map[string]any
		at, ok := objectAt(e.tree, u.Path)
		if ok && json.Unmarshal(u.Data, &data) == nil {
			mergeInto(at, data)
			merged = true
		}
	}
	if !merged {
		return false
	}
	_, ok := objectAt(e.tree, path)
	return ok
}

// deliver adds h, whose place the client has, to out: announced, its
// data (or its errors, when its data is null), completed.
func (e *encoderV02) deliver(out *subsequentV02, h *graphql.Response) {
	id := strconv.Itoa(e.nextID)
	e.nextID++
	path := h.Path
	if path == nil { // a fragment of the root: [], never null
		path = ast.Path{}
	}
	out.Pending = append(out.Pending, pendingV02{ID: id, Path: path, Label: h.Label})
	if d := bytes.TrimSpace(h.Data); len(d) == 0 || bytes.Equal(d, []byte("null")) {
		// Null: a non-null field of the fragment failed.
		out.Completed = append(out.Completed, completedV02{ID: id, Errors: h.Errors})
		return
	}
	out.Incremental = append(out.Incremental, incrementalV02{ID: id, Data: h.Data, Errors: h.Errors})
	out.Completed = append(out.Completed, completedV02{ID: id})
	e.unmerged = append(e.unmerged, h)
}

// objectAt returns the object at path in tree, if it has one there.
func objectAt(tree any, path ast.Path) (map[string]any, bool) {
	at := tree
	for _, el := range path {
		switch el := el.(type) {
		case ast.PathName:
			m, ok := at.(map[string]any)
			if !ok {
				return nil, false
			}
			at = m[string(el)]
		case ast.PathIndex:
			l, ok := at.([]any)
			if !ok || int(el) < 0 || int(el) >= len(l) {
				return nil, false
			}
			at = l[el]
		}
	}
	m, ok := at.(map[string]any)
	return m, ok
}

// mergeInto merges the fields of add into dst: objects merged field by
// field, lists element by element, anything else replaced.
func mergeInto(dst, add map[string]any) {
	for k, v := range add {
		dst[k] = mergedValue(dst[k], v)
	}
}

func mergedValue(old, v any) any {
	switch v := v.(type) {
	case map[string]any:
		if o, ok := old.(map[string]any); ok {
			mergeInto(o, v)
			return o
		}
	case []any:
		if o, ok := old.([]any); ok && len(o) == len(v) {
			for i := range v {
				o[i] = mergedValue(o[i], v[i])
			}
			return o
		}
	}
	return v
}
