package web

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// The handler's transports, each one row that says what it can do. The
// transport of a request is chosen once, by its row's own Supports, in the
// rows' order (chooseTransport), and put in the request's context; every
// rule that depends on the transport (badRequest, httpScope, and the
// pipeline's deferDelivery and a subscription's need of a stream, through
// pipeline.TransportOf) asks that row, never the request's headers. Adding a
// transport is one row here and its driver in the transport matrix test
// (web/transport_matrix_test.go).

// transports are the handler's transports, in the order they are tried.
func transports(o Options, maxBody int64) []handlerTransport {
	keep := newKeepAlives(KeepAliveInterval) // one wheel for the handler's long-lived connections
	return []handlerTransport{
		{protocols: []string{ProtocolGraphQLTransportWS, ProtocolGraphQLWS}, delivery: pipeline.ResponseStream, refusals: inStream,
			operations: fromMessages, upgrades: true, needsLive: true, stream: "websocket", Transport: newLiveWebsocket(o.Auth, o.CORS, maxBody, o.Live, keep)},
		{protocols: []string{ProtocolSSE}, delivery: pipeline.ResponseStream, refusals: inStream, // before POST, which would take its requests
			operations: fromBody, stream: "sse", Transport: sseTransport{buffer: hubBuffer(o.Live), keep: keep}},
		{protocols: []string{ProtocolMultipart}, delivery: pipeline.IncrementalParts, refusals: withStatus, // @defer's parts; before POST, which ignores Accept
			operations: fromBody, Transport: multipartMixed{}},
		{delivery: pipeline.OneResponse, refusals: withStatus, operations: fromNothing, Transport: transport.Options{}}, // OPTIONS: no operation
		{protocols: []string{ProtocolPOST}, delivery: pipeline.OneResponse, refusals: withStatus, operations: fromBody, Transport: transport.POST{}},
		{protocols: []string{ProtocolGET}, delivery: pipeline.OneResponse, refusals: withStatus, operations: fromURL, // queries only, whatever it accepts
			Transport: getTransport{}},
	}
}

// The protocols the handler serves operations over (Protocols).
const (
	ProtocolPOST               = "POST application/json"
	ProtocolGET                = "GET"
	ProtocolSSE                = "POST text/event-stream"
	ProtocolMultipart          = "POST multipart/mixed"
	ProtocolGraphQLTransportWS = "WebSocket graphql-transport-ws"
	ProtocolGraphQLWS          = "WebSocket graphql-ws"
)

// Protocols lists the protocols the handler serves operations over, from
// the transports it registers: a test that covers each rule on each
// protocol fails when a transport is added without its rows.
func Protocols() []string {
	var ps []string
	for _, t := range transports(Options{}, DefaultMaxBodyBytes) {
		ps = append(ps, t.protocols...)
	}
	return ps
}

// handlerTransport is one of the handler's transports: the protocols it
// speaks and what it can do. The operation pipeline applies to each alike;
// the rules that depend on what a transport can do read it here.
type handlerTransport struct {
	protocols []string
	// delivery: what it can send for one operation (one JSON body, the
	// parts of @defer in one body, or a stream of responses), which the
	// pipeline asks (Delivery).
	delivery pipeline.Delivery
	// refusals: how an operation refused is answered (an HTTP status and
	// one JSON body, or a message of the stream).
	refusals refusalShape
	// operations: where its operations come from, which badRequest checks
	// before anything runs (a JSON body, the URL's query string) or leaves
	// to the transport (a socket's messages): an operationSource
	// (badrequest.go), declared beside a transport that reads them from
	// somewhere new.
	operations operationSource
	// upgrades: it takes requests that ask to switch protocols (and only
	// it does).
	upgrades bool
	// needsLive: served only with live updates on (Options.Live).
	needsLive bool
	// stream names the long-lived stream it opens ("websocket", "sse"; ""
	// for a transport that answers at once), which the telemetry counts
	// as open connections rather than requests in flight (streamOf).
	stream string
	graphql.Transport
}

// refusalShape is how a transport answers an operation refused.
type refusalShape int

const (
	// withStatus: an HTTP status and one JSON body, written through
	// httpScope's status writer (POST, GET, multipart/mixed).
	withStatus refusalShape = iota
	// inStream: a message of the stream or the socket, after a 200 or a
	// 101 (server-sent events, the WebSockets).
	inStream
)

// Delivery is what the transport can send for one operation: the
// pipeline's view of the row (pipeline.Transport).
func (t *handlerTransport) Delivery() pipeline.Delivery { return t.delivery }

// transportOf returns the transport chosen for ctx's request, or nil when
// none takes it.
func transportOf(ctx context.Context) *handlerTransport {
	t, _ := pipeline.TransportOf(ctx).(*handlerTransport)
	return t
}

// streamOf names the long-lived stream r opens, by its transport's row
// (handlerTransport.stream): what the telemetry's handler asks.
func streamOf(r *http.Request) string {
	if t := transportOf(r.Context()); t != nil {
		return t.stream
	}
	return ""
}

// chooseTransport chooses the transport of each request once, before
// anything else reads it: the first of ts whose Supports takes it (a
// request that asks to switch protocols goes to a transport that upgrades,
// or to none; with live updates off, a transport that needs them takes
// nothing), and puts it in the request's context (pipeline.WithTransport,
// read by transportOf and by the pipeline).
func chooseTransport(ts []*handlerTransport, live bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, t := range ts {
			if (t.needsLive && !live) || (r.Header.Get("Upgrade") != "") != t.upgrades || !t.Transport.Supports(r) {
				continue
			}
			r = r.WithContext(pipeline.WithTransport(r.Context(), t))
			break
		}
		next.ServeHTTP(w, r)
	})
}

// Supports takes the requests it was chosen for (chooseTransport): gqlgen
// runs the transport already chosen.
func (t *handlerTransport) Supports(r *http.Request) bool { return transportOf(r.Context()) == t }
