package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Fuzz tests of the HTTP handler and the scalars: whatever a client sends,
// the server answers JSON with coded errors and says nothing of its
// internals. Each runs its seed corpus under plain `go test`;
// `go test ./graph -run '^$' -fuzz FuzzHandler` explores further.

// fzContentTypes are the Content-Type headers a fuzzed request may carry.
var fzContentTypes = []string{
	"application/json",
	"application/json; charset=utf-8",
	"application/graphql-response+json",
	"text/plain",
	"",
	"application/x-www-form-urlencoded",
	"multipart/form-data; boundary=x",
	"application/graphql",
	"APPLICATION/JSON",
	"application/json; charset=",
	"application/json; =",
}

// fzCodes are the extensions.code values a response may carry: the
// contract's, gqlgen's, and BAD_REQUEST (the project's own extension for
// requests that are no GraphQL request at all).
var fzCodes = map[string]bool{
	"UNAUTHENTICATED": true, "FORBIDDEN": true, "NOT_FOUND": true, "BAD_USER_INPUT": true, "CONFLICT": true,
	"GRAPHQL_PARSE_FAILED": true, "GRAPHQL_VALIDATION_FAILED": true, "COMPLEXITY_LIMIT_EXCEEDED": true,
	"SERVICE_UNAVAILABLE": true, "INTERNAL_SERVER_ERROR": true, "BAD_REQUEST": true,
}

// fzBody builds a JSON request body.
func fzBody(query string, vars map[string]any) []byte {
	m := map[string]any{"query": query}
	if vars != nil {
		m["variables"] = vars
	}
	b, _ := json.Marshal(m)
	return b
}

type fzResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []fzError       `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

type fzError struct {
	Message    *string        `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func FuzzHandler(f *testing.F) {
	e := testenv.New(f)
	s := e.MustSeed(f)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	task := s.Task("Write the landing page copy").ID
	labTask := s.Task("Benchmark the new model").ID
	var comment string
	for _, c := range s.Comments {
		if c.TaskID == task {
			comment = c.ID
			break
		}
	}
	auths := []string{
		"Bearer " + e.Token(f, "alice"), // a member of two projects
		"",                              // no token
		"Bearer " + e.Token(f, "eve"),   // a profile, no project
		"Bearer " + e.Token(f, "nobody"),
		"Bearer not.a.token",
		"Basic YWxpY2U6c2VjcmV0",
	}
	table := e.Store.Table()
	internals := []string{"dynamo", "minidyn", "goroutine", "panic", strings.ToLower(table), "127.0.0.1",
		"transactwrite", "conditionalcheck", "batchgetitem", "runtime error"}

	seeds := [][]byte{
		fzBody(`{ me { id name email projects { nodes { id name } } } }`, nil),
		fzBody(`query($id: ID!) { project(id: $id) { id name members { role user { id name } }
			tasks(first: 5) { edges { cursor node { id dueDate tags { name } } } pageInfo { hasNextPage endCursor } } } }`,
			map[string]any{"id": web}),
		fzBody(`query($id: ID!) { project(id: $id) { id } }`, map[string]any{"id": lab}),
		fzBody(`query($id: ID!) { task(id: $id) { id title comments(first: 2, after: "YzE6") { nodes { id } } } }`,
			map[string]any{"id": task}),
		fzBody(`query($id: ID!) { node(id: $id) { id ... on Comment { body author { name } } } }`, map[string]any{"id": comment}),
		fzBody(`query($id: ID!) { node(id: $id) { __typename id } }`, map[string]any{"id": labTask}),
		fzBody(`{ node(id: "prj#not-a-ulid") { id } }`, nil),
		fzBody(`{ user(id: "bob") { id name email assignedTasks { nodes { id } } overdueTasks(asOf: "2026-02-30") { nodes { id } } } }`, nil),
		fzBody(`{ user(id: "a#b") { id } }`, nil),
		fzBody(`{ tasksByTag(tag: " URGENT ", first: 3) { nodes { id project { name } } pageInfo { endCursor } } }`, nil),
		fzBody(`{ tasksByTag(tag: "bad tag!", first: 0) { nodes { id } } }`, nil),
		fzBody(`{ me { projects(first: 101) { nodes { id } } } }`, nil),
		fzBody(`{ me { assignedTasks(first: 2, after: "garbage") { nodes { id } } } }`, nil),
		fzBody(`{ __schema { types { name } } }`, nil),
		fzBody(`{ __type(name: "Task") { fields { name } } }`, nil),
		fzBody(`mutation($input: CreateTaskInput!) { createTask(input: $input) { id version tags { name } } }`,
			map[string]any{"input": map[string]any{"projectId": web, "title": "Fuzz", "dueDate": "2026-09-01",
				"assigneeId": "bob", "tags": []string{"A", "a", " b "}}}),
		fzBody(`mutation($input: CreateTaskInput!) { createTask(input: $input) { id } }`,
			map[string]any{"input": map[string]any{"projectId": web, "title": "x", "dueDate": 20260901}}),
		fzBody(`mutation($input: UpdateTaskInput!) { updateTask(input: $input) { id version } }`,
			map[string]any{"input": map[string]any{"id": task, "expectedVersion": 999, "status": "DONE"}}),
		fzBody(`mutation($input: UpdateTaskInput!) { updateTask(input: $input) { id version } }`,
			map[string]any{"input": map[string]any{"id": task, "title": nil}}),
		fzBody(`mutation($input: AddCommentInput!) { addComment(input: $input) { id body } }`,
			map[string]any{"input": map[string]any{"taskId": labTask, "body": "hi"}}),
		fzBody(`mutation { deleteComment(id: "cmt#01ARZ3NDEKTSV4RRFFQ69G5FAV#01ARZ3NDEKTSV4RRFFQ69G5FAV") }`, nil),
		fzBody(`mutation { deleteProject(id: "prj#01ARZ3NDEKTSV4RRFFQ69G5FAV") }`, nil),
		fzBody(`mutation { removeProjectMember(projectId: "`+web+`", userId: "alice") { id } }`, nil),
		fzBody(`mutation { updateProfile(input: {name: "  ", email: "a@@b"}) { id } }`, nil),
		fzBody(`query A { me { id } } query B { me { name } }`, nil),
		fzBody(`subscription { me { id } }`, nil),
		fzBody(`{ me { projects(first: 100) { nodes { tasks(first: 100) { nodes { comments(first: 100) { nodes { id } } } } } } } }`, nil),
		fzBody(`{ me { id ...F } } fragment F on User { ...F }`, nil),
		fzBody(`{ me { id `, nil),
		fzBody(`{ me(x: 1) { id } }`, nil),
		[]byte(`{"query": "{ me { id } }", "variables": "x"}`),
		[]byte(`{"query": "{ me { id } }", "operationName": "Nope"}`),
		[]byte(`{"query": 42}`),
		[]byte(`{"query": "query($f: Int) { me { projects(first: $f) { nodes { id } } } }", "variables": {"f": 1e300}}`),
		[]byte(`{"query": "query($f: Int) { me { projects(first: $f) { nodes { id } } } }", "variables": {"f": -2147483649}}`),
		[]byte(`{"query": "query($d: Date) { me { overdueTasks(asOf: $d) { nodes { id } } } }", "variables": {"d": ["2026-08-25"]}}`),
		[]byte(`{"query": "{ me { id } }", "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "00"}}}`),
		[]byte(`[{"query": "{ me { id } }"}]`),
		[]byte(`null`),
		[]byte(``),
		[]byte("\xff\xfe{"),
		[]byte(`{"query": "{ me { id } }"} trailing`),
		[]byte(`{"query": "{ me { name } }", "query": "{ me { id } }"}`),
	}
	// With an odd mode, the fuzzed bytes are a GraphQL document, sent in a
	// well-formed JSON body with one of these variable sets: the fuzzer then
	// reaches the executor rather than the JSON decoder.
	varSets := []map[string]any{
		nil,
		{"id": web},
		{"id": task},
		{"id": comment},
		{"id": lab, "first": 2},
		{"p": web, "u": "bob"},
		{"input": map[string]any{"projectId": web, "title": "Fuzzed", "tags": []string{"Fuzz"}, "dueDate": "2026-09-01"}},
		{"input": map[string]any{"id": task, "title": "Renamed", "expectedVersion": 1, "tags": []string{}}},
		{"tag": "urgent", "first": 1, "after": "YzE6RFVFI34jMDFBUlozTkRFS1RTVjRSUkZGUTY5RzVGQVY"},
		{"d": "2026-08-25", "first": 100},
	}
	docs := []string{
		`query($id: ID!) { node(id: $id) { id ... on Project { name tasks(first: 3) { nodes { id } } } } }`,
		`query($id: ID!, $first: Int) { project(id: $id) { tasks(first: $first) { pageInfo { endCursor } } } }`,
		`mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { members { role } } }`,
		`mutation($input: CreateTaskInput!) { createTask(input: $input) { id dueDate tags { name tasks { nodes { id } } } } }`,
		`mutation($input: UpdateTaskInput!) { updateTask(input: $input) { id version } }`,
		`query($tag: String!, $first: Int, $after: String) { tasksByTag(tag: $tag, first: $first, after: $after) { nodes { id } } }`,
		`query($d: Date, $first: Int) { me { overdueTasks(asOf: $d, first: $first) { nodes { id dueDate } } } }`,
		`{ me { projects { nodes { members { user { projects { nodes { id } } } } } } } }`,
		`query($id: ID!) { task(id: $id) { comments { nodes { author { name email } task { project { owner { id } } } } } } }`,
	}
	for i, b := range seeds {
		f.Add(b, uint8(0), uint8(i%3), uint8(0))
	}
	for i := range fzContentTypes {
		f.Add(seeds[0], uint8(i), uint8(0), uint8(0))
	}
	for i := range auths {
		f.Add(seeds[1], uint8(0), uint8(i), uint8(0))
	}
	for i, d := range docs {
		f.Add([]byte(d), uint8(0), uint8(0), uint8(1+2*i))
	}

	f.Fuzz(func(t *testing.T, body []byte, ct, auth, mode uint8) {
		if len(body) > 1<<16 {
			return
		}
		if mode%2 == 1 {
			body = fzBody(string(body), varSets[int(mode/2)%len(varSets)])
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// A raw body of any media type: the fuzzer's bytes as they are.
		rec := e.Send(t, nil, testenv.RawBody(http.MethodPost, fzContentTypes[int(ct)%len(fzContentTypes)], string(body)),
			testenv.Header("Authorization", auths[int(auth)%len(auths)]), testenv.Context(ctx))
		if ctx.Err() != nil {
			t.Fatalf("the request took more than 20 s: %q", body)
		}
		out := rec.Body
		if mt := rec.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/json") &&
			!strings.HasPrefix(mt, "application/graphql-response+json") {
			t.Errorf("HTTP %d with Content-Type %q, not JSON; body %q", rec.Status, mt, out)
		}
		var res fzResponse
		dec := json.NewDecoder(bytes.NewReader(out))
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("HTTP %d: the answer is not a JSON object (%v): %q", rec.Status, err, out)
		}
		if dec.More() {
			t.Errorf("HTTP %d: more than one JSON value in the answer: %q", rec.Status, out)
		}
		if res.Data == nil && res.Errors == nil {
			t.Errorf("HTTP %d: neither data nor errors: %q", rec.Status, out)
		}
		if _, ok := res.Extensions["dynamodb"]; ok {
			t.Errorf("the answer tells how data is stored: %q", out)
		}
		lowBody := strings.ToLower(string(body))
		internalCode := false
		for i, ge := range res.Errors {
			code, _ := ge.Extensions["code"].(string)
			if code == "" {
				t.Errorf("HTTP %d: error %d has no extensions.code: %q", rec.Status, i, out)
			} else if !fzCodes[code] {
				t.Errorf("HTTP %d: error %d has the unknown code %q: %q", rec.Status, i, code, out)
			}
			if code == "INTERNAL_SERVER_ERROR" || code == "SERVICE_UNAVAILABLE" {
				// The store is healthy: a client's request, however odd,
				// must not fail as the server's own fault.
				internalCode = internalCode || code == "INTERNAL_SERVER_ERROR"
				t.Errorf("HTTP %d: %s on a healthy store for body %q: %q", rec.Status, code, body, out)
			}
			if ge.Message == nil || *ge.Message == "" {
				t.Errorf("HTTP %d: error %d has no message: %q", rec.Status, i, out)
				continue
			}
			msg := strings.ToLower(*ge.Message)
			for _, w := range internals {
				// An echo of the client's own input (e.g. an unknown field
				// named "panic") is not a leak.
				if strings.Contains(msg, w) && !strings.Contains(lowBody, w) {
					t.Errorf("HTTP %d: error message names internals (%q): %q", rec.Status, w, *ge.Message)
				}
			}
		}
		if rec.Status >= 500 && !internalCode && !fzHasCode(res, "SERVICE_UNAVAILABLE") {
			t.Errorf("HTTP %d without an INTERNAL_SERVER_ERROR code: %q", rec.Status, out)
		}
		if rec.Status == http.StatusOK && len(res.Errors) == 0 && (len(res.Data) == 0 || string(res.Data) == "null") {
			t.Errorf("HTTP 200 with no data and no error: %q", out)
		}
	})
}

