package graph_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// A replayed mutation is a read: it answers only with what the viewer may
// see at replay time.

// replayCase is one mutation that answers with an object: how to run it
// with a key, and how to take away the viewer's sight of its result.
type replayCase struct {
	viewer string
	// mutation runs with the variables vars(e, s) and selects, under its
	// result, fields that would show the project's data.
	mutation string
	vars     func(e *testenv.Env, s *testenv.Seed) map[string]any
	// revoke makes the result invisible to the viewer (nil: it stays
	// visible, e.g. the viewer's own profile).
	revoke func(t *testing.T, e *testenv.Env, s *testenv.Seed, vars map[string]any, data json.RawMessage)
}

// removeMember has the owner of the Website project remove its member.
func removeMember(member string) func(*testing.T, *testenv.Env, *testenv.Seed, map[string]any, json.RawMessage) {
	return func(t *testing.T, e *testenv.Env, s *testenv.Seed, _ map[string]any, _ json.RawMessage) {
		t.Helper()
		e.MustQuery(t, "alice", `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": s.Project("Website relaunch").ID, "u": member}, nil)
	}
}

// deleteResultProject deletes the project that the answer's result lies in.
func deleteResultProject(field string) func(*testing.T, *testenv.Env, *testenv.Seed, map[string]any, json.RawMessage) {
	return func(t *testing.T, e *testenv.Env, _ *testenv.Seed, _ map[string]any, data json.RawMessage) {
		t.Helper()
		var d map[string]struct{ ID string }
		if err := json.Unmarshal(data, &d); err != nil || d[field].ID == "" {
			t.Fatalf("no %s.id in %s", field, data)
		}
		e.MustQuery(t, "bob", `mutation($p: ID!) { deleteProject(id: $p) }`, map[string]any{"p": d[field].ID}, nil)
	}
}

// projectData is a selection that shows a project's members, tasks and
// comments: what a replay must never hand out unchecked.
const projectData = `id name members { user { id } } tasks(first: 50) { nodes { title comments(first: 50) { nodes { body } } } }`

var replayCases = map[string]replayCase{
	"createTask": {
		viewer:   "carol",
		mutation: `mutation($p: ID!) { createTask(input: {projectId: $p, title: "t"}) { id project { ` + projectData + ` } } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"p": s.Project("Website relaunch").ID}
		},
		revoke: removeMember("carol"),
	},
	"updateTask": {
		viewer:   "carol",
		mutation: `mutation($id: ID!) { updateTask(input: {id: $id, title: "renamed"}) { id project { ` + projectData + ` } } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"id": s.Task("Pick a colour palette").ID}
		},
		revoke: removeMember("carol"),
	},
	"addComment": {
		viewer:   "carol",
		mutation: `mutation($id: ID!) { addComment(input: {taskId: $id, body: "hi"}) { id task { project { ` + projectData + ` } } } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"id": s.Task("Pick a colour palette").ID}
		},
		revoke: removeMember("carol"),
	},
	"createProject": {
		viewer:   "bob",
		mutation: `mutation { createProject(input: {name: "Side"}) { ` + projectData + ` } }`,
		vars:     func(*testenv.Env, *testenv.Seed) map[string]any { return nil },
		revoke:   deleteResultProject("createProject"),
	},
	"updateProject": {
		viewer:   "bob",
		mutation: `mutation($p: ID!) { updateProject(input: {id: $p, name: "Mobile"}) { ` + projectData + ` } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"p": s.Project("Mobile app").ID}
		},
		revoke: deleteResultProject("updateProject"),
	},
	"addProjectMember": {
		viewer:   "bob",
		mutation: `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "carol") { ` + projectData + ` } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"p": s.Project("Mobile app").ID}
		},
		revoke: deleteResultProject("addProjectMember"),
	},
	"removeProjectMember": {
		viewer:   "bob",
		mutation: `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "dave") { ` + projectData + ` } }`,
		vars: func(_ *testenv.Env, s *testenv.Seed) map[string]any {
			return map[string]any{"p": s.Project("Mobile app").ID}
		},
		revoke: deleteResultProject("removeProjectMember"),
	},
	"updateProfile": {
		viewer:   "carol",
		mutation: `mutation { updateProfile(input: {name: "Carol C."}) { id name } }`,
		vars:     func(*testenv.Env, *testenv.Seed) map[string]any { return nil },
	},
}

