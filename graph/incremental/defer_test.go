package incremental_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestDeferOverMultipart reads the deferred dashboard over multipart/mixed
// in each format, as its Accept asks: the 2022-08-24 one by default and
// for deferSpec=20220824 (Apollo Client's Defer20220824Handler) or a bare
// multipart/mixed (urql); graphql-js 17's for incrementalSpec=v0.2 (Apollo
// Client's GraphQL17Alpha9Handler). Each merges to the query without
// @defer, with one log line.
func TestDeferOverMultipart(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	lb := &testenv.LogBuffer{}
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Log: slog.New(slog.NewTextHandler(lb, nil))}})
	var want any
	e.MustQuery(t, "alice", testenv.PlainDashboard, nil, &want)
	for _, tc := range []struct{ accept, format string }{
		{"multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9", "deferSpec=20220824"},
		{"multipart/mixed;incrementalSpec=v0.2,application/graphql-response+json,application/json;q=0.9", "incrementalSpec=v0.2"},
		{"application/graphql-response+json, application/graphql+json, application/json, multipart/mixed", "deferSpec=20220824"},
	} {
		e.Calls.Reset()
		before := strings.Count(lb.String(), "msg=graphql")
		raw := e.Send(t, map[string]any{"query": testenv.DeferDashboard}, e.As("alice"), testenv.Header("Accept", tc.accept))
		if raw.Status != http.StatusOK {
			t.Fatalf("Accept %q: HTTP %d: %s", tc.accept, raw.Status, raw.Body)
		}
		if got := testenv.MultipartFormat(raw.Header.Get("Content-Type")); got != tc.format {
			t.Errorf("Accept %q: Content-Type %q, want %s", tc.accept, raw.Header.Get("Content-Type"), tc.format)
		}
		parts := testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body))
		testenv.CheckDeferred(t, parts, want)
		if v02 := tc.format == "incrementalSpec=v0.2"; v02 != (parts[0].Pending != nil) {
			t.Errorf("Accept %q: the initial part's pending %v", tc.accept, parts[0].Pending)
		}
		lines := strings.Split(strings.TrimSpace(lb.String()), "\n")[before:]
		if len(lines) != 1 || !strings.Contains(lines[0], "operation=Dashboard") || !strings.Contains(lines[0], "outcome=OK") {
			t.Fatalf("log lines of the deferred operation, want one:\n%s", strings.Join(lines, "\n"))
		}
		t.Logf("%s: %d parts, calls %v", tc.format, len(parts), e.Calls.ByOp())
	}
}

// TestDeferPinnedCalls pins the DynamoDB calls and loader batches of the
// deferred dashboard, read level by level (dispatched by level): the same as the
// dashboard without @defer, so the deferred fragments of the projects
// batch with each other (one batch per loader and level across all of
// them), not one per fragment.
func TestDeferPinnedCalls(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	batches := func(tel *telemetry.Telemetry) map[string]uint64 {
		return testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_loader_batch_keys")
	}
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	var plain any
	e.MustQuery(t, "alice", testenv.PlainDashboard, nil, &plain)
	plainCalls, plainBatches := e.Calls.ByOp(), batches(tel)

	tel = testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.Calls.Reset()
	raw := e.Send(t, map[string]any{"query": testenv.DeferDashboard}, e.As("alice"),
		testenv.Header("Accept", "multipart/mixed;deferSpec=20220824, application/json"))
	testenv.CheckDeferred(t, testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body)), plain)
	calls, got := e.Calls.ByOp(), batches(tel)
	var ops uint64
	for _, n := range testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_graphql_operation_duration_seconds") {
		ops += n
	}
	if ops != 1 {
		t.Errorf("the deferred operation counted %d times in the metrics, want once", ops)
	}
	t.Logf("calls %v, batches %v; without @defer: %v, %v", calls, got, plainCalls, plainBatches)
	// Point reads (the viewer with the projects, the members' users, the
	// deferred tasks' assignees, tags and comment authors) in 2 batches of
	// the objects loader, 2 BatchGetItem; the project list, the members, the
	// task lists and the comment lists one batch each, a Query per
	// partition, but the comment lists: a Query per project's collection
	// (dynamo/commentindex.go). The project list is the viewer's profile,
	// which the first batch reads anyway (graph/loaders/copies.go; before
	// the floors, a Query of their memberships: 7).
	wantCalls := map[string]int{"BatchGetItem": 2, "Query": 6}
	if !maps.Equal(calls, wantCalls) || !maps.Equal(plainCalls, wantCalls) {
		t.Errorf("DynamoDB calls %v (without @defer %v), want %v", calls, plainCalls, wantCalls)
	}
	if !maps.Equal(got, plainBatches) || len(got) == 0 {
		t.Errorf("loader batches %v, without @defer %v: want the same", got, plainBatches)
	}
}

