package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/99designs/gqlgen/graphql"
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

// encodeAll runs an encoder over responses and returns each payload as
// JSON ("" for a response held, no part written) and whether it was the
// last.
func encodeAll(t *testing.T, enc partEncoder, responses ...*graphql.Response) ([]string, []bool) {
	t.Helper()
	var out []string
	var lasts []bool
	for _, res := range responses {
		payload, last := enc.encode(res)
		s := ""
		if payload != nil {
			b, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			s = string(b)
		}
		out = append(out, s)
		lasts = append(lasts, last)
	}
	return out, lasts
}

// response is one of gqlgen's responses: path and label for a deferred
// fragment's part, hasNext when the operation defers any.
func response(data string, hasNext *bool, path ast.Path, label string, errs ...*gqlerror.Error) *graphql.Response {
	return &graphql.Response{Data: json.RawMessage(data), HasNext: hasNext, Path: path, Label: label, Errors: errs}
}

var (
	more = new(true)
	done = new(false)
)

func sameJSON(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestIncrementalV02Payloads pins graphql-js 17's format, written from
// gqlgen's responses: the initial payload with an empty pending list; each
// fragment announced with an id of its own, its data under that id and
// completed in the payload that delivers it; a fragment deferred inside
// another held until the other's data is out; a fragment's errors beside
// its data, or in completed when its data is null; hasNext false on the
// last payload.
func TestIncrementalV02Payloads(t *testing.T) {
	fieldErr := &gqlerror.Error{Message: "task not found", Path: ast.Path{ast.PathName("me"), ast.PathName("projects"), ast.PathIndex(0), ast.PathName("owner")}}
	p := func(els ...any) ast.Path {
		var path ast.Path
		for _, el := range els {
			switch el := el.(type) {
			case string:
				path = append(path, ast.PathName(el))
			case int:
				path = append(path, ast.PathIndex(el))
			}
		}
		return path
	}
	for _, tc := range []struct {
		name      string
		responses []*graphql.Response
		want      []string // "" for a response held (no part)
	}{
		{"without @defer: the response as it is, alone",
			[]*graphql.Response{response(`{"me":{"name":"Alice"}}`, nil, nil, "")},
			[]string{`{"data":{"me":{"name":"Alice"}}}`}},
		{"two fragments: ids 0 and 1, each announced, delivered and completed in its payload",
			[]*graphql.Response{
				response(`{"me":{"projects":[{"name":"A","tasks":null},{"name":"B","tasks":null}]}}`, more, nil, ""),
				response(`{"tasks":[1]}`, more, p("me", "projects", 1), "tasks"),
				response(`{"tasks":[2]}`, done, p("me", "projects", 0), "tasks"),
			},
			[]string{
				`{"data":{"me":{"projects":[{"name":"A","tasks":null},{"name":"B","tasks":null}]}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me","projects",1],"label":"tasks"}],"incremental":[{"id":"0","data":{"tasks":[1]}}],"completed":[{"id":"0"}],"hasNext":true}`,
				`{"pending":[{"id":"1","path":["me","projects",0],"label":"tasks"}],"incremental":[{"id":"1","data":{"tasks":[2]}}],"completed":[{"id":"1"}],"hasNext":false}`,
			}},
		{"a fragment of the root: its path empty, not null",
			[]*graphql.Response{
				response(`{"me":{"name":"Alice"}}`, more, nil, ""),
				response(`{"viewerCount":null}`, done, nil, "root"),
			},
			[]string{
				`{"data":{"me":{"name":"Alice"}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":[],"label":"root"}],"incremental":[{"id":"0","data":{"viewerCount":null}}],"completed":[{"id":"0"}],"hasNext":false}`,
			}},
		{"a fragment without a label: no label in pending",
			[]*graphql.Response{
				response(`{"me":{"name":"Alice","email":null}}`, more, nil, ""),
				response(`{"email":"a@example.com"}`, done, p("me"), ""),
			},
			[]string{
				`{"data":{"me":{"name":"Alice","email":null}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me"]}],"incremental":[{"id":"0","data":{"email":"a@example.com"}}],"completed":[{"id":"0"}],"hasNext":false}`,
			}},
		{"nested: the inner fragment, resolved first, held until the outer one's data is out, then both in one payload",
			[]*graphql.Response{
				response(`{"me":{"name":"Alice","projects":null}}`, more, nil, ""),
				response(`{"comments":[]}`, more, p("me", "projects", 0, "tasks", 0), "comments"),
				response(`{"projects":[{"tasks":[{"title":"T","comments":null}]}]}`, done, p("me"), "projects"),
			},
			[]string{
				`{"data":{"me":{"name":"Alice","projects":null}},"pending":[],"hasNext":true}`,
				``,
				`{"pending":[{"id":"0","path":["me"],"label":"projects"},{"id":"1","path":["me","projects",0,"tasks",0],"label":"comments"}],` +
					`"incremental":[{"id":"0","data":{"projects":[{"tasks":[{"title":"T","comments":null}]}]}},{"id":"1","data":{"comments":[]}}],` +
					`"completed":[{"id":"0"},{"id":"1"}],"hasNext":false}`,
			}},
		{"three levels, the innermost first, the middle one next, the outer one last: all in the last payload, outermost first",
			[]*graphql.Response{
				response(`{"me":{"projects":null}}`, more, nil, ""),
				response(`{"body":"hi"}`, more, p("me", "projects", 0, "tasks", 0), "c"),
				response(`{"tasks":[{"body":null}]}`, more, p("me", "projects", 0), "b"),
				response(`{"projects":[{"tasks":null}]}`, done, p("me"), "a"),
			},
			[]string{
				`{"data":{"me":{"projects":null}},"pending":[],"hasNext":true}`,
				``,
				``,
				`{"pending":[{"id":"0","path":["me"],"label":"a"},{"id":"1","path":["me","projects",0],"label":"b"},{"id":"2","path":["me","projects",0,"tasks",0],"label":"c"}],` +
					`"incremental":[{"id":"0","data":{"projects":[{"tasks":null}]}},{"id":"1","data":{"tasks":[{"body":null}]}},{"id":"2","data":{"body":"hi"}}],` +
					`"completed":[{"id":"0"},{"id":"1"},{"id":"2"}],"hasNext":false}`,
			}},
		{"two labels on one object, and a fragment inside one of them",
			[]*graphql.Response{
				response(`{"me":{"name":null,"projects":null}}`, more, nil, ""),
				response(`{"projects":[{"id":"p"}]}`, more, p("me"), "projects"),
				response(`{"name":"Alice"}`, more, p("me"), "name"),
				response(`{"tasks":[]}`, done, p("me", "projects", 0), "tasks"),
			},
			[]string{
				`{"data":{"me":{"name":null,"projects":null}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me"],"label":"projects"}],"incremental":[{"id":"0","data":{"projects":[{"id":"p"}]}}],"completed":[{"id":"0"}],"hasNext":true}`,
				`{"pending":[{"id":"1","path":["me"],"label":"name"}],"incremental":[{"id":"1","data":{"name":"Alice"}}],"completed":[{"id":"1"}],"hasNext":true}`,
				`{"pending":[{"id":"2","path":["me","projects",0],"label":"tasks"}],"incremental":[{"id":"2","data":{"tasks":[]}}],"completed":[{"id":"2"}],"hasNext":false}`,
			}},
		{"nested in order: the outer one first, the inner one in a payload of its own",
			[]*graphql.Response{
				response(`{"me":{"projects":null}}`, more, nil, ""),
				response(`{"projects":[{"name":"A","tasks":null}]}`, more, p("me"), "projects"),
				response(`{"tasks":[]}`, done, p("me", "projects", 0), "tasks"),
			},
			[]string{
				`{"data":{"me":{"projects":null}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me"],"label":"projects"}],"incremental":[{"id":"0","data":{"projects":[{"name":"A","tasks":null}]}}],"completed":[{"id":"0"}],"hasNext":true}`,
				`{"pending":[{"id":"1","path":["me","projects",0],"label":"tasks"}],"incremental":[{"id":"1","data":{"tasks":[]}}],"completed":[{"id":"1"}],"hasNext":false}`,
			}},
		{"an error in a deferred fragment's nullable field: the error beside its data",
			[]*graphql.Response{
				response(`{"me":{"projects":[{"owner":null}]}}`, more, nil, ""),
				response(`{"owner":null}`, done, p("me", "projects", 0), "owner", fieldErr),
			},
			[]string{
				`{"data":{"me":{"projects":[{"owner":null}]}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me","projects",0],"label":"owner"}],"incremental":[{"id":"0","data":{"owner":null},` +
					`"errors":[{"message":"task not found","path":["me","projects",0,"owner"]}]}],"completed":[{"id":"0"}],"hasNext":false}`,
			}},
		{"a fragment that completes with null (a non-null field failed): its errors in completed, no data",
			[]*graphql.Response{
				response(`{"me":{"projects":[{"owner":null}]}}`, more, nil, ""),
				response(`null`, more, p("me", "projects", 0), "owner", fieldErr),
				response(`{"email":"a@example.com"}`, done, p("me"), "email"),
			},
			[]string{
				`{"data":{"me":{"projects":[{"owner":null}]}},"pending":[],"hasNext":true}`,
				`{"pending":[{"id":"0","path":["me","projects",0],"label":"owner"}],"completed":[{"id":"0","errors":[{"message":"task not found","path":["me","projects",0,"owner"]}]}],"hasNext":true}`,
				`{"pending":[{"id":"1","path":["me"],"label":"email"}],"incremental":[{"id":"1","data":{"email":"a@example.com"}}],"completed":[{"id":"1"}],"hasNext":false}`,
			}},
		{"a fragment under one that completed with null is never announced: the last payload says only hasNext",
			[]*graphql.Response{
				response(`{"me":{"projects":null}}`, more, nil, ""),
				response(`{"tasks":[]}`, more, p("me", "projects", 0), "tasks"),
				response(`null`, done, p("me"), "projects", fieldErr),
			},
			[]string{
				`{"data":{"me":{"projects":null}},"pending":[],"hasNext":true}`,
				``,
				`{"pending":[{"id":"0","path":["me"],"label":"projects"}],"completed":[{"id":"0","errors":[{"message":"task not found","path":["me","projects",0,"owner"]}]}],"hasNext":false}`,
			}},
		{"the initial response's errors and extensions; a later one's extensions on its payload",
			[]*graphql.Response{
				{Data: json.RawMessage(`{"me":null}`), HasNext: more, Errors: gqlerror.List{{Message: "boom"}}, Extensions: map[string]any{"dynamodb": 1}},
				{Data: json.RawMessage(`{"x":1}`), HasNext: done, Path: p("me"), Extensions: map[string]any{"dynamodb": 2}},
			},
			[]string{
				`{"data":{"me":null},"errors":[{"message":"boom"}],"pending":[],"hasNext":true,"extensions":{"dynamodb":1}}`,
				`{"hasNext":false,"extensions":{"dynamodb":2}}`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, lasts := encodeAll(t, incrementalSpecV02.newEncoder(), tc.responses...)
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
// response as it is, each later one in incremental with its path and
// label (and gqlgen's hasNext, which clients ignore there).
func TestIncremental20220824Payloads(t *testing.T) {
	got, lasts := encodeAll(t, deferSpec20220824.newEncoder(),
		response(`{"me":{"name":"Alice","email":null}}`, more, nil, ""),
		response(`{"email":"a@example.com"}`, done, ast.Path{ast.PathName("me")}, "email"))
	want := []string{
		`{"data":{"me":{"name":"Alice","email":null}},"hasNext":true}`,
		`{"incremental":[{"data":{"email":"a@example.com"},"label":"email","path":["me"],"hasNext":false}],"hasNext":false}`,
	}
	for i := range want {
		if !sameJSON(got[i], want[i]) || lasts[i] != (i == 1) {
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
	var parts []*graphql.Response
	for p := range 10 {
		if p > 0 {
			initial.WriteString(",")
		}
		initial.WriteString(`{"name":"Project","members":[{"role":"OWNER","user":{"name":"Alice"}}],"tasks":null}`)
		var part bytes.Buffer
		part.WriteString(`{"tasks":{"nodes":[`)
		for t := range 20 {
			if t > 0 {
				part.WriteString(",")
			}
			part.WriteString(`{"title":"A task with a title","assignee":{"name":"Bob"},"tags":[{"name":"a"},{"name":"b"}],"comments":{"nodes":[{"body":"A comment","author":{"name":"Carol"}}]}}`)
		}
		part.WriteString(`]}}`)
		parts = append(parts, response(part.String(), new(p < 9), ast.Path{ast.PathName("me"), ast.PathName("projects"), ast.PathName("nodes"), ast.PathIndex(p)}, "tasks"))
	}
	initial.WriteString(`]}}}`)
	responses := append([]*graphql.Response{response(initial.String(), more, nil, "")}, parts...)
	for _, f := range []incrementalFormat{deferSpec20220824, incrementalSpecV02} {
		b.Run(f.mediaTypeParam, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				enc := f.newEncoder()
				for _, res := range responses {
					payload, _ := enc.encode(res)
					if _, err := json.Marshal(payload); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
