package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// MustRefuse runs a query as alice and fails the test unless it is refused
// with one GRAPHQL_VALIDATION_FAILED or BAD_USER_INPUT error, no data, and
// without a DynamoDB call; it returns the error's message.
func MustRefuse(tb testing.TB, e *testenv.Env, query string, vars map[string]any) string {
	tb.Helper()
	e.Calls.Reset()
	res := e.Query(tb, "alice", query, vars)
	if len(res.Errors) != 1 || (res.Errors[0].Code() != "GRAPHQL_VALIDATION_FAILED" && res.Errors[0].Code() != "BAD_USER_INPUT") {
		tb.Fatalf("want one GRAPHQL_VALIDATION_FAILED or BAD_USER_INPUT, got %+v (data %s)", res.Errors, res.Data)
	}
	if d := string(res.Data); d != "" && d != "null" {
		tb.Fatalf("refused, yet data %s", d)
	}
	if n := e.Calls.Total(); n != 0 {
		tb.Fatalf("%d DynamoDB calls before the refusal", n)
	}
	return res.Errors[0].Message
}

func TestEnumValuesAreCaseSensitive(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	web := seed.Project("Website relaunch").ID
	task := seed.Task("Write the landing page copy") // IN_PROGRESS
	const byStatus = `query($p: ID!, $s: TaskStatus) { project(id: $p) { tasks(status: $s) { nodes { title status } } } }`
	const update = `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { status } }`
	mustStatus := func(t *testing.T, want string) {
		t.Helper()
		var out struct{ Task struct{ Status string } }
		e.MustQuery(t, "alice", `query($id: ID!) { task(id: $id) { status } }`, map[string]any{"id": task.ID}, &out)
		if out.Task.Status != want {
			t.Fatalf("the task's status is %q, want %q", out.Task.Status, want)
		}
	}

	for _, v := range []any{"done", "Done", "dONE", "In_Progress", "in_progress", " DONE", "DONE ", "", 1, true} {
		t.Run("variable "+string(must(json.Marshal(v))), func(t *testing.T) {
			msg := MustRefuse(t, e, byStatus, map[string]any{"p": web, "s": v})
			if !strings.Contains(msg, "TaskStatus") && !strings.Contains(msg, "enum") {
				t.Errorf("message %q does not name the enum", msg)
			}
		})
		t.Run("in an input object "+string(must(json.Marshal(v))), func(t *testing.T) {
			msg := MustRefuse(t, e, update, map[string]any{"in": map[string]any{"id": task.ID, "status": v}})
			if !strings.Contains(msg, "TaskStatus") && !strings.Contains(msg, "enum") {
				t.Errorf("message %q does not name the enum", msg)
			}
			mustStatus(t, "IN_PROGRESS")
		})
	}
	for _, lit := range []string{"done", "Done", "in_progress", `"DONE"`} {
		t.Run("literal "+lit, func(t *testing.T) {
			MustRefuse(t, e, `query($p: ID!) { project(id: $p) { tasks(status: `+lit+`) { nodes { title } } } }`, map[string]any{"p": web})
		})
		t.Run("literal in an input object "+lit, func(t *testing.T) {
			MustRefuse(t, e, `mutation($id: ID!) { updateTask(input: {id: $id, status: `+lit+`}) { status } }`, map[string]any{"id": task.ID})
			mustStatus(t, "IN_PROGRESS")
		})
	}
	t.Run("the exact name filters", func(t *testing.T) {
		var out struct {
			Project struct {
				Tasks struct {
					Nodes []struct{ Title, Status string }
				}
			}
		}
		e.MustQuery(t, "alice", byStatus, map[string]any{"p": web, "s": "DONE"}, &out)
		if n := out.Project.Tasks.Nodes; len(n) != 1 || n[0].Title != "Pick a colour palette" || n[0].Status != "DONE" {
			t.Fatalf("DONE tasks: %+v", n)
		}
	})
	t.Run("the exact name updates", func(t *testing.T) {
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": task.ID, "status": "DONE"}}, nil)
		mustStatus(t, "DONE")
	})
}

