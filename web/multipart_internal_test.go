package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/incremental"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestIncrementalFormatFromAccept: the format is the first multipart/mixed
// range of the Accept that names a format served; the 2022-08-24 one
// when none does.
func TestIncrementalFormatFromAccept(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		want   string
	}{
		// Apollo Client 4's GraphQL17Alpha9Handler and Defer20220824Handler.
		{[]string{"multipart/mixed;incrementalSpec=v0.2,application/graphql-response+json,application/json;q=0.9"}, "incrementalSpec=v0.2"},
		{[]string{"multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9"}, "deferSpec=20220824"},
		// urql names no format.
		{[]string{"application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed"}, "deferSpec=20220824"},
		{[]string{"multipart/mixed"}, "deferSpec=20220824"},
		{nil, "deferSpec=20220824"},
		// Spaces, case of the parameter's name and value, quoting.
		{[]string{`application/json, multipart/mixed; incrementalspec="V0.2"`}, "incrementalSpec=v0.2"},
		// The first that names a served format wins; unknown ones are passed over.
		{[]string{"multipart/mixed;deferSpec=20220824, multipart/mixed;incrementalSpec=v0.2"}, "deferSpec=20220824"},
		{[]string{"multipart/mixed;incrementalSpec=v9, multipart/mixed;incrementalSpec=v0.2"}, "incrementalSpec=v0.2"},
		{[]string{"multipart/mixed;incrementalSpec=v9"}, "deferSpec=20220824"},
		{[]string{"application/json", "multipart/mixed;incrementalSpec=v0.2"}, "incrementalSpec=v0.2"},
		// A parameter of another media type is not multipart/mixed's.
		{[]string{"text/event-stream;incrementalSpec=v0.2, multipart/mixed"}, "deferSpec=20220824"},
	} {
		r, _ := http.NewRequest(http.MethodPost, "/query", nil)
		for _, a := range tc.accept {
			r.Header.Add("Accept", a)
		}
		if got := incrementalFormatOf(r).mediaTypeParam; got != tc.want {
			t.Errorf("Accept %q: %s, want %s", tc.accept, got, tc.want)
		}
	}
}

// step is one response of the pipeline and, in graphql-js 17's format,
// what its payload has besides it (incremental.Parts).
type step struct {
	res *graphql.Response
	pl  *incremental.PayloadV02
}

// nextPayload hands an encoder the payload of the step encoded.
type nextPayload struct{ pl *incremental.PayloadV02 }

func (n *nextPayload) Take() *incremental.PayloadV02 { return n.pl }

// encodeAll runs f's encoder over steps and returns each payload as JSON
// and whether it was the last.
func encodeAll(t testing.TB, f incrementalFormat, steps ...step) ([]string, []bool) {
	t.Helper()
	next := &nextPayload{}
	enc := f.newEncoder(next)
	var out []string
	var lasts []bool
	for _, st := range steps {
		next.pl = st.pl
		payload, last := enc.encode(st.res)
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
		lasts = append(lasts, last)
	}
	return out, lasts
}

var (
	more = new(true)
	done = new(false)
)

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func path(els ...any) ast.Path {
	p := ast.Path{}
	for _, el := range els {
		switch el := el.(type) {
		case string:
			p = append(p, ast.PathName(el))
		case int:
			p = append(p, ast.PathIndex(el))
		}
	}
	return p
}

