package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// httpAnswer is what one GET or POST got.
type httpAnswer struct {
	status int
	header http.Header
	body   string
	res    struct {
		Data   json.RawMessage `json:"data"` // nil: no data entry ("null" for null)
		Errors []testenv.Error `json:"errors"`
	}
}

func (a httpAnswer) code() string {
	if len(a.res.Errors) == 0 {
		return ""
	}
	return a.res.Errors[0].Code()
}

// sendHTTP sends a GET with params in its URL (method GET) or a POST with
// them as its JSON body, as viewer's token, accepting accept ("" for no
// Accept header), to h.
func sendHTTP(t *testing.T, e *testenv.Env, h http.Handler, method, viewer, accept string, params map[string]any) httpAnswer {
	t.Helper()
	opts := []testenv.RequestOption{testenv.Via(h), e.As(viewer), testenv.Accept(accept)}
	if method == http.MethodGet {
		opts = append(opts, testenv.GET())
	}
	raw := e.Send(t, params, opts...)
	a := httpAnswer{status: raw.Status, header: raw.Header, body: string(raw.Body)}
	if err := json.Unmarshal(raw.Body, &a.res); err != nil {
		t.Fatalf("%s answered %d with a body that is not JSON: %q", method, raw.Status, a.body)
	}
	return a
}

func TestGETRunsAQueryWithAToken(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, c := range []struct {
		name, accept, mediaType string
		params                  map[string]any
	}{
		{"a query", "", "application/json", map[string]any{"query": "{ me { name } }"}},
		{"a named operation with variables", "application/json", "application/json",
			map[string]any{"query": "query A { me { id } } query B($n: Int) { me { name projects(first: $n) { nodes { id } } } }",
				"operationName": "B", "variables": map[string]any{"n": 1}}},
		{"accepting graphql-response+json", "application/graphql-response+json", "application/graphql-response+json",
			map[string]any{"query": "{ me { name } }"}},
		{"a query beside a mutation, selected by name", "", "application/json",
			map[string]any{"query": `query Q { me { name } } mutation M { updateProfile(input: {name: "Mallory"}) { id } }`, "operationName": "Q"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := sendHTTP(t, e, e.Handler, http.MethodGet, "alice", c.accept, c.params)
			if a.status != http.StatusOK || len(a.res.Errors) != 0 || a.res.Data == nil || !strings.Contains(string(a.res.Data), "Alice Example") {
				t.Fatalf("HTTP %d: %s", a.status, a.body)
			}
			if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, c.mediaType) {
				t.Errorf("Content-Type %q, want %s", ct, c.mediaType)
			}
		})
	}
	t.Run("without a token, UNAUTHENTICATED as over POST", func(t *testing.T) {
		a := sendHTTP(t, e, e.Handler, http.MethodGet, "", "", map[string]any{"query": "{ me { name } }"})
		if a.code() != codes.Unauthenticated {
			t.Fatalf("HTTP %d: %s", a.status, a.body)
		}
	})
}