func TestScalarInputsAreStrict(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	task := seed.Task("Set up analytics")
	const first = `query($n: Int) { me { projects(first: $n) { nodes { name } } } }`
	const update = `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { title } }`
	mustTitle := func(t *testing.T) {
		t.Helper()
		var out struct{ Task struct{ Title string } }
		e.MustQuery(t, "alice", `query($id: ID!) { task(id: $id) { title } }`, map[string]any{"id": task.ID}, &out)
		if out.Task.Title != task.Title {
			t.Fatalf("the task changed: title %q", out.Task.Title)
		}
	}
	refused := []struct {
		name, query string
		vars        map[string]any
	}{
		{"Int from a string", first, map[string]any{"n": "1"}},
		{"Int from 1.5", first, map[string]any{"n": 1.5}},
		{"Int from 2147483648", first, map[string]any{"n": 2147483648}},
		{"Int from -2147483649", first, map[string]any{"n": -2147483649}},
		{"Int from 1e20", first, map[string]any{"n": json.RawMessage("1e20")}},
		{"Int from true", first, map[string]any{"n": true}},
		{"Int literal 2147483648", `{ me { projects(first: 2147483648) { nodes { name } } } }`, nil},
		{"Int literal 1.5", `{ me { projects(first: 1.5) { nodes { name } } } }`, nil},
		{`Int literal "1"`, `{ me { projects(first: "1") { nodes { name } } } }`, nil},
		{"Int variable default 2147483648", `query($n: Int = 2147483648) { me { projects(first: $n) { nodes { name } } } }`, nil},
		{"Int in an input object from a string", update, map[string]any{"in": map[string]any{"id": task.ID, "title": "x", "expectedVersion": "1"}}},
		{"Int in an input object from 2147483648", update, map[string]any{"in": map[string]any{"id": task.ID, "title": "x", "expectedVersion": 2147483648}}},
		{"Boolean from a string", `query($b: Boolean!) { me { name @include(if: $b) } }`, map[string]any{"b": "true"}},
		{"Boolean from a number", `query($b: Boolean!) { me { name @include(if: $b) } }`, map[string]any{"b": 1}},
		{"String from a number", `query($t: String!) { tasksByTag(tag: $t) { nodes { title } } }`, map[string]any{"t": 1}},
		{"String from a boolean", `query($t: String!) { tasksByTag(tag: $t) { nodes { title } } }`, map[string]any{"t": true}},
		{"String in an input object from a number", update, map[string]any{"in": map[string]any{"id": task.ID, "title": 7}}},
		{"String in a list from a number", update, map[string]any{"in": map[string]any{"id": task.ID, "tags": []any{"ok", 1}}}},
		{"ID from a boolean", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": true}},
	}
	for _, tc := range refused {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			MustRefuse(t, e, tc.query, tc.vars)
			mustTitle(t)
		})
	}
	for _, n := range []any{1, json.RawMessage("1.0"), json.RawMessage("1e0")} {
		t.Run("Int from "+string(must(json.Marshal(n))), func(t *testing.T) {
			var out struct {
				Me struct {
					Projects struct{ Nodes []struct{ Name string } }
				}
			}
			e.MustQuery(t, "alice", first, map[string]any{"n": n}, &out)
			if len(out.Me.Projects.Nodes) != 1 {
				t.Fatalf("first 1 gave %d projects", len(out.Me.Projects.Nodes))
			}
		})
	}
	t.Run("ID from an integer is accepted", func(t *testing.T) {
		res := e.Query(t, "alice", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": 12})
		if len(res.Errors) != 0 || string(res.Data) != `{"node":null}` {
			t.Fatalf("%+v %s", res.Errors, res.Data)
		}
	})
	t.Run("an Int in an input object within 32 bits works", func(t *testing.T) {
		var out struct{ UpdateTask struct{ Title string } }
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": task.ID, "title": "Set up analytics v2", "expectedVersion": 1}}, &out)
		if out.UpdateTask.Title != "Set up analytics v2" {
			t.Fatalf("got %+v", out)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
