package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// The transport matrix: every protocol the handler serves (web.Protocols,
// read from the transports it registers) × every rule of the operation
// pipeline. Each cell asserts the refusal (its code, its HTTP status or
// close code, and zero DynamoDB calls) or the effect. A protocol without a
// driver here fails the test: a transport cannot be added without its rows.

// matrixResult is what one operation got over one protocol.
type matrixResult struct {
	status int // HTTP status (POST, SSE); 101 for a WebSocket
	close  int // a WebSocket's close code, when the server closed it instead of answering
	res    matrixResponse
	calls  int // the DynamoDB calls made while it ran
	// parts are every response of the operation, in order (res is the
	// first): several for an operation with @defer.
	parts []testenv.DeferPart
}

// matrixOp is one operation's request parameters; stream: a subscription
// the driver leaves open without waiting for a result; header: headers of
// the request, for the protocols that send one per operation (POST, GET,
// multipart/mixed).
type matrixOp struct {
	params map[string]any
	stream bool
	header map[string]string
}

func op(params map[string]any) matrixOp { return matrixOp{params: params} }

func q(query string) matrixOp { return op(map[string]any{"query": query}) }

type matrixResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []testenv.Error `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

func (r matrixResult) code() string {
	if len(r.res.Errors) == 0 {
		return ""
	}
	return r.res.Errors[0].Code()
}

// matrixDriver sends ops, one after the other (on one connection where the
// protocol has connections), as viewer's token, and returns what each got.
// calls reads the DynamoDB calls made so far.
type matrixDriver func(t *testing.T, srv *httptest.Server, token string, calls func() int, ops ...matrixOp) []matrixResult

// matrixTransport is one protocol's driver and what the matrix expects of
// it where protocols differ: adding a transport is its row in
// graph.transports and one entry here.
type matrixTransport struct {
	drive matrixDriver
	// refused and limited: the HTTP status of an operation refused before
	// it runs, and of one rate limited (a stream's and a socket's are
	// sent already: 200, 101).
	refused, limited int
	// tooLarge: the HTTP status of a request over the body limit; 0 for a
	// socket, whose message is closed with 1009.
	tooLarge int
	// subscription: how a subscription is refused where events cannot be
	// streamed (its code and HTTP status); empty where they stream.
	subscription matrixRefusal
	// oneBody: the Accept headers of a request answered with one JSON
	// body, where @defer is refused (406); nil where its parts are
	// delivered.
	oneBody []string
	// v02Accept: an Accept asking for graphql-js 17's incremental format
	// (its initial part has pending), where the protocol lets one choose.
	v02Accept string
}

// jsonAccepts are the Accept headers of a POST answered with one JSON body.
var jsonAccepts = []string{"", "application/json", "application/graphql-response+json"}

var matrixDrivers = map[string]matrixTransport{
	web.ProtocolPOST: {drive: postDriver, refused: http.StatusBadRequest, limited: http.StatusTooManyRequests,
		tooLarge: http.StatusRequestEntityTooLarge, subscription: refusedAs(codes.BadUserInput, http.StatusBadRequest),
		oneBody: jsonAccepts},
	// Whatever a GET accepts, it is answered with one JSON body; the URL's
	// query string is bounded as a body is; what a documentId names is a
	// subscription: 405.
	web.ProtocolGET: {drive: getDriver, refused: http.StatusBadRequest, limited: http.StatusTooManyRequests,
		tooLarge: http.StatusRequestURITooLong, subscription: refusedAs(codes.BadRequest, http.StatusMethodNotAllowed),
		oneBody: append(slices.Clone(jsonAccepts), "multipart/mixed;deferSpec=20220824, application/json", "text/event-stream",
			"multipart/mixed, text/event-stream")},
	web.ProtocolSSE: {drive: sseDriver, refused: http.StatusOK, limited: http.StatusOK, tooLarge: http.StatusRequestEntityTooLarge},
	// graphql-js 17's format as Apollo's GraphQL17Alpha9Handler asks.
	web.ProtocolMultipart: {drive: multipartDriver, refused: http.StatusBadRequest, limited: http.StatusTooManyRequests,
		tooLarge: http.StatusRequestEntityTooLarge, subscription: refusedAs(codes.BadUserInput, http.StatusBadRequest),
		v02Accept: "multipart/mixed;incrementalSpec=v0.2,application/json;q=0.9"},
	web.ProtocolGraphQLTransportWS: {drive: wsDriver("graphql-transport-ws", "next"), refused: http.StatusSwitchingProtocols,
		limited: http.StatusSwitchingProtocols},
	web.ProtocolGraphQLWS: {drive: wsDriver("graphql-ws", "data"), refused: http.StatusSwitchingProtocols,
		limited: http.StatusSwitchingProtocols},
}

// matrixRefusal is a refusal's code and HTTP status.
type matrixRefusal struct {
	code   string
	status int
}

func refusedAs(code string, status int) matrixRefusal { return matrixRefusal{code, status} }

// jsonDriver sends each operation through testenv's Send to srv, with the
// token, the operation's headers and the options opts, and decodes the one
// JSON body it gets.
func jsonDriver(opts ...testenv.RequestOption) matrixDriver {
	return func(t *testing.T, srv *httptest.Server, token string, calls func() int, ops ...matrixOp) []matrixResult {
		t.Helper()
		var out []matrixResult
		for _, op := range ops {
			before := calls()
			raw := testenv.Send(t, op.params, append([]testenv.RequestOption{testenv.To(srv.URL + "/query"), testenv.HTTPClient(srv.Client()),
				testenv.Bearer(token), testenv.Headers(op.header)}, opts...)...)
			res := matrixResult{status: raw.Status}
			if err := json.Unmarshal(raw.Body, &res.res); err != nil {
				t.Fatalf("HTTP %d with a body that is not JSON: %v", raw.Status, err)
			}
			res.calls = calls() - before
			out = append(out, res)
		}
		return out
	}
}

// postDriver posts each operation's parameters as a JSON body.
var postDriver = jsonDriver()

// getDriver sends each operation as a GET, its parameters in the URL's
// query string (variables and extensions as JSON); a subscription is
// answered at once (405), not streamed.
var getDriver = jsonDriver(testenv.GET())

func sseDriver(t *testing.T, srv *httptest.Server, token string, calls func() int, ops ...matrixOp) []matrixResult {
	t.Helper()
	var out []matrixResult
	for _, op := range ops {
		before := calls()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp := testenv.Send(t, op.params, testenv.To(srv.URL+"/query"), testenv.HTTPClient(srv.Client()), testenv.Accept("text/event-stream"),
			testenv.Bearer(token), testenv.Context(ctx), testenv.Stream()).Response
		r := matrixResult{status: resp.StatusCode}
		if op.stream && resp.StatusCode == http.StatusOK {
			// Left open until the test ends.
			t.Cleanup(func() { resp.Body.Close(); cancel() })
			out = append(out, r)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			_ = json.NewDecoder(resp.Body).Decode(&r.res)
		} else {
			sse := testenv.NewSSEReader(resp.Body)
			for ev, ok := sse.Next(); ok && ev.Type != "complete"; ev, ok = sse.Next() {
				var p testenv.DeferPart
				if err := json.Unmarshal([]byte(ev.Data), &p); err != nil {
					t.Fatalf("an SSE event that is not JSON: %s", ev.Data)
				}
				if r.parts = append(r.parts, p); len(r.parts) == 1 {
					_ = json.Unmarshal([]byte(ev.Data), &r.res)
				}
			}
		}
		resp.Body.Close()
		cancel()
		r.calls = calls() - before
		out = append(out, r)
	}
	return out
}

// multipartDriver posts each operation accepting multipart/mixed (Apollo
// Client's Defer20220824Handler's Accept for @defer, unless the operation
// sets its own): a refusal is one JSON body, an answer the parts of a
// multipart/mixed body, in either format.
func multipartDriver(t *testing.T, srv *httptest.Server, token string, calls func() int, ops ...matrixOp) []matrixResult {
	t.Helper()
	var out []matrixResult
	for _, op := range ops {
		before := calls()
		raw := testenv.Send(t, op.params, testenv.To(srv.URL+"/query"), testenv.HTTPClient(srv.Client()),
			testenv.Accept("multipart/mixed;deferSpec=20220824, application/json"), testenv.Bearer(token), testenv.Headers(op.header))
		r := matrixResult{status: raw.Status}
		if ct := raw.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/mixed") {
			r.parts = testenv.MultipartParts(t, ct, bytes.NewReader(raw.Body))
			if len(r.parts) == 0 {
				t.Fatalf("a multipart/mixed answer without parts (HTTP %d)", raw.Status)
			}
			first := r.parts[0]
			r.res = matrixResponse{Data: first.Data, Errors: first.Errors, Extensions: first.Extensions}
		} else if err := json.Unmarshal(raw.Body, &r.res); err != nil {
			t.Fatalf("HTTP %d, %s, with a body that is not JSON: %v", raw.Status, ct, err)
		}
		r.calls = calls() - before
		out = append(out, r)
	}
	return out
}

// wsDriver drives one of the WebSocket protocols through testenv's client:
// result is the protocol's message that carries a result.
func wsDriver(protocol, result string) matrixDriver {
	return func(t *testing.T, srv *httptest.Server, token string, calls func() int, ops ...matrixOp) []matrixResult {
		t.Helper()
		c, err := testenv.DialWSURL(t, srv.URL, testenv.WSProtocol(protocol), testenv.WSAuth("Bearer "+token))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		// read returns the next message, or the close code that ended the
		// connection instead.
		read := func() (testenv.WSMessage, int) {
			m, err := c.Read(ctx)
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return m, int(ce.Code)
			}
			if err != nil {
				t.Fatalf("reading the WebSocket: %v", err)
			}
			return m, 0
		}
		var out []matrixResult
		for i, op := range ops {
			id := fmt.Sprint(i + 1)
			before := calls()
			c.Start(t, id, op.params)
			r := matrixResult{status: http.StatusSwitchingProtocols}
			if op.stream {
				out = append(out, r)
				continue
			}
			gotError := false
			for {
				m, code := read()
				if code != 0 {
					r.close = code
					break
				}
				if m.ID != id {
					continue
				}
				if m.Type == result {
					_ = json.Unmarshal(m.Payload, &r.res)
					var p testenv.DeferPart
					_ = json.Unmarshal(m.Payload, &p)
					r.parts = append(r.parts, p)
					break
				}
				if m.Type == "error" {
					var errs []testenv.Error
					if json.Unmarshal(m.Payload, &errs) != nil {
						var one testenv.Error
						_ = json.Unmarshal(m.Payload, &one)
						errs = []testenv.Error{one}
					}
					r.res.Errors, gotError = errs, true
					break
				}
			}
			if r.close == 0 && !gotError {
				// Wait for the operation's end (complete; for a refusal
				// sent as "error", nothing follows).
				for typ := ""; typ != "complete" && typ != "error"; {
					m, code := read()
					if code != 0 {
						r.close = code
						break
					}
					if m.ID == id {
						typ = m.Type
						if typ == result { // a later part (@defer)
							var p testenv.DeferPart
							_ = json.Unmarshal(m.Payload, &p)
							r.parts = append(r.parts, p)
						}
					}
				}
			}
			r.calls = calls() - before
			out = append(out, r)
			if r.close != 0 {
				break
			}
		}
		return out
	}
}

// The documents of the matrix's manifest.
const (
	matrixMe       = "query Me { me { id name } }"
	matrixEvents   = "subscription Events($p: ID!) { projectEvents(projectId: $p) { kind } }"
	matrixRename   = `mutation { updateProfile(input: {name: "Mallory"}) { id name } }`
	matrixBigQuery = `{ me { projects(first: 10) { nodes { name tasks(first: 20) { nodes { title comments(first: 5) { nodes { body } } } } } } } }`
	// @defer where no parts are delivered: a mutation (owner deferred, a
	// non-null field) and a subscription (each event's task deferred).
	matrixDeferMutation = `mutation { createProject(input: {name: "Deferred owner"}) { id ... @defer { owner { name } } } }`
	matrixDeferEvents   = `subscription Events($p: ID!) { projectEvents(projectId: $p) { kind ... @defer { task { title } } } }`
)

func TestEveryRuleOnEveryTransport(t *testing.T) {
	for _, p := range web.Protocols() {
		if matrixDrivers[p].drive == nil {
			t.Errorf("the handler serves %q, which the matrix has no rows for", p)
		}
	}
	manifest := map[string]string{}
	for _, doc := range []string{matrixMe, matrixEvents} {
		manifest["sha256:"+sha(doc)] = doc
	}
	trusted, err := pipeline.ParseTrustedDocuments(testenv.MustMarshal(t, manifest))
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		protocol string
		tr       matrixTransport
		e        *testenv.Env
		seed     *testenv.Seed
		lv       *testenv.Live
		srv      *httptest.Server
		log      *testenv.LogBuffer
		drive    func(ops ...matrixOp) []matrixResult
	}
	start := func(t *testing.T, protocol string, o web.Options) *cell {
		e := testenv.New(t)
		seed := e.MustSeed(t)
		lb := &testenv.LogBuffer{}
		o.Log = slog.New(slog.NewTextHandler(lb, nil))
		a := e.App(o.Options)
		a.Config.MaxBodyBytes = o.MaxBodyBytes
		lv, srv := e.StartApp(t, a)
		c := &cell{protocol: protocol, tr: matrixDrivers[protocol], e: e, seed: seed, lv: lv, srv: srv, log: lb}
		token := e.Token(t, "alice")
		c.drive = func(ops ...matrixOp) []matrixResult {
			t.Helper()
			return c.tr.drive(t, srv, token, e.Calls.Total, ops...)
		}
		return c
	}
	// mustRefuse checks that r was refused with code, status, and no read.
	mustRefuse := func(t *testing.T, c *cell, i int, r matrixResult, code string, status int) {
		t.Helper()
		if r.code() != code || r.close != 0 || r.status != status || r.calls != 0 || len(r.res.Data) > 0 && string(r.res.Data) != "null" {
			t.Errorf("operation %d over %s: HTTP %d, close %d, code %q, %d DynamoDB calls, data %s; want HTTP %d, %s and none read",
				i, c.protocol, r.status, r.close, r.code(), r.calls, r.res.Data, status, code)
		}
	}
	mustRun := func(t *testing.T, c *cell, i int, r matrixResult, want string) {
		t.Helper()
		if len(r.res.Errors) > 0 || r.close != 0 || !strings.Contains(string(r.res.Data), want) {
			t.Errorf("operation %d over %s: close %d, errors %+v, data %s; want %q", i, c.protocol, r.close, r.res.Errors, r.res.Data, want)
		}
	}
	rules := []struct {
		name string
		opts web.Options
		run  func(t *testing.T, c *cell)
	}{
		{"production runs only trusted documents", web.Options{Options: pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: trusted}, Production: true}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q(matrixRename), q("{ me { id } }"),
					op(map[string]any{"documentId": "sha256:" + sha(matrixRename)}),
					op(map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(matrixRename)}}}),
					// then, on the same connection, trusted documents run
					op(map[string]any{"documentId": "sha256:" + sha(matrixMe)}),
					q(matrixMe),
					op(map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(matrixMe)}}}))
				if len(rs) != 7 {
					t.Fatalf("%d results: %+v", len(rs), rs)
				}
				mustRefuse(t, c, 1, rs[0], codes.TrustedDocumentRequired, c.tr.refused)
				mustRefuse(t, c, 2, rs[1], codes.TrustedDocumentRequired, c.tr.refused)
				mustRefuse(t, c, 3, rs[2], codes.PersistedQueryNotFound, c.tr.refused)
				mustRefuse(t, c, 4, rs[3], codes.PersistedQueryNotFound, c.tr.refused)
				for i := 4; i < 7; i++ {
					mustRun(t, c, i+1, rs[i], "Alice Example")
				}
				if strings.Contains(c.e.Dump(t), "Mallory") {
					t.Fatal("the untrusted mutation committed")
				}
				if n := strings.Count(c.log.String(), "outcome="+codes.TrustedDocumentRequired); n != 2 {
					t.Errorf("%d log lines of refused operations, want 2:\n%s", n, c.log)
				}
			}},
		{"production subscribes to a trusted document by documentId", web.Options{Options: pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: trusted}, Production: true}},
			func(t *testing.T, c *cell) {
				web := c.seed.Project("Website relaunch")
				sub := map[string]any{"documentId": "sha256:" + sha(matrixEvents), "variables": map[string]any{"p": web.ID}}
				if r := c.tr.subscription; r.code != "" { // no stream of events: refused at once
					mustRefuse(t, c, 1, c.drive(op(sub))[0], r.code, r.status)
					return
				}
				rs := c.drive(matrixOp{params: sub, stream: true})
				if rs[0].close != 0 || (rs[0].status != http.StatusOK && rs[0].status != http.StatusSwitchingProtocols) {
					t.Fatalf("%+v", rs[0])
				}
				testenv.WaitSubscribers(t, c.lv.Hub, web.ID, 1)
			}},
		{"operations are charged before they are parsed", web.Options{Options: pipeline.Options{Limits: pipeline.Limits{RateLimits: pipeline.RateLimits{RateOps: 0.001, RateOpsBurst: 2}}}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q("{ me { id "), q("{ me { nosuchfield } }"), q("{ me { id } }"))
				if len(rs) != 3 || rs[0].code() != "GRAPHQL_PARSE_FAILED" || rs[1].code() != "GRAPHQL_VALIDATION_FAILED" {
					t.Fatalf("want a parse failure, a validation failure, then RATE_LIMITED; got %+v", rs)
				}
				mustRefuse(t, c, 3, rs[2], codes.RateLimited, c.tr.limited)
			}},
		{"the deadline holds", web.Options{Options: pipeline.Options{Limits: pipeline.Limits{Timeout: time.Nanosecond}}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q(matrixBigQuery))
				if rs[0].code() != codes.ServiceUnavailable {
					t.Fatalf("over %s: want SERVICE_UNAVAILABLE, got %q %s", c.protocol, rs[0].code(), rs[0].res.Data)
				}
			}},
		{"production refuses introspection", web.Options{Options: pipeline.Options{Production: true}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q("{ __schema { queryType { name } } }"), q("{ __type(name: \"User\") { name } }"))
				for i, r := range rs {
					if r.code() != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.res.Errors[0].Message, "introspection") || r.calls != 0 {
						t.Errorf("operation %d over %s: %+v", i+1, c.protocol, r)
					}
				}
			}},
		{"shape and cost limits hold", web.Options{Options: pipeline.Options{Limits: pipeline.Limits{MaxAliases: 2, MaxDepth: 4}}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q("{ a: me { id } b: me { id } c: me { id } }"),
					q("{ me { projects(first: 100) { nodes { tasks(first: 100) { nodes { comments(first: 100) { nodes { body } } } } } } } }"),
					q("{ me { projects { nodes { tasks { nodes { project { tasks { nodes { id } } } } } } } } }"))
				for i, r := range rs {
					if r.code() != codes.Complexity || r.calls != 0 {
						t.Errorf("operation %d over %s: %q after %d calls, want %s before any", i+1, c.protocol, r.code(), r.calls, codes.Complexity)
					}
				}
			}},
		{"the body limit bounds every message", web.Options{MaxBodyBytes: 1024},
			func(t *testing.T, c *cell) {
				rs := c.drive(q("{ me { id } }" + strings.Repeat(" ", 2048)))
				if r := rs[0]; r.status != c.tr.tooLarge && r.close != int(websocket.StatusMessageTooBig) || r.calls != 0 {
					t.Fatalf("a 2 KiB operation with -max-body 1024 over %s: HTTP %d, close %d, %d calls, %+v", c.protocol, r.status, r.close, r.calls, r.res)
				}
			}},
		{"@defer is delivered in parts, or refused where it cannot be", web.Options{},
			func(t *testing.T, c *cell) {
				if c.tr.oneBody != nil { // one JSON body: refused before it runs
					// Whatever a GET accepts; a POST that accepts neither
					// multipart/mixed nor text/event-stream (it would be
					// their protocol's).
					var ops []matrixOp
					for _, accept := range c.tr.oneBody {
						ops = append(ops, matrixOp{params: map[string]any{"query": testenv.DeferDashboard}, header: map[string]string{"Accept": accept}})
					}
					for i, r := range c.drive(ops...) {
						mustRefuse(t, c, i+1, r, codes.BadRequest, http.StatusNotAcceptable)
					}
					if n := strings.Count(c.log.String(), "outcome="+codes.BadRequest); n != len(ops) || strings.Contains(c.log.String(), "level=ERROR") {
						t.Errorf("%d log lines of %d refusals, want one each and no error:\n%s", n, len(ops), c.log)
					}
					return
				}
				ops := []matrixOp{q(testenv.PlainDashboard), q(testenv.DeferDashboard)}
				if c.tr.v02Accept != "" { // and in graphql-js 17's format
					ops = append(ops, matrixOp{params: map[string]any{"query": testenv.DeferDashboard},
						header: map[string]string{"Accept": c.tr.v02Accept}})
				}
				rs := c.drive(ops...)
				mustRun(t, c, 1, rs[0], `"title"`)
				var want any
				if err := json.Unmarshal(rs[0].res.Data, &want); err != nil {
					t.Fatal(err)
				}
				for i, r := range rs[1:] {
					testenv.CheckDeferred(t, r.parts, want)
					if c.tr.v02Accept != "" && (i == 1) != (r.parts[0].Pending != nil) {
						t.Errorf("over %s, operation %d: the initial part's pending %v", c.protocol, i+2, r.parts[0].Pending)
					}
					if r.calls == 0 { // the batch window's timing splits batches: the pinned count is TestDeferPinnedCalls's
						t.Errorf("over %s: no DynamoDB call with @defer", c.protocol)
					}
				}
				if n := strings.Count(c.log.String(), "operation=Dashboard"); n != len(ops) {
					t.Errorf("%d log lines of the %d operations, want one each:\n%s", n, len(ops), c.log)
				}
			}},
		{"@defer in a mutation or a subscription is refused before it runs", web.Options{},
			func(t *testing.T, c *cell) {
				web := c.seed.Project("Website relaunch")
				rs := c.drive(q(matrixDeferMutation), op(map[string]any{"query": matrixDeferEvents, "variables": map[string]any{"p": web.ID}}),
					q(matrixMe))
				if len(rs) != 3 {
					t.Fatalf("%d results: %+v", len(rs), rs)
				}
				// The same refusal everywhere, GET included (before its 405
				// for what is not a query).
				for i, msg := range []string{"@defer is not supported in a mutation", "@defer is not supported in a subscription"} {
					mustRefuse(t, c, i+1, rs[i], "GRAPHQL_VALIDATION_FAILED", c.tr.refused)
					if len(rs[i].res.Errors) == 0 || !strings.HasPrefix(rs[i].res.Errors[0].Message, msg) {
						t.Errorf("operation %d over %s: %+v, want %q", i+1, c.protocol, rs[i].res.Errors, msg)
					}
				}
				mustRun(t, c, 3, rs[2], "Alice Example") // the connection goes on
				if strings.Contains(c.e.Dump(t), "Deferred owner") {
					t.Error("the mutation with @defer ran")
				}
				if n := c.lv.Hub.Subscribers(web.ID); n != 0 {
					t.Errorf("%d subscriptions of the project, want none", n)
				}
			}},
		{"each operation has its own loaders and call counter", web.Options{Options: pipeline.Options{Debug: true}},
			func(t *testing.T, c *cell) {
				rs := c.drive(q("{ me { id } }"), q("{ me { id name } }"))
				for i, r := range rs {
					d, _ := r.res.Extensions["dynamodb"].(map[string]any)
					if d == nil || d["total"] != float64(1) || r.calls != 1 {
						t.Errorf("operation %d over %s: %d calls, extensions %v, want dynamodb.total 1", i+1, c.protocol, r.calls, r.res.Extensions)
					}
				}
				if n := strings.Count(c.log.String(), "dynamodb_calls=1 "); n != 2 {
					t.Errorf("%d log lines with one call, want 2:\n%s", n, c.log)
				}
			}},
	}
	for _, rule := range rules {
		t.Run(rule.name, func(t *testing.T) {
			for _, p := range web.Protocols() {
				t.Run(p, func(t *testing.T) { rule.run(t, start(t, p, rule.opts)) })
			}
		})
	}
}
