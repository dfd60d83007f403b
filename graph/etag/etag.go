// Package etag is HTTP caching of queries asked with GET: what an answer
// depends on, its strong ETag, and the check of an If-None-Match that
// answers 304 Not Modified without running the query (docs/caching.md).
//
// An answer's ETag stands on the data it shows, which the operation
// records as it resolves its fields (Request.Field, by one table of rules
// per field, rules.go): the viewer's profile as the answer read it (their
// name, email and copies of their projects' names: which projects they
// see), the seq of each project whose data it shows (every change in a
// project moves its seq, in the change's own transaction), and the other
// users it shows, each a member of one of those projects (so their
// visibility and their name move that project's seq too). The ETag is a
// hash of those with the request (the viewer, the URL's query, the media
// type) and the build, followed by the projects' ids and a filter of the
// users, which is all the check needs: it reads the profile and the
// projects again (one BatchGetItem) and the profiles changed but not yet
// copied into their projects' change logs (one Query), and answers 304 when
// the hash is the same. Where the dependencies cannot be bounded (a tag's
// tasks across projects, a sync, overdue tasks by today's date, a user who
// is no member of a project shown, more than MaxProjects projects), the
// answer has no ETag.
//
// The pipeline (graph/pipeline's httpCache) runs the check before the
// operation and records and issues around it; the HTTP side (web's GET
// transport) makes the Request and writes the headers.
package etag

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Request is one GET query's part in HTTP caching: what names its answer
// (the URL's query and the media type), the entity tag the client holds
// (If-None-Match), what the operation recorded, and the outcome.
type Request struct {
	identity    string
	ifNoneMatch string

	mu          sync.Mutex
	start       time.Time
	deps        deps
	tag         string
	notModified bool
}

// NewRequest starts the HTTP caching of a GET query whose URL's query is
// rawQuery, answered as mediaType, with the If-None-Match header
// ifNoneMatch ("" when none).
func NewRequest(rawQuery, mediaType, ifNoneMatch string) *Request {
	return &Request{identity: mediaType + "\n" + rawQuery, ifNoneMatch: ifNoneMatch}
}

type requestKey struct{}

// With returns ctx carrying r: the operation of ctx is a GET query whose
// answer may be cached.
func With(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// From returns the Request of ctx's operation (nil: no HTTP caching).
func From(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// Tag returns the ETag of the answer ("" when it has none).
func (r *Request) Tag() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tag
}

// NotModified reports whether the client's tag is still valid: the answer
// is 304 Not Modified, the query did not run.
func (r *Request) NotModified() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notModified
}

// candidate returns the first entity tag of If-None-Match (a weak one
// counts: If-None-Match compares weakly), "" for none or "*".
func (r *Request) candidate() string {
	first, _, _ := strings.Cut(r.ifNoneMatch, ",")
	first = strings.TrimPrefix(strings.TrimSpace(first), "W/")
	if len(first) < 2 || first[0] != '"' || first[len(first)-1] != '"' {
		return ""
	}
	return first[1 : len(first)-1]
}
