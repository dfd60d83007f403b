package incremental_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// What a query with @defer answers, in each format, as graphql-js 17 does
// (TestDeferMatchesGraphQLJS compares the corpus with graphql-js itself).

// deferAccepts are the Accept of each multipart format and of server-sent
// events, by the format's name.
var deferAccepts = map[string]string{
	"incrementalSpec=v0.2": "multipart/mixed;incrementalSpec=v0.2, application/json;q=0.9",
	"deferSpec=20220824":   "multipart/mixed;deferSpec=20220824, application/json;q=0.9",
	"sse":                  "text/event-stream",
}

// deferParts sends query with variables as viewer and reads its parts in
// format.
func deferParts(t *testing.T, e *testenv.Env, viewer, format, query string, variables map[string]any) []testenv.DeferPart {
	t.Helper()
	raw := e.Send(t, map[string]any{"query": query, "variables": variables}, e.As(viewer), testenv.Header("Accept", deferAccepts[format]))
	if raw.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", format, raw.Status, raw.Body)
	}
	if format == "sse" {
		return testenv.SSEParts(t, raw.Body)
	}
	if got := testenv.MultipartFormat(raw.Header.Get("Content-Type")); got != format {
		t.Fatalf("answered as %s, want %s", raw.Header.Get("Content-Type"), format)
	}
	return testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body))
}

// hasNextOnAllButLast checks each part's hasNext.
func hasNextOnAllButLast(t *testing.T, format string, parts []testenv.DeferPart) {
	t.Helper()
	for i, p := range parts {
		if p.HasNext == nil || *p.HasNext != (i < len(parts)-1) {
			t.Errorf("%s: part %d of %d: hasNext %v", format, i+1, len(parts), p.HasNext)
		}
	}
}

// A fragment deferred at the root that fails (me, for a viewer without a
// profile) completes with its error alone: the other root fields answer.
// Without @defer the same failure nulls the whole answer.
func TestDeferRootFragmentFailsAlone(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const query = `query { t: __typename ... @defer(label: "me") { me { name } } }`
	if res := e.Send(t, map[string]any{"query": strings.Replace(query, `@defer(label: "me")`, "", 1)}, e.As("erin")).Decode(t); string(res.Data) != "null" {
		t.Fatalf("without @defer: data %s, want null", res.Data)
	}
	for format := range deferAccepts {
		parts := deferParts(t, e, "erin", format, query, nil)
		hasNextOnAllButLast(t, format, parts)
		if len(parts) != 2 || string(parts[0].Data) != `{"t":"Query"}` || len(parts[0].Errors) > 0 {
			t.Fatalf("%s: %d parts, the first %s %+v; want the initial one with the other root field, and one more", format, len(parts), parts[0].Data, parts[0].Errors)
		}
		var errs []testenv.Error
		switch format {
		case "incrementalSpec=v0.2":
			p := parts[1]
			if len(parts[0].Pending) != 1 || !reflect.DeepEqual(parts[0].Pending[0].Path, []any{}) || parts[0].Pending[0].Label != "me" ||
				len(p.Incremental) > 0 || len(p.Completed) != 1 || p.Completed[0].ID != parts[0].Pending[0].ID {
				t.Fatalf("%s: pending %+v, then %+v; want the fragment at [] announced, then completed without data", format, parts[0].Pending, p)
			}
			errs = p.Completed[0].Errors
		case "deferSpec=20220824":
			inc := parts[1].Incremental
			if len(inc) != 1 || string(inc[0].Data) != "null" || !reflect.DeepEqual(inc[0].Path, []any{}) || inc[0].Label != "me" {
				t.Fatalf("%s: %+v; want one result at [], data null", format, parts[1])
			}
			errs = inc[0].Errors
		case "sse":
			if string(parts[1].Data) != "null" || parts[1].Label != "me" {
				t.Fatalf("%s: %+v; want the fragment's null", format, parts[1])
			}
			errs = parts[1].Errors
		}
		if len(errs) != 1 || errs[0].Code() != "NOT_FOUND" || !reflect.DeepEqual(errs[0].Path, []any{"me"}) {
			t.Errorf("%s: the fragment's errors %+v, want me's NOT_FOUND", format, errs)
		}
	}
}

