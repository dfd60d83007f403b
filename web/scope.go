package web

import (
	"context"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// requestErrorStatus is the HTTP status of a request error (no data entry)
// answered as mediaType: 400 with application/graphql-response+json, as
// GraphQL over HTTP requires of a response without data; 200 with
// application/json, where legacy clients take any other status for a
// network failure and drop the errors (the spec's SHOULD, and the audit's
// 572B, FDE2, 7B9B).
func requestErrorStatus(mediaType string) int {
	if mt, _, _ := mime.ParseMediaType(mediaType); mt == mediaGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// refusalStatus is the HTTP status of an operation the pipeline refused
// (pipeline.Refusal), or 0 for none: the one place the pipeline's refusals
// become statuses.
func refusalStatus(r pipeline.Refusal) int {
	switch r {
	case pipeline.RefusedRequest, pipeline.RefusedNeedsStream:
		return http.StatusBadRequest
	case pipeline.RefusedUndeliverable:
		return http.StatusNotAcceptable // names the media types to accept
	case pipeline.RefusedRateLimited:
		return http.StatusTooManyRequests // with Retry-After
	}
	return 0
}

// ownStatus is the status a transport of web's chose for an operation it
// refused itself (a GET's mutation: 405), where httpScope's writer applies
// it.
type ownStatus struct {
	mu     sync.Mutex
	status int
}

type ownStatusKey struct{}

// refuseWith records status as the answer of ctx's request, refused by
// its transport itself; on a stream or a socket it does nothing.
func refuseWith(ctx context.Context, status int) {
	if o, _ := ctx.Value(ownStatusKey{}).(*ownStatus); o != nil {
		o.mu.Lock()
		o.status = status
		o.mu.Unlock()
	}
}

func (o *ownStatus) get() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

// httpScope puts what the pipeline needs of an HTTP request into its
// context: the client's address (pipeline.WithClientAddr) and, for a
// transport whose refusals are an HTTP status and one JSON body (not a
// stream, not a socket), the pipeline.Answer where the pipeline records a
// refusal, which the response's writer then turns into its status: the
// transport's own (refuseWith), else the refusal's (refusalStatus), else
// a request error's (requestErrorStatus, by the response's media type),
// else gqlgen's; a request error's body has no data entry.
func httpScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ctx := pipeline.WithClientAddr(r.Context(), host)
		// A transport whose refusals are messages of its stream (its row's
		// refusals) writes no status; a multipart/mixed answer (@defer)
		// keeps the status writer: a refusal is one JSON body, and the
		// writer flushes its parts.
		if t := transportOf(ctx); t != nil && t.refusals == inStream {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		a, own := &pipeline.Answer{}, &ownStatus{}
		sw := &statusWriter{ResponseWriter: w, body: func(b []byte) []byte {
			if a.NoData() {
				return withoutData(b)
			}
			return b
		}, rewrite: func(h http.Header, status int) int {
			refusal, retryAfter, noData := a.Outcome()
			if retryAfter > 0 {
				h.Set("Retry-After", strconv.Itoa(retryAfter))
			}
			switch {
			case own.get() != 0:
				return own.get()
			case refusalStatus(refusal) != 0:
				return refusalStatus(refusal)
			case noData:
				return requestErrorStatus(h.Get("Content-Type"))
			}
			return status
		}}
		next.ServeHTTP(sw, r.WithContext(pipeline.WithAnswer(context.WithValue(ctx, ownStatusKey{}, own), a)))
		sw.finish()
	})
}

// withoutData returns a JSON response body without its data entry.
func withoutData(b []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	delete(m, "data")
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return append(out, '\n')
}
