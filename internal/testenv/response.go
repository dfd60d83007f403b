package testenv

import (
	"encoding/json"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// What a GraphQL request answers (Response, Error), and the Env's
// shortcuts of Send for an operation as a viewer (Do, Query, MustQuery,
// MustFail).

// Error is one GraphQL error of a response.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Response is a GraphQL response.
type Response struct {
	Status     int
	Data       json.RawMessage `json:"data"`
	Errors     []Error         `json:"errors"`
	Extensions struct {
		// Cost is extensions.cost (pipeline.Cost); nil without.
		Cost *pipeline.Cost `json:"cost"`
	} `json:"extensions"`
}

// MustCost returns the response's extensions.cost, failing tb without one.
func (r *Response) MustCost(tb testing.TB) pipeline.Cost {
	tb.Helper()
	if r.Extensions.Cost == nil {
		tb.Fatalf("the answer has no extensions.cost (data %s, errors %+v)", r.Data, r.Errors)
	}
	return *r.Extensions.Cost
}

// Codes lists the codes of the response's errors.
func (r *Response) Codes() []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Code())
	}
	return out
}

// Do posts a GraphQL request with the given Authorization header value ("" for none).
func (e *Env) Do(tb testing.TB, authorization, query string, vars map[string]any) *Response {
	tb.Helper()
	return e.Send(tb, map[string]any{"query": query, "variables": vars}, Header("Authorization", authorization)).Decode(tb)
}

// Query runs a query as viewer ("" for no token) and returns the response.
func (e *Env) Query(tb testing.TB, viewer, query string, vars map[string]any) *Response {
	tb.Helper()
	auth := ""
	if viewer != "" {
		auth = "Bearer " + e.Token(tb, viewer)
	}
	return e.Do(tb, auth, query, vars)
}

// MustQuery runs a query as viewer, fails the test on any error, and decodes
// data into out (a pointer) when out is not nil.
func (e *Env) MustQuery(tb testing.TB, viewer, query string, vars map[string]any, out any) {
	tb.Helper()
	res := e.Query(tb, viewer, query, vars)
	if len(res.Errors) > 0 {
		tb.Fatalf("query as %q failed: %+v\nquery: %s\nvars: %s", viewer, res.Errors, query, ShortJSON(vars))
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			tb.Fatalf("decoding %s: %v", res.Data, err)
		}
	}
}

// MustFail runs a query as viewer and fails the test unless it returns
// exactly one error with the given code; it returns that error.
func (e *Env) MustFail(tb testing.TB, viewer, code, query string, vars map[string]any) Error {
	tb.Helper()
	res := e.Query(tb, viewer, query, vars)
	if len(res.Errors) != 1 || res.Errors[0].Code() != code {
		tb.Fatalf("want one %s error, got %+v (data %s)\nquery: %s", code, res.Errors, res.Data, query)
	}
	return res.Errors[0]
}
