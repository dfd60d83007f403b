package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/live"
)

// Live is an Env's live-updates stack: an embedded NATS broker (in memory)
// and the instance's hub, closed when the Env's test ends.
type Live struct {
	Broker *live.Broker
	Hub    *live.Hub
}

// StartLive starts the Env's App (app.App, the server's own) with the
// handler's options o and the hub's configuration hub, and serves its
// handler on an httptest server for WebSocket clients (URL): see App and
// StartApp.
func (e *Env) StartLive(tb testing.TB, o pipeline.Options, hub live.HubConfig) (*Live, *httptest.Server) {
	tb.Helper()
	a := e.App(o)
	a.Config.Hub = hub
	return e.StartApp(tb, a)
}

// App returns an App on the Env's store and authenticator, for StartApp:
// o's limits, modes and hooks, and its log, telemetry and trusted
// documents (its other dependencies are the App's: the store's clock, the
// hub); an embedded broker in memory; no listener of its own and no
// background workers (tests that pin DynamoDB calls run them by hand). A
// test changes its Config before StartApp (CORS origins, the body limit).
func (e *Env) App(o pipeline.Options) *app.App {
	return &app.App{Store: e.Store, Auth: e.Auth, Log: o.Log, Telemetry: o.Telemetry, TrustedDocuments: o.TrustedDocuments,
		Config: app.Config{Limits: o.Limits, Production: o.Production, Debug: o.Debug},
		Hooks:  app.Hooks{Graph: o.Hooks, NoListen: true, NoBackground: true}}
}

// StartApp opens a (made by App) and serves its handler, which becomes the
// Env's, on an httptest server; closed, the outbox flushed, when the test
// that made the Env ends. A failure to start fails tb.
func (e *Env) StartApp(tb testing.TB, a *app.App) (*Live, *httptest.Server) {
	tb.Helper()
	if err := a.Open(context.Background()); err != nil {
		tb.Fatalf("starting the App: %v", err)
	}
	e.Handler = a.Handler
	srv := httptest.NewServer(e.Handler)
	e.onEnd(tb, func() {
		a.Hub.Close() // event streams end, so that srv.Close need not wait for them
		srv.Close()
		_ = a.Close()
	})
	e.Calls.Reset()
	return &Live{Broker: a.Broker, Hub: a.Hub}, srv
}

// WSClient is the tests' WebSocket client of /query: one connection,
// operations by id, in either protocol the server speaks
// (graphql-transport-ws, or the legacy graphql-ws). Its methods that can
// fail take the tb of the test or subtest they run in, as the Env's do: a
// connection may serve several subtests.
type WSClient struct {
	Conn *websocket.Conn
	// Protocol is the negotiated subprotocol.
	Protocol string
}

// WSMessage is one message of either protocol.
type WSMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// A WSOption changes how DialWSURL connects.
type WSOption func(*wsDial)

type wsDial struct {
	protocol, origin, authorization string
	readLimit                       int64
}

// WSProtocol sets the subprotocol (default graphql-transport-ws).
func WSProtocol(p string) WSOption { return func(d *wsDial) { d.protocol = p } }

// WSOrigin sends an Origin header, as a page of origin would.
func WSOrigin(origin string) WSOption { return func(d *wsDial) { d.origin = origin } }

// WSAuth sends authorization (an Authorization header value) in
// connection_init; without it, no token.
func WSAuth(authorization string) WSOption {
	return func(d *wsDial) { d.authorization = authorization }
}

// WSReadLimit sets the largest message the client reads (default 1 MiB).
func WSReadLimit(n int64) WSOption { return func(d *wsDial) { d.readLimit = n } }

// DialWS opens a graphql-transport-ws connection to srv's /query and sends
// connection_init with authorization ("" sends no token); it returns the
// client and the server's answer to the init (connection_ack, or the
// close error).
func DialWS(tb testing.TB, srv *httptest.Server, authorization string) (*WSClient, error) {
	tb.Helper()
	return DialWSURL(tb, srv.URL, WSAuth(authorization))
}

// MustDialWS is DialWS with a token of viewer, failing tb unless the
// server acknowledges the connection.
func (e *Env) MustDialWS(tb testing.TB, srv *httptest.Server, viewer string) *WSClient {
	tb.Helper()
	c, err := DialWS(tb, srv, "Bearer "+e.Token(tb, viewer))
	if err != nil {
		tb.Fatalf("connecting as %s: %v", viewer, err)
	}
	return c
}

// DialWSFrom is DialWS from a page of origin ("" sends no Origin header).
func DialWSFrom(tb testing.TB, srv *httptest.Server, origin, authorization string) (*WSClient, error) {
	tb.Helper()
	return DialWSURL(tb, srv.URL, WSOrigin(origin), WSAuth(authorization))
}

