package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The screens the property test's viewers ask with GET: the clients'
// (clients/operations: the dashboard with assigned and overdue tasks, a
// project's board and tasks, a task's thread), lookups by id, and a tag's
// tasks, which has no tag (its dependencies are not bounded).
var cacheScreens = []struct {
	name, query string
	arg         string // "project", "task", "node": the variable $id's kind ("": none)
	tagged      bool   // whether its answer may have an ETag
}{
	{"dashboard", `query Dashboard { me { id name email projects(first: 10) { edges { cursor node { id name
		taskCounts { todo inProgress done } members { role user { id name } }
		tasks(first: 20) { edges { cursor node { id title status dueDate version assignee { id name } tags { id name }
		comments(first: 5) { edges { cursor node { id body createdAt author { id name } } } pageInfo { hasNextPage endCursor } } } }
		pageInfo { hasNextPage endCursor } } } } pageInfo { hasNextPage endCursor } }
		assignedTasks(first: 10) { edges { node { id title project { id name } } } pageInfo { hasNextPage } }
		overdueTasks(first: 10) { edges { node { id title } } } } }`, "", true},
	{"contract dashboard", testenv.Dashboard, "", true},
	{"profile", `{ me { id name email createdAt } }`, "", true},
	{"project board", `query($id: ID!) { project(id: $id) { id name description owner { id name }
		taskCounts { total todo inProgress done } members { role user { id name email } } } }`, "project", true},
	{"project tasks", `query($id: ID!) { project(id: $id) { id tasks(first: 5) { edges { cursor node { id title status
		assignee { name } tags { name } commentCount } } pageInfo { hasNextPage endCursor hasPreviousPage startCursor } } } }`, "project", true},
	{"task thread", `query($id: ID!) { task(id: $id) { id title description project { id name } assignee { id name }
		comments(first: 5) { edges { node { id body author { id name } } } pageInfo { hasNextPage } } } }`, "task", true},
	{"node", `query($id: ID!) { node(id: $id) { id ... on User { name } ... on Project { name members { user { name } } }
		... on Task { title } ... on Comment { body author { name } task { id title } } } }`, "node", true},
	{"tag", `{ tasksByTag(tag: "urgent", first: 10) { edges { node { id title } } } }`, "", false},
}

// cacheWorld is what the property test knows of the data it made (ids it
// may pick; a pick that no longer holds makes a mutation fail, which
// changes nothing).
type cacheWorld struct {
	users                     []string
	projects, tasks, comments []string
	tags                      []string
	e                         *testenv.Env
	h                         http.Handler
}

// mutate runs a mutation as viewer through h; an error answer is fine (a
// random pick may be refused: it changes nothing).
func (w *cacheWorld) mutate(t *testing.T, viewer, query string, vars map[string]any) map[string]any {
	t.Helper()
	r := w.e.Send(t, map[string]any{"query": query, "variables": vars}, w.e.As(viewer), testenv.Via(w.h)).Decode(t)
	var data map[string]any
	if len(r.Errors) == 0 {
		_ = json.Unmarshal(r.Data, &data)
	}
	return data
}

func cachePick(rng *rand.Rand, s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[rng.IntN(len(s))]
}