// A plain POST (Accept: application/json) cannot receive the parts of an
// operation with @defer: it is refused before anything runs, 406 with
// BAD_REQUEST naming the media types to accept, no data, nothing read.
func TestDeferRefusedWithoutIncrementalDelivery(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	lb := &testenv.LogBuffer{}
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Log: slog.New(slog.NewTextHandler(lb, nil))}})
	for _, accept := range []string{"application/json", "", "application/graphql-response+json, application/json"} {
		e.Calls.Reset()
		raw := e.Send(t, map[string]any{"query": testenv.DeferDashboard}, e.As("alice"), testenv.Header("Accept", accept))
		res := raw.Decode(t)
		if raw.Status != http.StatusNotAcceptable || len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest ||
			!strings.Contains(res.Errors[0].Message, "multipart/mixed;deferSpec=20220824") ||
			!strings.Contains(res.Errors[0].Message, "text/event-stream") || strings.Contains(string(raw.Body), `"data"`) {
			t.Errorf("Accept %q: HTTP %d %s; want 406, BAD_REQUEST naming the media types, no data", accept, raw.Status, raw.Body)
		}
		if n := e.Calls.Total(); n != 0 {
			t.Errorf("Accept %q: %d DynamoDB calls, want none", accept, n)
		}
	}
	if n := strings.Count(lb.String(), "outcome="+codes.BadRequest); n != 3 {
		t.Errorf("%d log lines of the refusals, want 3:\n%s", n, lb)
	}
	// @defer(if: false) defers nothing: it runs over plain POST.
	off := strings.Replace(testenv.DeferDashboard, `@defer(label: "tasks")`, `@defer(if: $d, label: "tasks")`, 1)
	off = strings.Replace(off, "query Dashboard", "query Dashboard($d: Boolean!)", 1)
	res := e.Send(t, map[string]any{"query": off, "variables": map[string]any{"d": false}}, e.As("alice")).Decode(t)
	if len(res.Errors) > 0 || !strings.Contains(string(res.Data), `"title"`) {
		t.Errorf("@defer(if: false) over POST: %s %+v", res.Data, res.Errors)
	}
	// Through a fragment spread too.
	spread := `query { me { projects(first: 1) { nodes { ...T @defer } } } } fragment T on Project { tasks(first: 1) { nodes { id } } }`
	if res := e.Send(t, map[string]any{"query": spread}, e.As("alice")).Decode(t); len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest {
		t.Errorf("a deferred spread over POST: %+v", res.Errors)
	}
}

// A GET answers one JSON body, whatever it accepts: a query with @defer is
// refused over GET as over plain POST (406, BAD_REQUEST naming the media
// types, no data, nothing read), with its one log line and no error
// logged. Over a real connection, whose context ends once the answer is
// written: a deferred fragment still running then would fail its reads.
func TestDeferOverGETIsRefusedLikePOST(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	lb := &testenv.LogBuffer{}
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Log: slog.New(slog.NewTextHandler(lb, nil))}})
	srv := httptest.NewServer(e.Handler)
	defer srv.Close()
	accepts := []string{"multipart/mixed;deferSpec=20220824, application/json", "multipart/mixed", "text/event-stream",
		"text/event-stream, multipart/mixed", "application/json", ""}
	for _, accept := range accepts {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/query?"+url.Values{"query": {testenv.DeferDashboard}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+e.Token(t, "alice"))
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var res struct {
			Data   json.RawMessage `json:"data"`
			Errors []testenv.Error `json:"errors"`
		}
		_ = json.Unmarshal(body, &res)
		if resp.StatusCode != http.StatusNotAcceptable || len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest ||
			!strings.Contains(res.Errors[0].Message, pipeline.MediaTypesIncremental) || res.Data != nil {
			t.Errorf("GET accepting %q: HTTP %d %s %s; want 406, BAD_REQUEST naming %q, no data", accept, resp.StatusCode,
				resp.Header.Get("Content-Type"), body, pipeline.MediaTypesIncremental)
		}
	}
	srv.Close() // every handler has returned
	if n := e.Calls.Total(); n != 0 {
		t.Errorf("%d DynamoDB calls, want none", n)
	}
	if n := strings.Count(lb.String(), "outcome="+codes.BadRequest); n != len(accepts) || strings.Contains(lb.String(), "level=ERROR") {
		t.Errorf("%d log lines of %d refused operations, want one each and no error:\n%s", n, len(accepts), lb)
	}
}