func TestGETMutationIs405BeforeAnyRead(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const rename = `mutation Rename { updateProfile(input: {name: "Mallory"}) { id name } }`
	manifest := map[string]string{"sha256:" + sha(rename): rename}
	trusted, err := pipeline.ParseTrustedDocuments(testenv.MustMarshal(t, manifest))
	if err != nil {
		t.Fatal(err)
	}
	withDocs := e.NewHandler(pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: trusted}})
	for _, c := range []struct {
		name    string
		h       http.Handler
		params  map[string]any
		process bool // refused after the pipeline mapped its document (a documentId)
	}{
		{"a mutation", e.Handler, map[string]any{"query": rename}, false},
		{"a mutation selected by name beside a query", e.Handler,
			map[string]any{"query": "query Me { me { id } } " + rename, "operationName": "Rename"}, false},
		{"a subscription", e.Handler, map[string]any{"query": "subscription { projectEvents(projectId: \"x\") { kind } }"}, false},
		{"a trusted mutation by documentId", withDocs, map[string]any{"documentId": "sha256:" + sha(rename)}, true},
		{"a trusted mutation by persisted-query hash", withDocs,
			map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(rename)}}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Calls.Reset()
			a := sendHTTP(t, e, c.h, http.MethodGet, "alice", "application/json", c.params)
			if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != http.MethodPost || a.code() != codes.BadRequest ||
				!strings.Contains(a.res.Errors[0].Message, "POST") || a.res.Data != nil {
				t.Errorf("HTTP %d, Allow %q: %s; want 405, Allow: POST, one BAD_REQUEST and no data", a.status, a.header.Get("Allow"), a.body)
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls, want none", n)
			}
		})
	}
	if strings.Contains(e.Dump(t), "Mallory") {
		t.Fatal("a mutation sent as GET committed")
	}
	t.Run("the same mutation as POST runs", func(t *testing.T) {
		a := sendHTTP(t, e, e.Handler, http.MethodPost, "alice", "", map[string]any{"query": rename})
		if a.status != http.StatusOK || len(a.res.Errors) != 0 || !strings.Contains(a.body, "Mallory") {
			t.Fatalf("HTTP %d: %s", a.status, a.body)
		}
	})
}

func TestGETDocumentID(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const doc = "query Projects($n: Int) { me { name projects(first: $n) { nodes { name } } } }"
	trusted, err := pipeline.ParseTrustedDocuments(testenv.MustMarshal(t, map[string]string{"sha256:" + sha(doc): doc}))
	if err != nil {
		t.Fatal(err)
	}
	for _, prod := range []bool{false, true} {
		h := e.NewHandler(pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: trusted}, Production: prod})
		a := sendHTTP(t, e, h, http.MethodGet, "alice", "", map[string]any{"documentId": "sha256:" + sha(doc), "variables": map[string]any{"n": 1}})
		if a.status != http.StatusOK || len(a.res.Errors) != 0 || !strings.Contains(a.body, "Alice Example") || strings.Count(a.body, `"name"`) != 2 {
			t.Errorf("production %v: HTTP %d: %s; want alice and one project", prod, a.status, a.body)
		}
		a = sendHTTP(t, e, h, http.MethodGet, "alice", "", map[string]any{"documentId": "sha256:" + sha("{ me { id } }")})
		if a.status != http.StatusBadRequest || a.code() != codes.PersistedQueryNotFound || a.res.Data != nil {
			t.Errorf("production %v, an unknown id: HTTP %d: %s; want 400 PERSISTED_QUERY_NOT_FOUND", prod, a.status, a.body)
		}
	}
	t.Run("in production, a text that is not trusted", func(t *testing.T) {
		h := e.NewHandler(pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: trusted}, Production: true})
		a := sendHTTP(t, e, h, http.MethodGet, "alice", "", map[string]any{"query": "{ me { id } }"})
		if a.status != http.StatusBadRequest || a.code() != codes.TrustedDocumentRequired {
			t.Errorf("HTTP %d: %s; want 400 TRUSTED_DOCUMENT_REQUIRED", a.status, a.body)
		}
	})
}

func TestGETParametersAndURLLength(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	h := e.NewHTTPHandler(web.Options{MaxBodyBytes: 1024})
	for _, c := range []struct {
		name, rawQuery string
		status         int
	}{
		{"variables that are not JSON", "query=" + url.QueryEscape("{ me { id } }") + "&variables=%7B", http.StatusBadRequest},
		{"variables that are a list", "query=" + url.QueryEscape("{ me { id } }") + "&variables=%5B%5D", http.StatusBadRequest},
		{"extensions that are a string", "query=" + url.QueryEscape("{ me { id } }") + "&extensions=%22x%22", http.StatusBadRequest},
		{"query given twice", "query=a&query=b", http.StatusBadRequest},
		{"a malformed query string", "query=%zz", http.StatusBadRequest},
		{"no query", "", http.StatusBadRequest},
		{"a query string longer than -max-body", "query=" + url.QueryEscape("{ me { id } }"+strings.Repeat(" ", 1100)), http.StatusRequestURITooLong},
		{"one just within it", "query=" + url.QueryEscape("{ me { id } }"+strings.Repeat(" ", 900)), http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Calls.Reset()
			// A query string as it is, malformed ones included: not testenv's GET.
			req := httptest.NewRequest(http.MethodGet, "/query?"+c.rawQuery, nil)
			req.Header.Set("Authorization", "Bearer "+e.Token(t, "alice"))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var res struct {
				Data   json.RawMessage
				Errors []testenv.Error
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
				t.Fatalf("HTTP %d, not JSON: %q", rec.Code, rec.Body)
			}
			if rec.Code != c.status {
				t.Fatalf("HTTP %d: %s; want %d", rec.Code, rec.Body, c.status)
			}
			if c.status != http.StatusOK && (len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest || e.Calls.Total() != 0) {
				t.Errorf("%s after %d calls; want one BAD_REQUEST and none", rec.Body, e.Calls.Total())
			}
		})
	}
}