// step makes one random change of any kind as a random user, and returns
// what it did.
func (w *cacheWorld) step(t *testing.T, rng *rand.Rand) string {
	u := cachePick(rng, w.users)
	n := rng.IntN(1000)
	switch rng.IntN(17) {
	case 0, 15, 16:
		w.mutate(t, u, `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": fmt.Sprintf("%s %d", u, n)})
		return u + " renames themselves"
	case 1:
		if d := w.mutate(t, u, `mutation($n: String!) { createProject(input: {name: $n}) { id } }`, map[string]any{"n": fmt.Sprintf("P%d", n)}); d != nil {
			w.projects = append(w.projects, d["createProject"].(map[string]any)["id"].(string))
		}
		return u + " creates a project"
	case 2:
		w.mutate(t, u, `mutation($id: ID!, $n: String!) { updateProject(input: {id: $id, name: $n}) { id } }`,
			map[string]any{"id": cachePick(rng, w.projects), "n": fmt.Sprintf("Renamed %d", n)})
		return u + " renames a project"
	case 3:
		if rng.IntN(4) == 0 {
			w.mutate(t, u, `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": cachePick(rng, w.projects)})
			return u + " deletes a project"
		}
		fallthrough
	case 4:
		w.mutate(t, u, `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": cachePick(rng, w.projects), "u": cachePick(rng, w.users)})
		return u + " adds a member"
	case 5:
		w.mutate(t, u, `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": cachePick(rng, w.projects), "u": cachePick(rng, w.users)})
		return u + " removes a member"
	case 6:
		w.mutate(t, u, `mutation($p: ID!) { leaveProject(projectId: $p) }`, map[string]any{"p": cachePick(rng, w.projects)})
		return u + " leaves a project"
	case 7, 8:
		in := map[string]any{"projectId": cachePick(rng, w.projects), "title": fmt.Sprintf("T%d", n),
			"tags": []string{cachePick(rng, w.tags)}, "dueDate": testenv.Day(rng.IntN(7) - 3)}
		if rng.IntN(2) == 0 {
			in["assigneeId"] = cachePick(rng, w.users)
		}
		if d := w.mutate(t, u, `mutation($in: CreateTaskInput!) { createTask(input: $in) { id } }`, map[string]any{"in": in}); d != nil {
			w.tasks = append(w.tasks, d["createTask"].(map[string]any)["id"].(string))
		}
		return u + " creates a task"
	case 9, 10:
		in := map[string]any{"id": cachePick(rng, w.tasks)}
		switch rng.IntN(5) {
		case 0:
			in["title"] = fmt.Sprintf("Retitled %d", n)
		case 1:
			in["status"] = []string{"TODO", "IN_PROGRESS", "DONE"}[rng.IntN(3)]
		case 2:
			in["assigneeId"] = cachePick(rng, w.users)
		case 3:
			in["tags"] = []string{cachePick(rng, w.tags), cachePick(rng, w.tags)}
		case 4:
			in["dueDate"] = testenv.Day(rng.IntN(7) - 3)
		}
		w.mutate(t, u, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { id } }`, map[string]any{"in": in})
		return u + " updates a task"
	case 11:
		w.mutate(t, u, `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": cachePick(rng, w.tasks)})
		return u + " deletes a task"
	case 12, 13:
		if d := w.mutate(t, u, `mutation($id: ID!, $b: String!) { addComment(input: {taskId: $id, body: $b}) { id } }`,
			map[string]any{"id": cachePick(rng, w.tasks), "b": fmt.Sprintf("c%d", n)}); d != nil {
			w.comments = append(w.comments, d["addComment"].(map[string]any)["id"].(string))
		}
		return u + " comments"
	default: // 14
		w.mutate(t, u, `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": cachePick(rng, w.comments)})
		return u + " deletes a comment"
	}
}

// held is a viewer's copy of a screen: its URL's variables, its tag, the
// data its answer showed.
type held struct {
	vars map[string]any
	tag  string
	data json.RawMessage
}

// TestNoNotModifiedIsStale is the property that HTTP caching is never
// stale: users make random changes of every kind (profile edits, projects
// made, renamed and deleted, members added, removed and leaving, tasks
// made, changed, retagged and deleted, comments made and deleted), the
// cleanup worker copies changed profiles at random moments, and viewers
// ask the clients' screens again with If-None-Match: every 304 is
// checked against the fresh answer, whose data must be the very data the
// tag was given with. Fixed seeds: the same runs every time. It also
// requires 304s to happen (the check works at all) and tasksByTag never
// to be tagged.
func TestNoNotModifiedIsStale(t *testing.T) {
	steps := 300
	if testing.Short() {
		steps = 60
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 41))
			e, h, clk := cacheEnv(t)
			w := &cacheWorld{e: e, h: h, users: []string{"ana", "ben", "cy", "dee"}, tags: []string{"urgent", "ui", "db"}}
			for _, u := range w.users {
				w.mutate(t, u, `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": u})
			}
			for range 4 {
				w.step(t, rand.New(rand.NewPCG(seed, 1))) // a project or more to start with
				if d := w.mutate(t, cachePick(rng, w.users), `mutation { createProject(input: {name: "Start"}) { id } }`, nil); d != nil {
					w.projects = append(w.projects, d["createProject"].(map[string]any)["id"].(string))
				}
			}
			heldBy := map[string]*held{} // viewer + screen → their copy
			hits, misses, log := 0, 0, []string{}
			for i := range steps {
				if rng.IntN(3) == 0 {
					log = append(log, w.step(t, rng))
					continue
				}
				if rng.IntN(8) == 0 {
					if _, err := e.Store.RunCleanup(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				clk.Advance()
				viewer, sc := cachePick(rng, w.users), cacheScreens[rng.IntN(len(cacheScreens))]
				key := viewer + "/" + sc.name
				c := heldBy[key]
				if c == nil || rng.IntN(5) == 0 { // a new variable: a new URL
					c = &held{}
					switch sc.arg {
					case "project":
						c.vars = map[string]any{"id": cachePick(rng, w.projects)}
					case "task":
						c.vars = map[string]any{"id": cachePick(rng, w.tasks)}
					case "node":
						c.vars = map[string]any{"id": cachePick(rng, slices.Concat(w.users, w.projects, w.tasks, w.comments))}
					}
				}
				got := cacheGet(t, e, h, viewer, sc.query, c.vars, c.tag)
				switch got.Status {
				case http.StatusNotModified:
					fresh := cacheGet(t, e, h, viewer, sc.query, c.vars, "")
					if d := dataOf(t, fresh.Body); !bytes.Equal(d, c.data) {
						t.Fatalf("step %d: %s's %s answered 304 for tag %s, but the data is now\n%s\nnot\n%s\nafter: %v",
							i, viewer, sc.name, c.tag, d, c.data, log)
					}
					hits++
				case http.StatusOK:
					if c.tag != "" {
						misses++
					}
					c.tag, c.data = got.Header.Get("ETag"), dataOf(t, got.Body)
					if c.tag != "" && !sc.tagged {
						t.Fatalf("%s's %s has ETag %s: its dependencies are not bounded", viewer, sc.name, c.tag)
					}
				default:
					t.Fatalf("step %d: %s's %s answered %d: %s", i, viewer, sc.name, got.Status, got.Body)
				}
				heldBy[key] = c
			}
			t.Logf("%d steps: %d changes, %d answers 304, %d tags no longer valid", steps, len(log), hits, misses)
			if hits == 0 || misses == 0 {
				t.Errorf("%d 304s and %d tags found changed: the run proves nothing", hits, misses)
			}
		})
	}
}

// dataOf is the data entry of an answer's body (its extensions, which
// may differ between answers of the same data, left out).
func dataOf(t *testing.T, body []byte) json.RawMessage {
	t.Helper()
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("an answer that is no JSON: %q", body)
	}
	return append(r.Data, r.Errors...)
}