// The deferred fields are not in the initial part, not even as null (a
// non-null connection, fields without a resolver of their own): the parts
// merge to the query without @defer.
func TestDeferLeavesDeferredFieldsOut(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const query = `query { me { name ... @defer(label: "more") { email projects(first: 5) { nodes { id } } }
		assignedTasks(first: 3) { nodes { id ... @defer(label: "task") { title status dueDate } } } } }`
	var want any
	e.MustQuery(t, "alice", strings.NewReplacer(`@defer(label: "more")`, "", `@defer(label: "task")`, "").Replace(query), nil, &want)
	for format := range deferAccepts {
		parts := deferParts(t, e, "alice", format, query, nil)
		hasNextOnAllButLast(t, format, parts)
		for _, field := range []string{"email", "projects", "title", "status", "dueDate"} {
			if strings.Contains(string(parts[0].Data), `"`+field+`"`) {
				t.Errorf("%s: the initial part has %s: %s", format, field, parts[0].Data)
			}
		}
		if format == "sse" {
			continue // each part its own event: merged by TestDeferClients
		}
		if got := testenv.MergeParts(t, parts); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: merged %v\nwant %v", format, got, want)
		}
	}
}

// A fragment a non-null field of which fails (tasks(first: -1), on each
// project) completes with the error: its fields, the id beside tasks too,
// never come; the projects keep the rest.
func TestDeferFailedFragmentIsLeftOut(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const query = `query { me { projects(first: 5) { nodes { name ... @defer(label: "tasks") { id tasks(first: -1) { nodes { id } } } } } } }`
	for _, format := range []string{"incrementalSpec=v0.2", "deferSpec=20220824"} {
		parts := deferParts(t, e, "alice", format, query, nil)
		hasNextOnAllButLast(t, format, parts)
		var failed []testenv.Error
		for _, p := range parts[1:] {
			for _, inc := range p.Incremental {
				if format == "incrementalSpec=v0.2" || string(inc.Data) != "null" {
					t.Errorf("%s: data of a fragment that failed: %+v", format, inc)
				}
				failed = append(failed, inc.Errors...)
			}
			for _, c := range p.Completed {
				failed = append(failed, c.Errors...)
			}
		}
		projects := len(parts[0].Pending)
		if format == "deferSpec=20220824" {
			projects = strings.Count(string(parts[0].Data), `"name"`)
		}
		if projects < 2 || len(failed) != projects {
			t.Fatalf("%s: %d errors for %d projects", format, len(failed), projects)
		}
		for _, f := range failed {
			if f.Code() != "BAD_USER_INPUT" || len(f.Path) != 5 || f.Path[4] != "tasks" {
				t.Errorf("%s: error %+v, want tasks' BAD_USER_INPUT", format, f)
			}
		}
		if merged, _ := json.Marshal(testenv.MergeParts(t, parts)); strings.Contains(string(merged), `"id"`) || strings.Contains(string(merged), "tasks") {
			t.Errorf("%s: merged %s, want the projects' names alone", format, merged)
		}
	}
}

// A fragment nested in another is announced with the payload that
// completes the other (graphql-js 17's format), and its result comes after
// the other's, where the other put its object (the 2022-08-24 one),
// however the executor's goroutines run.
func TestDeferNestedNeverBeforeItsParent(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const query = `query { me { id ... @defer(label: "a") { projects(first: 10) { nodes { id ... @defer(label: "b") {
		tasks(first: 5) { nodes { id ... @defer(label: "c") { comments(first: 3) { nodes { body } } } } } } } } } } }`
	parentLabel := map[string]string{"b": "a", "c": "b"}
	type frag struct {
		path             []any
		label            string
		announced, ended int
	}
	for range 5 {
		parts := deferParts(t, e, "alice", "incrementalSpec=v0.2", query, nil)
		var frags []*frag
		byID := map[string]*frag{}
		for i, p := range parts {
			for _, pe := range p.Pending {
				f := &frag{path: pe.Path, label: pe.Label, announced: i, ended: -1}
				frags, byID[pe.ID] = append(frags, f), f
			}
			for _, c := range p.Completed {
				byID[c.ID].ended = i
			}
		}
		if n := len(frags); n < 5 {
			t.Fatalf("%d fragments announced", n)
		}
		for _, f := range frags {
			parent := f.label == "a" && f.announced == 0
			for _, o := range frags {
				if o.label == parentLabel[f.label] && len(o.path) <= len(f.path) && reflect.DeepEqual(o.path, f.path[:len(o.path)]) && o.ended == f.announced {
					parent = true
				}
			}
			if !parent || f.ended < f.announced {
				t.Fatalf("fragment %s at %v announced in payload %d (ended in %d), not with its parent's completion", f.label, f.path, f.announced+1, f.ended+1)
			}
		}
		legacy := deferParts(t, e, "alice", "deferSpec=20220824", query, nil)
		hasNextOnAllButLast(t, "deferSpec=20220824", legacy)
		testenv.MergeParts(t, legacy) // fails where a result comes before its parent's object
	}
}