// TestRequestErrorStatusesByAccept: a request error (the document does not
// parse or validate, its variables do not coerce) is answered without a
// data entry, 200 with application/json (legacy clients drop the body of
// any other status) and 400 with application/graphql-response+json, over
// POST and GET alike; a request with no query is 400 with either.
func TestRequestErrorStatusesByAccept(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	cases := []struct {
		name   string
		params map[string]any
		code   string
		json   int // the status with application/json (and with no Accept)
	}{
		{"a parse failure", map[string]any{"query": "{"}, "GRAPHQL_PARSE_FAILED", http.StatusOK},
		{"a validation failure", map[string]any{"query": "{ me { nosuchfield } }"}, "GRAPHQL_VALIDATION_FAILED", http.StatusOK},
		{"a variable coercion failure", map[string]any{"query": "query($id: ID!) { task(id: $id) { id } }", "variables": map[string]any{"id": nil}},
			"GRAPHQL_VALIDATION_FAILED", http.StatusOK},
		{"an operation that cannot be determined", map[string]any{"query": "query A { me { id } } query B { me { id } }"},
			"GRAPHQL_VALIDATION_FAILED", http.StatusOK},
		{"a cost past the limit", map[string]any{"query": strings.Repeat("{ a: me { id } b: me { id } ", 1) + strings.Repeat(" ", 1) +
			"c: me { projects(first: 100) { nodes { tasks(first: 100) { nodes { comments(first: 100) { nodes { body } } } } } } } }"},
			codes.Complexity, http.StatusOK},
		{"no query", map[string]any{"qeury": "{ me { id } }"}, codes.BadRequest, http.StatusBadRequest},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, c := range cases {
			for _, accept := range []string{"application/json", "", "*/*", "application/graphql-response+json"} {
				want, mt := c.json, "application/json"
				if accept == "application/graphql-response+json" {
					want, mt = http.StatusBadRequest, accept
				}
				t.Run(method+" "+c.name+" accepting "+accept, func(t *testing.T) {
					e.Calls.Reset()
					a := sendHTTP(t, e, e.Handler, method, "alice", accept, c.params)
					if a.status != want || a.code() != c.code || a.res.Data != nil || e.Calls.Total() != 0 {
						t.Errorf("HTTP %d, %d calls: %s; want %d, %s, no data entry and no call", a.status, e.Calls.Total(), a.body, want, c.code)
					}
					if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, mt) {
						t.Errorf("Content-Type %q, want %s", ct, mt)
					}
				})
			}
		}
	}
	t.Run("a field error keeps its data and 200 with either", func(t *testing.T) {
		for _, accept := range []string{"application/json", "application/graphql-response+json"} {
			a := sendHTTP(t, e, e.Handler, http.MethodPost, "alice", accept, map[string]any{"query": `{ tasksByTag(tag: "no such tag!") { edges { cursor } } }`})
			if a.status != http.StatusOK || a.res.Data == nil || a.code() != codes.BadUserInput {
				t.Errorf("accepting %s: HTTP %d: %s; want 200, data and BAD_USER_INPUT", accept, a.status, a.body)
			}
		}
	})
}
