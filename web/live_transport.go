package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
)

// The transports of subscriptions: WebSocket on /query (graphql-transport-ws
// and the legacy graphql-ws subprotocol; the token in connection_init's
// payload; wsconn.go, wsops.go) and server-sent events (POST /query with
// Accept: text/event-stream, graphql-sse's distinct connections mode; the
// token in the Authorization header; sse.go). Both are ours, over the
// connection taken from net/http: a reader goroutine per connection only
// while its client sends (parked while it is quiet: park_linux.go),
// writes made by whoever has something to send (wire.go), one
// keep-alive goroutine for all (keepalive.go), and each subscription a
// Stream its events are pushed to (graph/subscription). gqlgen's own
// transports hold a goroutine per subscription and three or four per
// connection, and two 4 KiB buffers per socket, which an idle subscriber
// should not cost.

// KeepAliveInterval is how often an idle subscription connection gets a
// keep-alive message, well inside common proxies' idle timeouts.
const KeepAliveInterval = 15 * time.Second

// initTimeout is how long a WebSocket may take to send connection_init.
const initTimeout = 10 * time.Second

// liveWebsocket is the WebSocket transport, behind the CORS origin rule of
// /query, authenticating at connection_init.
type liveWebsocket struct {
	auth       *auth.Authenticator
	origins    Origins
	maxMessage int64 // a message is bounded as a POST's body is (-max-body)
	buffer     int   // messages a subscriber may fall behind (the hub's buffer)
	keep       *keepAlives
}

func newLiveWebsocket(a *auth.Authenticator, origins Origins, maxMessage int64, hub *live.Hub, keep *keepAlives) liveWebsocket {
	parking.available() // its epoll instance made at the start, far from the descriptor limit
	return liveWebsocket{auth: a, origins: origins, maxMessage: maxMessage, buffer: hubBuffer(hub), keep: keep}
}

// hubBuffer is the hub's subscription buffer (live.DefaultBuffer without
// a hub).
func hubBuffer(h *live.Hub) int {
	if h == nil {
		return live.DefaultBuffer
	}
	return h.Buffer()
}

// Supports takes a GET that asks to upgrade to a WebSocket.
func (t liveWebsocket) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// The subprotocols.
const (
	subprotocolTransportWS = "graphql-transport-ws"
	subprotocolGraphQLWS   = "graphql-ws"
)

// Do upgrades the request and leaves the connection to its reader.
func (t liveWebsocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if o := r.Header.Get("Origin"); o != "" && !t.origins.AllowedOrigin(o) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
			"message": "this origin may not open subscriptions", "extensions": map[string]any{"code": codes.Forbidden}}}})
		return
	}
	up := ws.HTTPUpgrader{Protocol: func(p string) bool { return p == subprotocolTransportWS || p == subprotocolGraphQLWS }}
	nc, rw, hs, err := up.Upgrade(r, w)
	if err != nil {
		if nc != nil {
			_ = nc.Close()
		}
		return // the upgrader answered the handshake's error
	}
	_ = nc.SetDeadline(time.Time{}) // the HTTP server's request deadlines
	c := &wsConn{t: t, exec: exec, proto: hs.Protocol, ctx: context.WithoutCancel(r.Context()), headers: traceHeaders(r.Header),
		ops: map[string]*wsOp{}}
	if c.proto == "" {
		c.proto = subprotocolGraphQLWS // as gqlgen: a client that names none speaks the legacy protocol
	}
	c.wire = wire{nc: nc, limit: t.buffer, onClose: c.wake}
	c.src = nc
	if n := rw.Reader.Buffered(); n > 0 { // sent right behind the upgrade request
		b, _ := rw.Reader.Peek(n)
		c.src = &preRead{pre: bytes.Clone(b), Conn: nc}
	}
	c.closedStream = telemetry.FromContext(r.Context()).StreamOpened(streamOf(r)) // its row's name: "websocket"
	_ = nc.SetReadDeadline(time.Now().Add(initTimeout))
	go c.serve()
}

// traceHeaders keeps of an upgrade request's headers those its operations
// read (their trace id), not the whole request's for the socket's life.
func traceHeaders(h http.Header) http.Header {
	out := http.Header{}
	for _, k := range []string{"Traceparent", "Tracestate"} {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// The WebSocket close codes of the protocol (graphql-transport-ws).
const (
	// CloseForbidden: a connection refused at connection_init (a missing
	// or bad token).
	CloseForbidden = 4403
	// CloseDuplicateID: a subscribe with the id of an operation still
	// running ("Subscriber for <id> already exists").
	CloseDuplicateID = 4409
	// closeBadRequest: a message that is not one of the protocol's.
	closeBadRequest = 4400
	// closeUnauthorized: a subscribe before the connection was
	// acknowledged.
	closeUnauthorized = 4401
	// closeInitTimeout: no connection_init within initTimeout.
	closeInitTimeout = 4408
	// closeTooManyInits: a second connection_init.
	closeTooManyInits = 4429
)

// wsInit authenticates a WebSocket connection by the token of its
// connection_init payload, {"Authorization": "Bearer <JWT>"}. The
// connection's context then carries the viewer (for every operation on
// it) and what pipeline.WithSocket gives it: a count of its subscriptions, and
// no request loaders (a subscription's reads go through each event's
// loaders, never through a cache as long-lived as the socket).
func wsInit(ctx context.Context, a *auth.Authenticator, payload json.RawMessage) (context.Context, error) {
	var p map[string]any
	if len(payload) > 0 && json.Unmarshal(payload, &p) != nil {
		return nil, auth.ErrNoToken
	}
	h, _ := p["Authorization"].(string)
	if h == "" {
		h, _ = p["authorization"].(string)
	}
	if h == "" {
		return nil, auth.ErrNoToken
	}
	id, exp, err := a.Check(h)
	if err != nil {
		return nil, err
	}
	return pipeline.WithSocket(auth.WithToken(ctx, auth.Token{ID: id, Exp: exp})), nil
}