// TestDeferPinnedCallsNestedAndAtTheRoot pins, read level by level (step
// mode, which counts each part resolved apart from the moment its group
// is released: loaders.OperationDispatch.Part), the DynamoDB calls and loader
// batches of a query with nested fragments and fragments at the root,
// each run alike: the fragments of a level read together, in one batch
// per loader, whatever the goroutines' order (a fragment's children are
// released, and counted, before its own part's count ends).
func TestDeferPinnedCallsNestedAndAtTheRoot(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const query = `query { ... @defer(label: "me") { me { name ... @defer(label: "projects") { projects(first: 10) { nodes { name
		... @defer(label: "tasks") { tasks(first: 5) { nodes { title assignee { name } ... @defer(label: "comments") { comments(first: 5) { nodes { body author { name } } } } } } } } } } } }
		... @defer(label: "tags") { tasksByTag(tag: "urgent") { nodes { title project { name } } } } }`
	var first map[string]int
	var firstBatches map[string]uint64
	for run := range 10 {
		tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
		e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
		e.Calls.Reset()
		parts := deferParts(t, e, "alice", "incrementalSpec=v0.2", query, nil)
		hasNextOnAllButLast(t, "incrementalSpec=v0.2", parts)
		calls, batches := e.Calls.ByOp(), testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_loader_batch_keys")
		if run == 0 {
			first, firstBatches = calls, batches
			t.Logf("calls %v, batches %v", calls, batches)
			// Each list loader one batch (the comments of every task of
			// every project in one), the objects loader two. The viewer's
			// projects, for their list and for tasksByTag, are their
			// profile's copies, not a Query of their memberships each
			// (graph/loaders/copies.go; before the floors, 6 Queries and a
			// projectIDsOfUser batch).
			wantCalls := map[string]int{"BatchGetItem": 3, "Query": 4}
			wantBatches := map[string]uint64{"loader=commentsOf": 1, "loader=objects": 2,
				"loader=projectsOfUser": 1, "loader=tasksByTag": 1, "loader=tasksOfProject": 1}
			if !maps.Equal(calls, wantCalls) || !maps.Equal(batches, wantBatches) {
				t.Errorf("calls %v, batches %v; want %v, %v", calls, batches, wantCalls, wantBatches)
			}
			continue
		}
		if !maps.Equal(calls, first) || !maps.Equal(batches, firstBatches) {
			t.Fatalf("run %d: calls %v, batches %v; the first run's %v, %v", run+1, calls, batches, first, firstBatches)
		}
	}
}

// Over server-sent events (and the WebSockets) a fragment's result at the
// root is one event per root field it delivers, at that field's path:
// gqlgen's event leaves an empty path out, and a client takes an event
// without a path for a whole new answer.
func TestDeferRootFragmentOverSSE(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	parts := deferParts(t, e, "alice", "sse", `query { t: __typename ... @defer(label: "r") { me { name } u: __typename } }`, nil)
	hasNextOnAllButLast(t, "sse", parts)
	got := map[string]string{}
	for _, p := range parts[1:] {
		path, _ := json.Marshal(p.Path)
		if p.Label != "r" || len(p.Path) != 1 {
			t.Errorf("event %+v: want label r and one root field's path", p)
		}
		got[string(path)] = string(p.Data)
	}
	want := map[string]string{`["me"]`: `{"name":"Alice Example"}`, `["u"]`: `"Query"`}
	if string(parts[0].Data) != `{"t":"Query"}` || !maps.Equal(got, want) {
		t.Errorf("events: first %s, then %v; want {\"t\":\"Query\"}, then %v", parts[0].Data, got, want)
	}
}

// @defer's labels are validated as graphql-js 17 validates them, in its
// words, before anything runs: a label that is not a static string, or a
// label used twice in the document (in a fragment too), whatever the
// transport.
func TestDeferLabelsAreValidated(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, tc := range []struct{ query, message string }{
		{`query { me { ... @defer(label: "a") { name } ... @defer(label: "a") { email } } }`, "must be unique across all Defer/Stream directive usages"},
		{`query { me { ... @defer(label: "a") { name } ...F } } fragment F on User { ... @defer(label: "a") { email } }`, "must be unique"},
		{`query ($l: String) { me { ... @defer(label: $l) { name } } }`, "must be a static string"},
	} {
		for format := range deferAccepts {
			e.Calls.Reset()
			raw := e.Send(t, map[string]any{"query": tc.query}, e.As("alice"), testenv.Header("Accept", deferAccepts[format]))
			body := string(raw.Body)
			if !strings.Contains(body, "GRAPHQL_VALIDATION_FAILED") || !strings.Contains(body, tc.message) || strings.Contains(body, "Alice") {
				t.Errorf("%s: %s: HTTP %d %s; want GRAPHQL_VALIDATION_FAILED %q", format, tc.query, raw.Status, body, tc.message)
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%s: %d DynamoDB calls, want none", format, n)
			}
		}
	}
}
