package testenv

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A RequestOption changes the request Send makes.
type RequestOption func(*request)

type request struct {
	tb                  testing.TB // Send's
	method, contentType string
	body                []byte
	raw                 bool
	header              http.Header
	remoteAddr          string
	handler             http.Handler
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

// As sends the request with a token of viewer ("" for none), signed when
// Send sends it (failing Send's tb).
func (e *Env) As(viewer string) RequestOption {
	if viewer == "" {
		return Header("Authorization", "")
	}
	return func(r *request) { r.header.Set("Authorization", "Bearer "+e.Token(r.tb, viewer)) }
}

// RawBody sends body as it is, with method and Content-Type contentType
// ("" for none), instead of the request parameters.
func RawBody(method, contentType, body string) RequestOption {
	return func(r *request) { r.method, r.contentType, r.body, r.raw = method, contentType, []byte(body), true }
}

// RemoteAddr sets the client's address (host:port).
func RemoteAddr(addr string) RequestOption { return func(r *request) { r.remoteAddr = addr } }

// Via sends the request to h instead of the Env's handler.
func Via(h http.Handler) RequestOption { return func(r *request) { r.handler = h } }

// Raw is the answer to a request.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
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

// Send posts the GraphQL request parameters params (query, variables,
// documentId, …) as JSON to the Env's handler, changed by opts, and
// returns the answer, failing tb if it cannot send it. Without opts the
// request carries no token.
func (e *Env) Send(tb testing.TB, params map[string]any, opts ...RequestOption) Raw {
	tb.Helper()
	r := &request{tb: tb, method: http.MethodPost, contentType: "application/json", header: http.Header{}, handler: e.Handler}
	for _, o := range opts {
		o(r)
	}
	if !r.raw {
		b, err := json.Marshal(params)
		if err != nil {
			tb.Fatal(err)
		}
		r.body = b
	}
	req := httptest.NewRequest(r.method, "/query", bytes.NewReader(r.body))
	req.Header = r.header
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.remoteAddr != "" {
		req.RemoteAddr = r.remoteAddr
	}
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	return Raw{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}
