package web

import (
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"strconv"

	"github.com/taskgraph/taskgraph/graph"
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

// httpScope puts what the pipeline needs of an HTTP request into its
// context: the client's address (graph.WithClientAddr) and, for a
// transport whose refusals are an HTTP status and one JSON body (not a
// stream, not a socket), the graph.Answer where the pipeline records a
// refusal's status, which the response's writer then applies: a step's,
// else a request error's (requestErrorStatus, by the response's media
// type), else gqlgen's; a request error's body has no data entry.
func httpScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ctx := graph.WithClientAddr(r.Context(), host)
		// A transport whose refusals are messages of its stream (its row's
		// refusals) writes no status; a multipart/mixed answer (@defer)
		// keeps the status writer: a refusal is one JSON body, and the
		// writer flushes its parts.
		if t := transportOf(ctx); t != nil && t.refusals == inStream {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		a := &graph.Answer{}
		sw := &statusWriter{ResponseWriter: w, body: func(b []byte) []byte {
			if a.NoData() {
				return withoutData(b)
			}
			return b
		}, rewrite: func(h http.Header, status int) int {
			chosen, retryAfter, noData := a.Status()
			if retryAfter > 0 {
				h.Set("Retry-After", strconv.Itoa(retryAfter))
			}
			switch {
			case chosen != 0:
				return chosen
			case noData:
				return requestErrorStatus(h.Get("Content-Type"))
			}
			return status
		}}
		next.ServeHTTP(sw, r.WithContext(graph.WithAnswer(ctx, a)))
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