// DialWSURL opens a connection to the /query of the server at base (an
// http: URL), sends connection_init and waits for connection_ack.
func DialWSURL(tb testing.TB, base string, opts ...WSOption) (*WSClient, error) {
	tb.Helper()
	d := wsDial{protocol: "graphql-transport-ws", readLimit: 1 << 20}
	for _, o := range opts {
		o(&d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(base, "http") + "/query"
	dopts := &websocket.DialOptions{Subprotocols: []string{d.protocol}}
	if d.origin != "" {
		dopts.HTTPHeader = http.Header{"Origin": {d.origin}}
	}
	c, _, err := websocket.Dial(ctx, url, dopts)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(d.readLimit)
	tb.Cleanup(func() { _ = c.CloseNow() })
	w := &WSClient{Conn: c, Protocol: d.protocol}
	payload := map[string]any{}
	if d.authorization != "" {
		payload["Authorization"] = d.authorization
	}
	w.Send(tb, WSMessage{Type: "connection_init", Payload: mustJSON(tb, payload)})
	m, err := w.Read(ctx)
	if err != nil {
		return nil, err
	}
	if m.Type != "connection_ack" {
		return nil, fmt.Errorf("want connection_ack, got %s %s", m.Type, m.Payload)
	}
	return w, nil
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Send writes one message.
func (w *WSClient) Send(tb testing.TB, m WSMessage) {
	tb.Helper()
	b, _ := json.Marshal(m)
	if err := w.Conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		tb.Fatalf("writing %s: %v", m.Type, err)
	}
}

// Subscribe starts an operation with the given id.
func (w *WSClient) Subscribe(tb testing.TB, id, query string, vars map[string]any) {
	tb.Helper()
	w.Start(tb, id, map[string]any{"query": query, "variables": vars})
}

// Start starts an operation with the given id and request parameters
// (query, variables, documentId, extensions): "subscribe", or "start" on
// the legacy protocol.
func (w *WSClient) Start(tb testing.TB, id string, params map[string]any) {
	tb.Helper()
	typ := "subscribe"
	if w.Protocol == "graphql-ws" {
		typ = "start"
	}
	w.Send(tb, WSMessage{ID: id, Type: typ, Payload: mustJSON(tb, params)})
}

// Read returns the next message other than a keep-alive, answering pings
// with pongs as graphql-transport-ws clients do.
func (w *WSClient) Read(ctx context.Context) (WSMessage, error) {
	for {
		_, b, err := w.Conn.Read(ctx)
		if err != nil {
			return WSMessage{}, err
		}
		var m WSMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return WSMessage{}, fmt.Errorf("a message that is not JSON: %s", b)
		}
		if m.Type == "ping" {
			if err := w.Conn.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`)); err != nil {
				return WSMessage{}, err
			}
		}
		if m.Type == "ping" || m.Type == "pong" || m.Type == "ka" {
			continue
		}
		return m, nil
	}
}

// MustRead is Read within 30 seconds, failing the test on an error.
func (w *WSClient) MustRead(tb testing.TB) WSMessage {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := w.Read(ctx)
	if err != nil {
		tb.Fatalf("reading from the WebSocket: %v", err)
	}
	return m
}

// Next is one "next" payload: a GraphQL response.
type Next struct {
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// MustNext reads the next message and fails unless it is a "next" of
// operation id; it returns its payload.
func (w *WSClient) MustNext(tb testing.TB, id string) Next {
	tb.Helper()
	m := w.MustRead(tb)
	if m.Type != "next" || m.ID != id {
		tb.Fatalf("want next of %s, got %s of %s: %s", id, m.Type, m.ID, m.Payload)
	}
	var n Next
	if err := json.Unmarshal(m.Payload, &n); err != nil {
		tb.Fatalf("decoding %s: %v", m.Payload, err)
	}
	return n
}

// WaitSubscribers waits until the hub has n subscriptions of project.
func WaitSubscribers(tb testing.TB, h *live.Hub, project string, n int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.Subscribers(project) != n {
		if time.Now().After(deadline) {
			tb.Fatalf("want %d subscribers of %s, have %d", n, project, h.Subscribers(project))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// MustOpenSSE opens a subscription over server-sent events (POST /query,
// Accept: text/event-stream, graphql-sse's distinct connections mode) with
// the Authorization header authorization. The stream lasts until the test
// ends or the caller closes the response's body.
func MustOpenSSE(tb testing.TB, srv *httptest.Server, authorization, query string, vars map[string]any) *http.Response {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	raw := Send(tb, map[string]any{"query": query, "variables": vars}, To(srv.URL+"/query"), HTTPClient(srv.Client()),
		Accept("text/event-stream"), Header("Authorization", authorization), Context(ctx), Stream())
	tb.Cleanup(func() { raw.Response.Body.Close() })
	return raw.Response
}
