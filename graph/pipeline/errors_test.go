package pipeline_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// errsCodes checks that every error of res carries an extensions.code and
// returns the codes.
func errsCodes(t *testing.T, res *testenv.Response) []string {
	t.Helper()
	codes := make([]string, len(res.Errors))
	for i, err := range res.Errors {
		if codes[i] = err.Code(); codes[i] == "" {
			t.Errorf("error %d has no extensions.code: %+v", i, err)
		}
	}
	return codes
}

// errsWant runs query as viewer and checks that it fails with exactly one
// error whose code is one of codes; every error must have a code.
func errsWant(t *testing.T, e *testenv.Env, viewer, query string, vars map[string]any, codes ...string) testenv.Error {
	t.Helper()
	res := e.Query(t, viewer, query, vars)
	got := errsCodes(t, res)
	if len(got) != 1 || !slices.Contains(codes, got[0]) {
		t.Fatalf("want one error of %v, got %+v (data %s)", codes, res.Errors, res.Data)
	}
	return res.Errors[0]
}

// errsDashboard is the contract's dashboard: 10 projects × (members + 20
// tasks × (assignee, tags, 5 comments × author)).
const errsDashboard = `{ me { projects(first: 10) { nodes { id name members { role user { id name } }
	tasks(first: 20) { nodes { id title status dueDate assignee { id name } tags { name }
	comments(first: 5) { nodes { id body author { id name } } } } } } } } }`

