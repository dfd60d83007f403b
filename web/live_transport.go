package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// The transports of subscriptions: WebSocket on /query (graphql-transport-ws
// and the legacy graphql-ws subprotocol; the token in connection_init's
// payload) and server-sent events (POST /query with Accept:
// text/event-stream, graphql-sse's distinct connections mode; the token in
// the Authorization header).

// KeepAliveInterval is how often an idle subscription connection gets a
// keep-alive message, well inside common proxies' idle timeouts.
const KeepAliveInterval = 15 * time.Second

// wsConnKey holds a WebSocket request's *wsConn.
type wsConnKey struct{}

// wsConn is a WebSocket connection as its operations can reach it
// (pipeline.Connection): to close it with a code of their own (gqlgen closes
// it only with 1000 once it runs).
type wsConn struct {
	mu   sync.Mutex
	conn transport.WebsocketConn
}

// CloseWith starts the close handshake with code and reason and reports
// whether it could. The close frame follows what the connection has sent
// already; once it is sent nothing else is.
func (c *wsConn) CloseWith(code int, reason string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	return conn != nil && conn.WriteClose(code, reason) == nil
}

// liveAccept is gqlgen's coder/websocket implementation that also hands the
// accepted connection to the request's wsConn.
type liveAccept struct {
	transport.CoderWebsocketImplementation
}

func (a liveAccept) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := a.CoderWebsocketImplementation.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	conn = newWSGuard(conn)
	if c, ok := r.Context().Value(wsConnKey{}).(*wsConn); ok {
		c.mu.Lock()
		c.conn = conn
		c.mu.Unlock()
	}
	return conn, err
}

// liveWebsocket is gqlgen's WebSocket transport behind the CORS origin rule
// of /query, authenticating at connection_init.
type liveWebsocket struct {
	ws      transport.Websocket
	origins Origins
}

func newLiveWebsocket(a *auth.Authenticator, origins Origins, maxMessage int64) liveWebsocket {
	return liveWebsocket{origins: origins, ws: transport.Websocket{
		// A message is bounded as a POST's body is (-max-body).
		PayloadReadLimit: &maxMessage,
		// The origin is checked before (Do), by the CORS rule.
		Implementation: liveAccept{transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{InsecureSkipVerify: true}}},
		// graphql-ws (legacy) gets "ka" messages; graphql-transport-ws gets
		// pings, and a client that answers no pong for two intervals is
		// dropped (its subscriptions with it).
		KeepAlivePingInterval: KeepAliveInterval,
		PingPongInterval:      KeepAliveInterval,
		InitTimeout:           10 * time.Second,
		InitFunc:              wsInit(a),
	}}
}

// Supports takes a GET that asks to upgrade to a WebSocket.
func (t liveWebsocket) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (t liveWebsocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if o := r.Header.Get("Origin"); o != "" && !t.origins.AllowedOrigin(o) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
			"message": "this origin may not open subscriptions", "extensions": map[string]any{"code": codes.Forbidden}}}})
		return
	}
	c := &wsConn{}
	ctx := context.WithValue(pipeline.WithConnection(r.Context(), c), wsConnKey{}, c)
	t.ws.Do(w, r.WithContext(ctx), exec)
}

// wsInit authenticates a WebSocket connection by the token of its
// connection_init payload, {"Authorization": "Bearer <JWT>"}; a missing or
// bad token refuses the connection: a connection_error, then the close
// 4403 Forbidden that graphql-transport-ws prescribes (gqlgen's default,
// 1000, is a normal closure after which the graphql-ws client reconnects
// at once, without end). The connection's context then carries
// the viewer (for every operation on it) and what pipeline.WithSocket gives
// it: a count of its subscriptions, and no request loaders (a
// subscription's reads go through each event's loaders, never through a
// cache as long-lived as the socket).
func wsInit(a *auth.Authenticator) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		h := p.Authorization()
		if h == "" {
			return forbidden(ctx), nil, auth.ErrNoToken
		}
		id, exp, err := a.Check(h)
		if err != nil {
			return forbidden(ctx), nil, err
		}
		ctx = auth.WithToken(ctx, auth.Token{ID: id, Exp: exp})
		return pipeline.WithSocket(ctx), nil, nil
	}
}

// CloseForbidden is the WebSocket close code of a connection refused at
// connection_init (graphql-transport-ws: 4403 Forbidden).
const CloseForbidden = 4403

// forbidden makes gqlgen close a refused connection with 4403 Forbidden.
func forbidden(ctx context.Context) context.Context {
	return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, CloseForbidden), "Forbidden")
}