// TestIncrementalV02Payloads pins how graphql-js 17's format is written
// from the pipeline's responses and parts (what goes in which payload is
// the pipeline's, graph's tests and TestDeferMatchesGraphQLJS): the
// initial payload with its pending list (empty, not absent, when none is
// announced), its errors and extensions; a later one's pending,
// incremental (subPath when below the fragment's path) and completed
// (with the errors of a fragment that failed), empty lists left out, a
// root path [] and no label where the fragment has none; hasNext on
// every payload, false on the last; without @defer the response alone.
func TestIncrementalV02Payloads(t *testing.T) {
	label := "tasks"
	fieldErr := &gqlerror.Error{Message: "no profile", Path: path("me")}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string
	}{
		{"without @defer: the response as it is, alone",
			[]step{{res: &graphql.Response{Data: json.RawMessage(`{"me":{"name":"Alice"}}`)}}},
			[]string{`{"data":{"me":{"name":"Alice"}}}`}},
		{"announced with the initial payload, delivered and completed later",
			[]step{
				{&graphql.Response{Data: json.RawMessage(`{"me":{"projects":[{"name":"A"}]}}`), HasNext: more},
					&incremental.PayloadV02{Pending: []incremental.PendingV02{{ID: "0", Path: path("me", "projects", 0), Label: &label}}}},
				{&graphql.Response{Data: json.RawMessage(`null`), HasNext: done},
					&incremental.PayloadV02{Incremental: []incremental.IncrementalV02{{ID: "0", Data: json.RawMessage(`{"tasks":[]}`)}},
						Completed: []incremental.CompletedV02{{ID: "0"}}}},
			},
			[]string{
				`{"data":{"me":{"projects":[{"name":"A"}]}},"pending":[{"id":"0","path":["me","projects",0],"label":"tasks"}],"hasNext":true}`,
				`{"incremental":[{"id":"0","data":{"tasks":[]}}],"completed":[{"id":"0"}],"hasNext":false}`,
			}},
		{"a fragment at the root, without a label, that fails; one announced with its parent's completion, delivered below its path",
			[]step{
				{&graphql.Response{Data: json.RawMessage(`{}`), HasNext: more, Errors: gqlerror.List{{Message: "boom"}},
					Extensions: map[string]any{"dynamodb": 1}},
					&incremental.PayloadV02{Pending: []incremental.PendingV02{{ID: "0", Path: path()}, {ID: "1", Path: path()}}}},
				{&graphql.Response{Data: json.RawMessage(`null`), HasNext: more, Errors: gqlerror.List{fieldErr}},
					&incremental.PayloadV02{Completed: []incremental.CompletedV02{{ID: "0", Errors: gqlerror.List{fieldErr}}}}},
				{&graphql.Response{Data: json.RawMessage(`null`), HasNext: done, Extensions: map[string]any{"dynamodb": 2}},
					&incremental.PayloadV02{Pending: []incremental.PendingV02{{ID: "2", Path: path("user")}},
						Incremental: []incremental.IncrementalV02{{ID: "1", Data: json.RawMessage(`{"name":"Bob"}`), SubPath: path("user")},
							{ID: "2", Data: json.RawMessage(`{"email":null}`)}},
						Completed: []incremental.CompletedV02{{ID: "1"}, {ID: "2"}}}},
			},
			[]string{
				`{"data":{},"errors":[{"message":"boom"}],"pending":[{"id":"0","path":[]},{"id":"1","path":[]}],"hasNext":true,"extensions":{"dynamodb":1}}`,
				`{"completed":[{"id":"0","errors":[{"message":"no profile","path":["me"]}]}],"hasNext":true}`,
				`{"pending":[{"id":"2","path":["user"]}],"incremental":[{"id":"1","data":{"name":"Bob"},"subPath":["user"]},{"id":"2","data":{"email":null}}],` +
					`"completed":[{"id":"1"},{"id":"2"}],"hasNext":false,"extensions":{"dynamodb":2}}`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, lasts := encodeAll(t, incrementalSpecV02, tc.steps...)
			for i := range tc.want {
				if !sameJSON(got[i], tc.want[i]) {
					t.Errorf("payload %d:\n got %s\nwant %s", i+1, got[i], tc.want[i])
				}
				if wantLast := i == len(tc.want)-1; lasts[i] != wantLast {
					t.Errorf("payload %d: last %v, want %v", i+1, lasts[i], wantLast)
				}
			}
		})
	}
}

