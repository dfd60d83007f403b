// Package web is the HTTP side of the GraphQL server: its transports
// (POST, GET, multipart/mixed for @defer, server-sent events, the
// WebSockets), the choice of a request's transport, CORS, the refusals of
// what is no GraphQL request, and every HTTP status: those of its own
// refusals and those of the operations the pipeline refused
// (refusalStatus). The operation pipeline is graph/pipeline's, which
// every transport hands its operations to; web imports it, never the
// reverse. What a pipeline's rule needs of a transport (what it can
// deliver, where a refusal is recorded, the client's address, the
// WebSocket's connection) web puts in the request's context as values the
// pipeline defines (graph/pipeline/transport.go, answer.go).
package web

import (
	"cmp"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// Options configure the /query handler: the GraphQL server's (its
// pipeline, resolvers and subscriptions: pipeline.Options) and HTTP's own.
type Options struct {
	pipeline.Options
	// MaxBodyBytes bounds a request body, a GET's query string and a
	// WebSocket message (larger: 413, 414, a close); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// CORS is the origins whose pages may call the handler from a browser;
	// the zero value allows any.
	CORS Origins
}

// DefaultMaxBodyBytes is the body limit when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 64 << 10

// NewHandler returns the /query handler: srv, the executor with its
// operation pipeline (pipeline.New), behind the transports, which it adds
// to srv, and HTTP's middleware, in the
// order a request meets them: the choice of its transport
// (chooseTransport), telemetry (which asks the chosen row whether the
// request opens a long-lived stream: streamOf), CORS, the refusals of
// what is no GraphQL request (badRequest), authentication (the viewer),
// then the client's address and the refusal status (httpScope) before
// gqlgen runs the chosen transport.
func NewHandler(srv *handler.Server, o Options) http.Handler {
	maxBody := cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes)
	rows := transports(o, maxBody)
	ts := make([]*handlerTransport, len(rows))
	for i := range rows {
		ts[i] = &rows[i]
		srv.AddTransport(ts[i])
	}
	h := o.Auth.Middleware(httpScope(srv))
	return chooseTransport(ts, o.Live != nil, o.Telemetry.Handler(o.CORS.Handler(badRequest(maxBody, h)), streamOf))
}
