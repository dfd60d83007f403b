package testenv

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// The one way tests send a GraphQL request over HTTP: Send (and Post, its
// form for goroutines, and the Env's e.Send) posts the request parameters
// as JSON to /query, in-process to a handler (the Env's, or Via's) or over
// the network to a running server (To, HTTPClient), changed by RequestOptions: a token
// (As, Bearer), headers (Header, Headers, Accept), a raw body of any
// method and media type (RawBody: a test of what is no GraphQL request),
// a GET with the parameters in the query string (GET), the client's
// address, a context, a stream left open (Stream).

// A RequestOption changes the request Send makes.
type RequestOption func(*request)

type request struct {
	method, contentType string
	body                []byte
	raw, get, stream    bool
	header              http.Header
	remoteAddr          string
	handler             http.Handler    // in-process (Via)
	url                 string          // over HTTP (To)
	client              *http.Client    // To's; nil: http.DefaultClient
	ctx                 context.Context // nil: none
	err                 error           // an option's failure
}

// Header sets a request header ("" removes it).
func Header(name, value string) RequestOption {
	return func(r *request) {
		if value == "" {
			r.header.Del(name)
			return
		}
		r.header.Set(name, value)
	}
}

// Headers sets every header of h.
func Headers(h map[string]string) RequestOption {
	return func(r *request) {
		for k, v := range h {
			r.header.Set(k, v)
		}
	}
}

// Accept sets the Accept header: the answer's media type (multipart/mixed
// for @defer's parts, text/event-stream for server-sent events).
func Accept(mediaTypes string) RequestOption { return Header("Accept", mediaTypes) }

// Bearer sends token in the Authorization header ("" for none).
func Bearer(token string) RequestOption {
	if token == "" {
		return Header("Authorization", "")
	}
	return Header("Authorization", "Bearer "+token)
}

// As sends the request with a token of viewer ("" for none), signed by the
// Env's authenticator when the request is made.
func (e *Env) As(viewer string) RequestOption {
	if viewer == "" {
		return Header("Authorization", "")
	}
	return func(r *request) {
		tok, err := e.Auth.Sign(viewer, time.Hour)
		if err != nil {
			r.err = fmt.Errorf("signing a token for %s: %w", viewer, err)
			return
		}
		r.header.Set("Authorization", "Bearer "+tok)
	}
}

// RawBody sends body as it is, with method and Content-Type contentType
// ("" for none), instead of the request parameters: for tests of what is
// no GraphQL request, or of a body the test writes itself.
func RawBody(method, contentType, body string) RequestOption {
	return func(r *request) { r.method, r.contentType, r.body, r.raw = method, contentType, []byte(body), true }
}

// GET sends the parameters as a GET request's query string (strings as
// they are, the others as JSON), as GraphQL over HTTP's GET does.
func GET() RequestOption { return func(r *request) { r.get = true } }

// RemoteAddr sets the client's address (host:port), in-process only.
func RemoteAddr(addr string) RequestOption { return func(r *request) { r.remoteAddr = addr } }

// Via sends the request in-process to h instead of the Env's handler.
func Via(h http.Handler) RequestOption { return func(r *request) { r.handler, r.url = h, "" } }

// To sends the request over HTTP to url (a server's /query).
func To(url string) RequestOption { return func(r *request) { r.url, r.handler = url, nil } }

// HTTPClient sends a request To a server with c instead of http.DefaultClient.
func HTTPClient(c *http.Client) RequestOption { return func(r *request) { r.client = c } }

// Context sends the request with ctx: its end cancels it.
func Context(ctx context.Context) RequestOption { return func(r *request) { r.ctx = ctx } }

// Stream leaves the answer's body unread for the caller to read (and
// close) as it comes: Raw.Response. A request To a server only.
func Stream() RequestOption { return func(r *request) { r.stream = true } }

// Raw is the answer to a request.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
	// Response is the answer with Stream, its body unread (Body is nil
	// then); the caller closes it.
	Response *http.Response
}

// Decode decodes the answer as a GraphQL response, failing the test if it
// is not one.
func (r Raw) Decode(tb testingTB) *Response {
	tb.Helper()
	res := &Response{Status: r.Status}
	if err := json.Unmarshal(r.Body, res); err != nil {
		tb.Fatalf("response is not JSON (%d): %s", r.Status, r.Body)
	}
	return res
}

// testingTB is the part of testing.TB that Decode needs.
type testingTB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Send sends the GraphQL request parameters params (query, variables,
// documentId, …) as JSON to /query, changed by opts, and returns the
// answer, failing tb if it cannot send it or read the answer. Without
// opts the request carries no token and goes nowhere: Via or To say
// where (e.Send: to the Env's handler).
func Send(tb testing.TB, params map[string]any, opts ...RequestOption) Raw {
	tb.Helper()
	res, err := Post(params, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// Send is Send to the Env's handler (unless opts say otherwise).
func (e *Env) Send(tb testing.TB, params map[string]any, opts ...RequestOption) Raw {
	tb.Helper()
	return Send(tb, params, append([]RequestOption{Via(e.Handler)}, opts...)...)
}

// Post is Send that fails no test, so any goroutine may call it: a request
// that cannot be made or sent, or an answer that cannot be read, is its
// error.
func Post(params map[string]any, opts ...RequestOption) (Raw, error) {
	r := &request{method: http.MethodPost, contentType: "application/json", header: http.Header{}}
	for _, o := range opts {
		o(r)
	}
	req, err := r.make(params)
	if err != nil {
		return Raw{}, err
	}
	if r.handler != nil {
		rec := httptest.NewRecorder()
		r.handler.ServeHTTP(rec, req)
		return Raw{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}, nil
	}
	c := r.client
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		return Raw{}, err
	}
	if r.stream {
		return Raw{Status: res.StatusCode, Header: res.Header, Response: res}, nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Raw{}, fmt.Errorf("reading the answer of %s %s: %w", req.Method, req.URL, err)
	}
	return Raw{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

// make makes the HTTP request r describes, of params.
func (r *request) make(params map[string]any) (*http.Request, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.handler == nil && r.url == "" {
		return nil, fmt.Errorf("a request to nowhere: give testenv.Via or testenv.To")
	}
	target := cmp.Or(r.url, "/query")
	var body io.Reader
	switch {
	case r.get:
		u, err := url.Parse(target)
		if err != nil {
			return nil, err
		}
		vals := url.Values{}
		for k, v := range params {
			if s, ok := v.(string); ok {
				vals.Set(k, s)
			} else if b, err := json.Marshal(v); err != nil {
				return nil, err
			} else {
				vals.Set(k, string(b))
			}
		}
		u.RawQuery = vals.Encode()
		target, r.method, r.contentType = u.String(), http.MethodGet, ""
	case !r.raw:
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	default:
		body = bytes.NewReader(r.body)
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var req *http.Request
	if r.handler != nil {
		req = httptest.NewRequestWithContext(ctx, r.method, target, body)
	} else {
		var err error
		if req, err = http.NewRequestWithContext(ctx, r.method, target, body); err != nil {
			return nil, err
		}
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.remoteAddr != "" {
		req.RemoteAddr = r.remoteAddr
	}
	return req, nil
}
