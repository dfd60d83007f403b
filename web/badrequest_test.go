package web_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// What is no GraphQL request (badRequest): refused with coded errors, and
// nothing of it quoted back.

func TestRequestErrorsCarryCodes(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	cases := []struct {
		name, method, contentType, body string
		clientError                     bool // the client's mistake: not INTERNAL_SERVER_ERROR
	}{
		{"an empty query", http.MethodPost, "application/json", `{"query": ""}`, true},
		{"an unknown operation name", http.MethodPost, "application/json", `{"query": "{ me { id } }", "operationName": "Nope"}`, true},
		{"two operations and no name", http.MethodPost, "application/json", `{"query": "query A { me { id } } query B { me { name } }"}`, true},
		{"a subscription", http.MethodPost, "application/json", `{"query": "subscription { x }"}`, true},
		{"a body that is not JSON", http.MethodPost, "application/json", `{"query": "{ me { id } }"`, true},
		{"an empty body", http.MethodPost, "application/json", ``, true},
		{"variables that are not an object", http.MethodPost, "application/json", `{"query": "{ me { id } }", "variables": "x"}`, true},
		{"a body that is not JSON but text", http.MethodPost, "text/plain", `{"query": "{ me { id } }"}`, true},
		{"a GET request", http.MethodGet, "", ``, true},
	}
	for _, c := range cases {
		t.Run(c.name+" is answered with coded errors", func(t *testing.T) {
			raw := e.Send(t, nil, e.As("alice"), testenv.RawBody(c.method, c.contentType, c.body))
			status, res := raw.Status, raw.Decode(t)
			codes := res.Codes()
			if len(codes) == 0 {
				t.Fatalf("no error (%d); data %s", status, res.Data)
			}
			if slices.Contains(codes, "") {
				t.Errorf("an error has no extensions.code: %+v", res.Errors)
			}
			if c.clientError && slices.Contains(codes, "INTERNAL_SERVER_ERROR") {
				t.Errorf("the client's mistake is reported as INTERNAL_SERVER_ERROR (HTTP %d): %+v", status, res.Errors)
			}
		})
	}
}

func TestMalformedBodiesAreNotEchoed(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const marker = "Zq7MARKERx"
	for _, body := range []string{
		`{"query": "{ me { name } }` + marker + `"`, // cut short
		`{"query": 1, "` + marker + `": 2}`,
		`{"query": "{ me { name } }", "variables": "` + marker + `"}`,
		`{"query": "{ me { name } }", "operationName": ["` + marker + `"]}`,
		`{"query": "{ me { name } }", "extensions": "` + marker + `"}`,
		`[{"query": "` + marker + `"}]`,
		marker,
		`{"query": "{ me { name } }"} ` + marker,
	} {
		t.Run(body, func(t *testing.T) {
			raw := e.Send(t, nil, e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", body))
			status, res := raw.Status, raw.Decode(t)
			if status != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_REQUEST" {
				t.Fatalf("HTTP %d, errors %+v; want 400 and one BAD_REQUEST", status, res.Errors)
			}
			if strings.Contains(res.Errors[0].Message, marker) || strings.Contains(res.Errors[0].Message, "RawParams") {
				t.Fatalf("the message quotes the request or names internals: %q", res.Errors[0].Message)
			}
		})
	}
	t.Run("a well-formed request still runs", func(t *testing.T) {
		raw := e.Send(t, nil, e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", `{"query": "{ me { name } }", "variables": null}`))
		status, res := raw.Status, raw.Decode(t)
		if status != http.StatusOK || len(res.Errors) != 0 || !strings.Contains(string(res.Data), "Alice") {
			t.Fatalf("HTTP %d, errors %+v, data %s", status, res.Errors, res.Data)
		}
	})
}