func TestReplayChecksVisibilityNow(t *testing.T) {
	for name, c := range replayCases {
		t.Run(name, func(t *testing.T) {
			e := testenv.New(t)
			s := e.MustSeed(t)
			vars := c.vars(e, s)
			first := idemDo(t, e, c.viewer, "K", c.mutation, vars)
			if len(first.Errors) > 0 {
				t.Fatalf("first call: %+v", first.Errors)
			}
			again := idemDo(t, e, c.viewer, "K", c.mutation, vars)
			if len(again.Errors) > 0 || string(again.Data) != string(first.Data) {
				t.Fatalf("replay while visible: %s %+v, want %s", again.Data, again.Errors, first.Data)
			}
			if c.revoke == nil {
				return
			}
			c.revoke(t, e, s, vars, first.Data)
			// What the owner adds afterwards must not reach the replay either.
			e.MustQuery(t, "alice", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "after removal"}) { id } }`,
				map[string]any{"p": s.Project("Website relaunch").ID}, nil)

			res := idemDo(t, e, c.viewer, "K", c.mutation, vars)
			if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
				t.Fatalf("replay after losing sight: errors %+v, want one NOT_FOUND", res.Errors)
			}
			if string(res.Data) != "null" {
				t.Fatalf("replay after losing sight answered data %s, want null", res.Data)
			}
		})
	}
}

// TestReplayCasesCoverEveryMutation fails when a mutation that answers with
// an object has no case above: a new mutation must prove its replay too.
func TestReplayCasesCoverEveryMutation(t *testing.T) {
	src, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	var missing []string
	for _, f := range schema.Mutation.Fields {
		if def := schema.Types[f.Type.Name()]; def != nil && def.Kind == ast.Object && replayCases[f.Name].mutation == "" {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("mutations answering with an object and no replay case: %v", missing)
	}
}

func TestIdempotencyKeyReuse(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch").ID
	t2 := s.Task("Fix the broken signup form").ID
	task := func(tb testing.TB, id string) string {
		tb.Helper()
		var d struct{ Task struct{ Title string } }
		e.MustQuery(tb, "alice", `query($id: ID!) { task(id: $id) { title } }`, map[string]any{"id": id}, &d)
		return d.Task.Title
	}
	mustReuse := func(t *testing.T, res testenv.Response) {
		t.Helper()
		if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" ||
			!strings.Contains(res.Errors[0].Message, "idempotency key") || string(res.Data) != "null" {
			t.Fatalf("got %s %+v, want data null and one BAD_USER_INPUT about the key", res.Data, res.Errors)
		}
	}

	t.Run("another mutation under the same alias is refused and changes nothing", func(t *testing.T) {
		first := idemDo(t, e, "alice", "m-1", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "A"}) { id } }`,
			map[string]any{"p": web})
		if len(first.Errors) > 0 {
			t.Fatal(first.Errors)
		}
		before := e.Dump(t)
		mustReuse(t, idemDo(t, e, "alice", "m-1", `mutation($id: ID!) { createTask: updateTask(input: {id: $id, title: "CHANGED"}) { id title } }`,
			map[string]any{"id": t2}))
		if got := task(t, t2); got != "Fix the broken signup form" {
			t.Fatalf("task title %q: the refused mutation ran", got)
		}
		if e.Dump(t) != before {
			t.Fatal("the refused mutation changed the table")
		}
	})
	t.Run("a delete under a key used for a create is refused, the task stays", func(t *testing.T) {
		if res := idemDo(t, e, "alice", "m-2", `mutation { x: createProject(input: {name: "P"}) { id } }`, nil); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		mustReuse(t, idemDo(t, e, "alice", "m-2", `mutation($id: ID!) { x: deleteTask(id: $id) }`, map[string]any{"id": t2}))
		if task(t, t2) == "" {
			t.Fatal("the task was deleted")
		}
	})
	t.Run("the same mutation with other input is refused", func(t *testing.T) {
		q := `mutation($p: ID!, $title: String!) { createTask(input: {projectId: $p, title: $title}) { id } }`
		if res := idemDo(t, e, "alice", "m-3", q, map[string]any{"p": web, "title": "one"}); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		before := idemCount(t, e, "TASK")
		mustReuse(t, idemDo(t, e, "alice", "m-3", q, map[string]any{"p": web, "title": "two"}))
		if n := idemCount(t, e, "TASK"); n != before {
			t.Fatalf("%d tasks, want %d", n, before)
		}
	})
	t.Run("the same input written as literals or variables, another selection, replays", func(t *testing.T) {
		a := idemDo(t, e, "alice", "m-4", `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t, tags: ["x"]}) { id } }`,
			map[string]any{"p": web, "t": "same"})
		b := idemDo(t, e, "alice", "m-4", `mutation { createTask(input: {tags: ["x"], title: "same", projectId: "`+web+`"}) { id title } }`, nil)
		if len(a.Errors)+len(b.Errors) > 0 || idemTaskID(t, a) != idemTaskID(t, b) {
			t.Fatalf("got %s %+v and %s %+v, want one task", a.Data, a.Errors, b.Data, b.Errors)
		}
	})
	t.Run("an expired record that TTL has not removed counts as absent", func(t *testing.T) {
		q := `mutation($p: ID!) { createTask(input: {projectId: $p, title: "daily"}) { id } }`
		first := idemTaskID(t, idemDo(t, e, "alice", "m-5", q, map[string]any{"p": web}))
		e.Store.Now = func() time.Time { return testenv.Now.Add(25 * time.Hour) }
		defer func() { e.Store.Now = func() time.Time { return testenv.Now } }()
		res := idemDo(t, e, "alice", "m-5", q, map[string]any{"p": web})
		second := idemTaskID(t, res)
		if second == "" || second == first {
			t.Fatalf("after expiry: %s %+v, want a new task", res.Data, res.Errors)
		}
		if third := idemTaskID(t, idemDo(t, e, "alice", "m-5", q, map[string]any{"p": web})); third != second {
			t.Fatalf("the renewed key answers %q, want %q", third, second)
		}
	})
}