// TestIncremental20220824Payloads pins the default format: the initial
// response as it is, each later one an incremental result (its path [] at
// the root, never left out; data null with the errors of a fragment that
// failed), hasNext on every payload.
func TestIncremental20220824Payloads(t *testing.T) {
	got, lasts := encodeAll(t, deferSpec20220824,
		step{res: &graphql.Response{Data: json.RawMessage(`{"me":{"name":"Alice"}}`), HasNext: more}},
		step{res: &graphql.Response{Data: json.RawMessage(`{"user":{"name":"Bob"}}`), HasNext: more, Path: path(), Label: "root"}},
		step{res: &graphql.Response{Data: json.RawMessage(`null`), HasNext: more, Path: path("me"),
			Errors: gqlerror.List{{Message: "boom", Path: path("me", "projects")}}}},
		step{res: &graphql.Response{Data: json.RawMessage(`{"email":"a@example.com"}`), HasNext: done, Path: path("me"), Label: "email"}})
	want := []string{
		`{"data":{"me":{"name":"Alice"}},"hasNext":true}`,
		`{"incremental":[{"data":{"user":{"name":"Bob"}},"path":[],"label":"root"}],"hasNext":true}`,
		`{"incremental":[{"data":null,"path":["me"],"errors":[{"message":"boom","path":["me","projects"]}]}],"hasNext":true}`,
		`{"incremental":[{"data":{"email":"a@example.com"},"path":["me"],"label":"email"}],"hasNext":false}`,
	}
	for i := range want {
		if !sameJSON(got[i], want[i]) || lasts[i] != (i == len(want)-1) {
			t.Errorf("payload %d (last %v):\n got %s\nwant %s", i+1, lasts[i], got[i], want[i])
		}
	}
}

// BenchmarkIncrementalEncoders encodes, and marshals as the transport
// does, a dashboard of 10 projects whose 20 tasks each are deferred: the
// initial part and one part per project, in each format.
func BenchmarkIncrementalEncoders(b *testing.B) {
	var initial bytes.Buffer
	initial.WriteString(`{"me":{"name":"Alice","projects":{"nodes":[`)
	var steps []step
	var pending []incremental.PendingV02
	for p := range 10 {
		if p > 0 {
			initial.WriteString(",")
		}
		initial.WriteString(`{"name":"Project","members":[{"role":"OWNER","user":{"name":"Alice"}}]}`)
		var part bytes.Buffer
		part.WriteString(`{"tasks":{"nodes":[`)
		for t := range 20 {
			if t > 0 {
				part.WriteString(",")
			}
			part.WriteString(`{"title":"A task with a title","assignee":{"name":"Bob"},"tags":[{"name":"a"},{"name":"b"}],"comments":{"nodes":[{"body":"A comment","author":{"name":"Carol"}}]}}`)
		}
		part.WriteString(`]}}`)
		at, id := path("me", "projects", "nodes", p), strconv.Itoa(p)
		pending = append(pending, incremental.PendingV02{ID: id, Path: at})
		steps = append(steps, step{&graphql.Response{Data: json.RawMessage(part.String()), HasNext: new(p < 9), Path: at, Label: "tasks"},
			&incremental.PayloadV02{Incremental: []incremental.IncrementalV02{{ID: id, Data: json.RawMessage(part.String())}}, Completed: []incremental.CompletedV02{{ID: id}}}})
	}
	initial.WriteString(`]}}}`)
	steps = append([]step{{&graphql.Response{Data: json.RawMessage(initial.String()), HasNext: more}, &incremental.PayloadV02{Pending: pending}}}, steps...)
	for _, f := range []incrementalFormat{deferSpec20220824, incrementalSpecV02} {
		b.Run(f.mediaTypeParam, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				encodeAll(b, f, steps...)
			}
		})
	}
}