func TestErrorCodes(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	task := s.Task("Write the landing page copy")
	var firstPage struct {
		Me struct {
			Projects struct{ PageInfo struct{ EndCursor string } }
		}
	}
	e.MustQuery(t, "alice", `{ me { projects(first: 1) { pageInfo { endCursor } } } }`, nil, &firstPage)
	projectCursor := firstPage.Me.Projects.PageInfo.EndCursor
	if projectCursor == "" {
		t.Fatal("no project cursor")
	}

	cases := []struct {
		name  string
		query string
		vars  map[string]any
		codes []string
	}{
		{"a syntax error is GRAPHQL_PARSE_FAILED", `{ me { id }`, nil, []string{"GRAPHQL_PARSE_FAILED"}},
		{"a stray character is GRAPHQL_PARSE_FAILED", `{ me { id } } }`, nil, []string{"GRAPHQL_PARSE_FAILED"}},
		{"an unknown field is GRAPHQL_VALIDATION_FAILED", `{ me { nope } }`, nil, []string{"GRAPHQL_VALIDATION_FAILED"}},
		{"an unknown argument is GRAPHQL_VALIDATION_FAILED", `{ me { projects(limit: 1) { nodes { id } } } }`, nil,
			[]string{"GRAPHQL_VALIDATION_FAILED"}},
		{"a missing variable is GRAPHQL_VALIDATION_FAILED", `query($id: ID!) { project(id: $id) { id } }`, nil,
			[]string{"GRAPHQL_VALIDATION_FAILED"}},
		{"first: 0 is BAD_USER_INPUT", `{ me { projects(first: 0) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"first: 101 is BAD_USER_INPUT", `{ me { projects(first: 101) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"first: -1 is BAD_USER_INPUT", `{ me { assignedTasks(first: -1) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"last: -1 is BAD_USER_INPUT", `{ me { assignedTasks(last: -1) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"last: 101 is BAD_USER_INPUT", `{ me { projects(last: 101) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"first with last is BAD_USER_INPUT", `{ me { projects(first: 1, last: 1) { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"first: 0 on tasksByTag is BAD_USER_INPUT", `{ tasksByTag(tag: "urgent", first: 0) { nodes { id } } }`, nil,
			[]string{"BAD_USER_INPUT"}},
		{"first: 101 on a project's tasks is BAD_USER_INPUT", `query($id: ID!) { project(id: $id) { tasks(first: 101) { nodes { id } } } }`,
			map[string]any{"id": web.ID}, []string{"BAD_USER_INPUT"}},
		{"first: 101 on comments is BAD_USER_INPUT", `query($id: ID!) { task(id: $id) { comments(first: 101) { nodes { id } } } }`,
			map[string]any{"id": task.ID}, []string{"BAD_USER_INPUT"}},
		{"first: 0 as a variable is BAD_USER_INPUT", `query($n: Int) { me { overdueTasks(first: $n) { nodes { id } } } }`,
			map[string]any{"n": 0}, []string{"BAD_USER_INPUT"}},
		{"a garbage cursor is BAD_USER_INPUT", `{ tasksByTag(tag: "urgent", after: "garbage") { nodes { id } } }`, nil,
			[]string{"BAD_USER_INPUT"}},
		{"an empty cursor is BAD_USER_INPUT", `{ me { projects(after: "") { nodes { id } } } }`, nil, []string{"BAD_USER_INPUT"}},
		{"a cursor of another version is BAD_USER_INPUT", `query($c: String) { me { assignedTasks(after: $c) { nodes { id } } } }`,
			map[string]any{"c": base64.RawURLEncoding.EncodeToString([]byte("c0:DUE#2026-08-25#01K3ZZZZZZZZZZZZZZZZZZZZZZ"))},
			[]string{"BAD_USER_INPUT"}},
		{"a project cursor on a task list is BAD_USER_INPUT", `query($id: ID!, $c: String) { project(id: $id) { tasks(after: $c) { nodes { id } } } }`,
			map[string]any{"id": web.ID, "c": projectCursor}, []string{"BAD_USER_INPUT"}},
		{"a project cursor on comments is BAD_USER_INPUT", `query($id: ID!, $c: String) { task(id: $id) { comments(after: $c) { nodes { id } } } }`,
			map[string]any{"id": task.ID, "c": projectCursor}, []string{"BAD_USER_INPUT"}},
		{"a bad Date variable is BAD_USER_INPUT or GRAPHQL_VALIDATION_FAILED",
			`query($d: Date) { me { overdueTasks(asOf: $d) { nodes { id } } } }`, map[string]any{"d": "2026-13-01"},
			[]string{"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}},
		{"a Date variable of 30 February is BAD_USER_INPUT or GRAPHQL_VALIDATION_FAILED",
			`query($d: Date) { me { overdueTasks(asOf: $d) { nodes { id } } } }`, map[string]any{"d": "2026-02-30"},
			[]string{"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}},
		{"a numeric Date variable is BAD_USER_INPUT or GRAPHQL_VALIDATION_FAILED",
			`query($d: Date) { me { overdueTasks(asOf: $d) { nodes { id } } } }`, map[string]any{"d": 20260101},
			[]string{"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}},
		{"a bad Date literal is BAD_USER_INPUT", `{ me { overdueTasks(asOf: "2026-13-01") { nodes { id } } } }`, nil,
			[]string{"BAD_USER_INPUT"}},
		{"a Date literal with a time is BAD_USER_INPUT", `{ me { overdueTasks(asOf: "2026-08-25T00:00:00Z") { nodes { id } } } }`, nil,
			[]string{"BAD_USER_INPUT"}},
		{"a bad Date in a mutation input is BAD_USER_INPUT",
			`mutation($p: ID!) { createTask(input: {projectId: $p, title: "t", dueDate: "2026-02-30"}) { id } }`,
			map[string]any{"p": web.ID}, []string{"BAD_USER_INPUT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.Dump(t)
			errsWant(t, e, "alice", c.query, c.vars, c.codes...)
			if e.Dump(t) != before {
				t.Error("a refused request changed the table")
			}
		})
	}
	t.Run("a valid Date and page are accepted", func(t *testing.T) {
		var got struct {
			Me struct {
				OverdueTasks struct{ Nodes []struct{ ID string } }
			}
		}
		e.MustQuery(t, "alice", `query($d: Date) { me { overdueTasks(asOf: $d, first: 100) { nodes { id } } } }`,
			map[string]any{"d": "2026-08-25"}, &got)
		if len(got.Me.OverdueTasks.Nodes) == 0 {
			t.Error("alice has no overdue task in the seed")
		}
	})
}

func TestComplexityLimit(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	tooCostly := []struct{ name, query string }{
		{"three levels of 100", `{ me { projects(first: 100) { nodes { tasks(first: 100) { nodes {
			comments(first: 100) { nodes { author { name } } } } } } } } }`},
		{"three levels of the default page and more", `{ me { projects { nodes { tasks(first: 100) { nodes {
			comments(first: 50) { nodes { author { name } } } } } } } } }`},
		{"tags under tasks under tags", `{ tasksByTag(tag: "urgent", first: 100) { nodes { tags {
			tasks(first: 100) { nodes { tags { name } } } } } } }`},
		{"the dashboard with 100 projects", `{ me { projects(first: 100) { nodes { name members { role user { name } }
			tasks(first: 20) { nodes { title assignee { name } tags { name } comments(first: 5) { nodes { author { name } } } } } } } } }`},
	}
	for _, c := range tooCostly {
		t.Run(c.name+" is COMPLEXITY_LIMIT_EXCEEDED before any read", func(t *testing.T) {
			e.Calls.Reset()
			errsWant(t, e, "alice", c.query, nil, "COMPLEXITY_LIMIT_EXCEEDED")
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls for a refused query: %v", n, e.Calls.ByOp())
			}
		})
	}
	t.Run("the contract's dashboard is accepted", func(t *testing.T) {
		var got struct {
			Me struct {
				Projects struct {
					Nodes []struct {
						Members []struct{ Role string }
						Tasks   struct {
							Nodes []struct {
								Comments struct {
									Nodes []struct{ Author struct{ Name string } }
								}
							}
						}
					}
				}
			}
		}
		e.MustQuery(t, "alice", errsDashboard, nil, &got)
		ps := got.Me.Projects.Nodes
		if len(ps) != 2 || len(ps[0].Members) == 0 || len(ps[0].Tasks.Nodes) == 0 {
			t.Errorf("dashboard data incomplete: %+v", got)
		}
	})
}

func TestStoreFailureIsOpaque(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	srv := e.Emb.Server
	table := e.Store.Table()
	everything := func() { srv.EmulateFailure(true) }
	index := func(name string) func() {
		return func() { srv.EmulateFailureForTable(table, name, true) }
	}
	t.Cleanup(func() {
		srv.EmulateFailure(false)
		srv.EmulateFailureForTable(table, "GSI1", false)
		srv.EmulateFailureForTable(table, "GSI4", false)
	})

	forbidden := []string{"emulated", "dynamo", "minidyn", strings.ToLower(table), "operation error",
		"api error", "internalservererror", "statuscode", "status code", "requestid", "request id", "127.0.0.1",
		"http://", "https://", "exceeded maximum", "retry quota", "batchgetitem", "getitem", "transactwriteitems",
		"gsi1", "gsi4", ".go:", "panic", "%!"}
	cases := []struct {
		name, query string
		vars        map[string]any
		fail        func()
	}{
		{"a point read", `{ me { id name } }`, nil, everything},
		{"a list", `query($id: ID!) { project(id: $id) { tasks { nodes { id } } } }`, map[string]any{"id": web.ID}, everything},
		{"a list on a failing index", `query($id: ID!) { project(id: $id) { name tasks { nodes { id description } } } }`,
			map[string]any{"id": web.ID}, index("GSI1")},
		{"a list on a failing lean index", `query($id: ID!) { project(id: $id) { name tasks { nodes { id } } } }`,
			map[string]any{"id": web.ID}, index("GSI4")},
		{"a mutation", `mutation { createProject(input: {name: "During the outage"}) { id } }`, nil, everything},
	}
	for _, c := range cases {
		t.Run(c.name+" fails with an opaque SERVICE_UNAVAILABLE or INTERNAL_SERVER_ERROR", func(t *testing.T) {
			c.fail()
			defer srv.EmulateFailure(false)
			defer srv.EmulateFailureForTable(table, "GSI1", false)
			defer srv.EmulateFailureForTable(table, "GSI4", false)
			res := e.Query(t, "alice", c.query, c.vars)
			t.Logf("errors %+v, data %s", res.Errors, res.Data)
			codes := errsCodes(t, res)
			if len(codes) == 0 {
				t.Fatalf("no error; data %s", res.Data)
			}
			for i, err := range res.Errors {
				if codes[i] != "SERVICE_UNAVAILABLE" && codes[i] != "INTERNAL_SERVER_ERROR" {
					t.Errorf("code %q, want SERVICE_UNAVAILABLE or INTERNAL_SERVER_ERROR: %+v", codes[i], err)
				}
				msg := strings.ToLower(err.Message)
				for _, f := range forbidden {
					if strings.Contains(msg, f) {
						t.Errorf("message %q reveals %q", err.Message, f)
					}
				}
				if ext, _ := json.Marshal(err.Extensions); strings.Contains(strings.ToLower(string(ext)), "emulated") {
					t.Errorf("extensions reveal the cause: %s", ext)
				}
			}
			if strings.Contains(string(res.Data), "alice@example.com") {
				t.Errorf("data leaks through a failure: %s", res.Data)
			}
		})
	}
	t.Run("the store answers again once it recovers and the failed mutation wrote nothing", func(t *testing.T) {
		var got struct{ Me struct{ ID string } }
		e.MustQuery(t, "alice", `{ me { id } }`, nil, &got)
		if got.Me.ID != "alice" {
			t.Errorf("me.id = %q", got.Me.ID)
		}
		var p struct {
			Me struct {
				Projects struct{ Nodes []struct{ Name string } }
			}
		}
		e.MustQuery(t, "alice", `{ me { projects(first: 100) { nodes { name } } } }`, nil, &p)
		if len(p.Me.Projects.Nodes) != 2 {
			t.Errorf("alice has %d projects, want the 2 seeded", len(p.Me.Projects.Nodes))
		}
		for _, n := range p.Me.Projects.Nodes {
			if n.Name == "During the outage" {
				t.Error("the failed mutation created a project")
			}
		}
	})
}