func fzHasCode(res fzResponse, code string) bool {
	for _, e := range res.Errors {
		if c, _ := e.Extensions["code"].(string); c == code {
			return true
		}
	}
	return false
}

// fzScalarValue builds the value a scalar's unmarshaler receives: gqlgen
// passes decoded JSON (string, json.Number, bool, nil, []any,
// map[string]any) or literal values (string, int64, float64, bool).
func fzScalarValue(kind uint8, s string, i int64, fl float64, b bool) any {
	switch kind % 13 {
	case 0, 1, 2:
		return s
	case 3:
		return i
	case 4:
		return int(i)
	case 5:
		return fl
	case 6:
		return b
	case 7:
		return nil
	case 8:
		return []any{s}
	case 9:
		return map[string]any{"value": s}
	case 10:
		return json.Number(s)
	case 11:
		return []byte(s)
	default:
		return &s
	}
}

// fzMarshaled renders a scalar's marshaler and decodes the JSON string it writes.
func fzMarshaled(t *testing.T, write func(*bytes.Buffer)) string {
	t.Helper()
	var buf bytes.Buffer
	write(&buf)
	var s string
	if err := json.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatalf("the scalar marshals to %q, not a JSON string: %v", buf.String(), err)
	}
	return s
}

func FuzzScalars(f *testing.F) {
	for _, s := range []string{"2026-08-25", "2024-02-29", "2026-02-30", "0000-01-01", "9999-12-31", "2026-8-25", "",
		"2026-08-25T14:03:00Z", "2026-08-25T14:03:00.123456789Z", "2026-08-25T14:03:00+02:00", "2026-08-25T14:03:00-00:00",
		"2026-08-25t14:03:00z", "2026-08-25T24:00:00Z", "2026-08-25T23:59:60Z", "9999-12-31T23:59:59-01:00",
		"0000-01-01T00:00:00+01:00", "2026-08-25T14:03:00.Z", "2026-08-25T14:03Z", "1e3", "null"} {
		for kind := range uint8(13) {
			if kind == 0 || kind == 10 || s == "2026-08-25" {
				f.Add(s, kind, int64(20260825), 2026.0825, true)
			}
		}
	}
	f.Add("", uint8(5), int64(0), math.NaN(), false)
	f.Add("", uint8(5), int64(0), math.Inf(1), false)
	f.Add("", uint8(3), int64(math.MinInt64), 0.0, false)

	f.Fuzz(func(t *testing.T, s string, kind uint8, i int64, fl float64, b bool) {
		v := fzScalarValue(kind, s, i, fl, b)
		what := fmt.Sprintf("%T %#v", v, v)

		d, err := model.UnmarshalDate(v)
		if err != nil {
			if domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("UnmarshalDate(%s): error code %q, want %q (BAD_USER_INPUT)", what, domain.ErrorCode(err), domain.EINVALID)
			}
		} else {
			str := fzMarshaled(t, func(w *bytes.Buffer) { model.MarshalDate(d).MarshalGQL(w) })
			if vs, ok := v.(string); !ok || str != vs {
				t.Errorf("UnmarshalDate(%s) accepted a value that marshals to %q", what, str)
			}
			d2, err := model.UnmarshalDate(str)
			if err != nil || d2 != d {
				t.Errorf("UnmarshalDate(%s) = %v marshals to %q, which unmarshals to %v, %v", what, d, str, d2, err)
			}
		}

		tm, err := model.UnmarshalTime(v)
		if err != nil {
			if domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("UnmarshalTime(%s): error code %q, want %q (BAD_USER_INPUT)", what, domain.ErrorCode(err), domain.EINVALID)
			}
			return
		}
		if _, ok := v.(string); !ok {
			t.Errorf("UnmarshalTime accepted %s, which is not a string", what)
		}
		if tm.Location() != time.UTC {
			t.Errorf("UnmarshalTime(%s) = %v, not in UTC", what, tm)
		}
		str := fzMarshaled(t, func(w *bytes.Buffer) { model.MarshalTime(tm).MarshalGQL(w) })
		if !strings.HasSuffix(str, "Z") {
			t.Errorf("UnmarshalTime(%s) = %v marshals to %q, not in UTC", what, tm, str)
		}
		tm2, err := model.UnmarshalTime(str)
		if err != nil || !tm2.Equal(tm) || tm2 != tm {
			t.Errorf("UnmarshalTime(%s) = %v marshals to %q, which unmarshals to %v, %v", what, tm, str, tm2, err)
		}
	})
}