// @defer in a mutation is refused before anything runs, on the transports
// that deliver parts too: GRAPHQL_VALIDATION_FAILED, no data, nothing
// written (gqlgen would answer the mutation's deferred fields null, a
// non-null owner among them, and never send their parts). The transport
// matrix runs it, and @defer in a subscription, on every protocol.
func TestDeferInAMutationIsRefused(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, accept := range []string{"multipart/mixed;deferSpec=20220824, application/json", "application/json"} {
		e.Calls.Reset()
		raw := e.Send(t, map[string]any{"query": `mutation { createProject(input: {name: "Deferred owner"}) { id ... @defer { owner { name } } } }`},
			e.As("alice"), testenv.Header("Accept", accept))
		res := raw.Decode(t)
		if len(res.Errors) != 1 || res.Errors[0].Code() != "GRAPHQL_VALIDATION_FAILED" ||
			!strings.Contains(res.Errors[0].Message, "@defer is not supported in a mutation") || strings.Contains(string(raw.Body), `"data"`) {
			t.Errorf("Accept %q: HTTP %d %s; want GRAPHQL_VALIDATION_FAILED, no data", accept, raw.Status, raw.Body)
		}
		if n := e.Calls.Total(); n != 0 {
			t.Errorf("Accept %q: %d DynamoDB calls, want none", accept, n)
		}
	}
	if strings.Contains(e.Dump(t), "Deferred owner") {
		t.Error("the mutation with @defer ran")
	}
	// @defer(if: false) defers nothing: the mutation runs.
	res := e.Send(t, map[string]any{"query": `mutation { createProject(input: {name: "Not deferred"}) { id ... @defer(if: false) { owner { name } } } }`},
		e.As("alice")).Decode(t)
	if len(res.Errors) > 0 || !strings.Contains(string(res.Data), "Alice Example") {
		t.Errorf("@defer(if: false) in a mutation: %s %+v", res.Data, res.Errors)
	}
}

// TestDeferNestedInEachFormat reads a dashboard whose tasks are deferred,
// and each task's comments deferred inside them, in each multipart/mixed
// format: a fragment inside another comes after the one it is in, so the
// parts merge, in order, to the query without @defer.
func TestDeferNestedInEachFormat(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const (
		nested = `query Dashboard { me { name projects(first: 10) { nodes { name members { role }
			... @defer(label: "tasks") { tasks(first: 5) { nodes { title
				... @defer(label: "comments") { comments(first: 5) { nodes { body } } } } } } } } } }`
		plain = `query Dashboard { me { name projects(first: 10) { nodes { name members { role }
			tasks(first: 5) { nodes { title comments(first: 5) { nodes { body } } } } } } } }`
	)
	var want any
	e.MustQuery(t, "alice", plain, nil, &want)
	for _, format := range []string{"deferSpec=20220824", "incrementalSpec=v0.2"} {
		for range 10 { // the goroutines' order varies from run to run
			raw := e.Send(t, map[string]any{"query": nested}, e.As("alice"), testenv.Header("Accept", "multipart/mixed;"+format))
			if got := testenv.MultipartFormat(raw.Header.Get("Content-Type")); raw.Status != http.StatusOK || got != format {
				t.Fatalf("%s: HTTP %d, %s: %s", format, raw.Status, raw.Header.Get("Content-Type"), raw.Body)
			}
			parts := testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body))
			testenv.CheckDeferred(t, parts, want)
		}
	}
}
