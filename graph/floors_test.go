package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// What the screens read near their floors (docs/design.md, "Floors"): a
// user's projects from their profile's copies, a project that selects only
// what its copy holds from the copy, a page of tasksByTag from its tag
// indexes' entries. Each answers exactly what the items answer.

type floorProjects struct {
	Nodes []struct {
		ID, Name string
		Owner    *struct{ ID string }
	}
	Edges    []struct{ Cursor string }
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// TestProjectsFromCopiesPageAsTheMembershipIndex pages through users'
// projects forwards and backwards, one at a time, with a selection the
// copies answer and with one that reads the project items: both give the
// pages (ids, names, cursors, page info) of the memberships' index, the
// list's former read (Store.ProjectsOfUser), so cursors from before page on.
func TestProjectsFromCopiesPageAsTheMembershipIndex(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		for _, c := range []struct{ viewer, user string }{{"alice", "alice"}, {"bob", "bob"}, {"alice", "bob"}, {"dave", "carol"}} {
			var want []string // the index's pages, forwards: id and cursor
			page := domain.Page{First: 1}
			for {
				conn, err := e.Store.ProjectsOfUser(context.Background(), c.user, page, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i, m := range conn.Items {
					want = append(want, m.ProjectID+" "+conn.Cursors[i])
				}
				if !conn.HasNext {
					break
				}
				page.After = &conn.Cursors[len(conn.Cursors)-1]
			}
			if c.viewer != c.user { // another user's: those the viewer shares
				want = slices.DeleteFunc(want, func(w string) bool {
					var got struct{ Project *struct{ ID string } }
					e.MustQuery(t, c.viewer, `query($id: ID!) { project(id: $id) { id } }`, map[string]any{"id": strings.Fields(w)[0]}, &got)
					return got.Project == nil
				})
			}
			for _, sel := range []string{"id name", "id name owner { id }"} {
				q := `query($u: ID!, $first: Int, $after: String, $last: Int, $before: String) { user(id: $u) {
					projects(first: $first, after: $after, last: $last, before: $before) {
					nodes { ` + sel + ` } edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
				var fwd, back []string
				vars := map[string]any{"u": c.user, "first": 1}
				for range 20 {
					var got struct {
						User struct{ Projects floorProjects }
					}
					e.MustQuery(t, c.viewer, q, vars, &got)
					p := got.User.Projects
					for i, n := range p.Nodes {
						if want := seededProject(s, n.ID); want == nil || n.Name != want.Name || (n.Owner != nil) != strings.Contains(sel, "owner") {
							t.Errorf("%s sees %s's project %s named %q (owner %v)", c.viewer, c.user, n.ID, n.Name, n.Owner)
						}
						fwd = append(fwd, n.ID+" "+p.Edges[i].Cursor)
					}
					if !p.PageInfo.HasNextPage {
						break
					}
					vars = map[string]any{"u": c.user, "first": 1, "after": *p.PageInfo.EndCursor}
				}
				vars = map[string]any{"u": c.user, "last": 1}
				for range 20 {
					var got struct {
						User struct{ Projects floorProjects }
					}
					e.MustQuery(t, c.viewer, q, vars, &got)
					p := got.User.Projects
					for i, n := range slices.Backward(p.Nodes) {
						back = append(back, n.ID+" "+p.Edges[i].Cursor)
					}
					if !p.PageInfo.HasPreviousPage {
						break
					}
					vars = map[string]any{"u": c.user, "last": 1, "before": *p.PageInfo.StartCursor}
				}
				slices.Reverse(back)
				if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
					t.Errorf("%s's projects as %s sees them, {%s}:\n forwards  %q\n backwards %q\n the index %q", c.user, c.viewer, sel, fwd, back, want)
				}
			}
		}
		e.MustFail(t, "alice", "BAD_USER_INPUT", `{ me { projects(after: "nonsense") { nodes { id } } } }`, nil)
		bad := cursor.List("DUE#2026-01-01#" + strings.Repeat("0", domain.ULIDLen)) // another list's cursor
		e.MustFail(t, "alice", "BAD_USER_INPUT", `query($c: String) { me { projects(after: $c) { nodes { id } } } }`, map[string]any{"c": bad})
	})
}

// TestCopiesFollowRenamesAtOnce renames a project and reads its name every
// way a screen reads it from a copy (a user's projects, the project by id,
// a task's project, a tagged task's project): the new name at once, as the
// item's; a name too long for a copy is read from the item.
func TestCopiesFollowRenamesAtOnce(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web, task := s.Project("Website relaunch"), s.Task("Fix the broken signup form")
	const rename = `mutation($id: ID!, $name: String!) { updateProject(input: {id: $id, name: $name}) { id } }`
	const q = `query($p: ID!, $t: ID!, $tag: String!) {
		me { projects(first: 50) { nodes { id name } } }
		project(id: $p) { name }
		full: project(id: $p) { name createdAt }
		task(id: $t) { project { name } }
		tasksByTag(tag: $tag, first: 50) { nodes { id project { id name } } } }`
	for _, name := range []string{"Relaunch 2027", strings.Repeat("Long name ", 9) + "Long name"} {
		e.MustQuery(t, "alice", rename, map[string]any{"id": web.ID, "name": name}, nil)
		var got struct {
			Me struct {
				Projects struct{ Nodes []struct{ ID, Name string } }
			}
			Project, Full struct{ Name string }
			Task          struct{ Project struct{ Name string } }
			TasksByTag    struct {
				Nodes []struct {
					ID      string
					Project struct{ ID, Name string }
				}
			}
		}
		e.MustQuery(t, "bob", q, map[string]any{"p": web.ID, "t": task.ID, "tag": task.Tags[0]}, &got)
		names := []string{got.Project.Name, got.Full.Name, got.Task.Project.Name}
		for _, n := range got.Me.Projects.Nodes {
			if n.ID == web.ID {
				names = append(names, n.Name)
			}
		}
		for _, n := range got.TasksByTag.Nodes {
			if n.Project.ID == web.ID {
				names = append(names, n.Project.Name)
			}
		}
		if len(names) < 5 || slices.ContainsFunc(names, func(n string) bool { return n != name }) {
			t.Errorf("renamed to %q, read as %q", name, names)
		}
	}
}

// TestTagPagesFromEntriesFollowTheirTasks changes the titles of tagged
// tasks (one longer than an entry carries) and reads tasksByTag with a
// selection the entries answer and, in the same query, one that reads the
// tasks: each sees every task as its item is, and the partial tasks of
// the first never answer the second.
func TestTagPagesFromEntriesFollowTheirTasks(t *testing.T) {
	t.Parallel()
	for _, b := range []testenv.Backend{testenv.EmbeddedStore, testenv.DynamoDBLocal} { // (dynalite has no transactions)
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			tagPagesFollowTheirTasks(t, testenv.NewOn(t, b))
		})
	}
}

func tagPagesFollowTheirTasks(t *testing.T, e *testenv.Env) {
	{
		s := e.MustSeed(t)
		const update = `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { id } }`
		long := strings.Repeat("A title longer than an entry holds. ", 4)
		fix, crash := s.Task("Fix the broken signup form"), s.Task("Crash on start on Android 12")
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": fix.ID, "title": "Fix | the signup form"}}, nil)
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": crash.ID, "title": long}}, nil)
		const q = `query($tag: String!) {
			listed: tasksByTag(tag: $tag, first: 50) { nodes { id title dueDate assignee { id } project { id } } }
			full: tasksByTag(tag: $tag, first: 50) { nodes { id title dueDate assignee { id } project { id } status createdAt } } }`
		var got struct {
			Listed, Full struct{ Nodes []map[string]any }
		}
		e.MustQuery(t, "alice", q, map[string]any{"tag": "urgent"}, &got)
		if len(got.Full.Nodes) != 3 || len(got.Listed.Nodes) != 3 {
			t.Fatalf("urgent: %d and %d tasks, want 3", len(got.Listed.Nodes), len(got.Full.Nodes))
		}
		titles := map[string]string{}
		for i, n := range got.Full.Nodes {
			if n["status"] == nil || n["status"] == "" || n["createdAt"] == nil {
				t.Errorf("a task read through the tasks lacks its status or creation: %v", n)
			}
			l := got.Listed.Nodes[i]
			for _, f := range []string{"id", "title", "dueDate", "assignee", "project"} {
				a, _ := json.Marshal(l[f])
				b, _ := json.Marshal(n[f])
				if string(a) != string(b) {
					t.Errorf("task %v: %s is %s from the entries, %s from the items", n["id"], f, a, b)
				}
			}
			titles[n["id"].(string)] = n["title"].(string)
		}
		if titles[fix.ID] != "Fix | the signup form" || titles[crash.ID] != strings.TrimSpace(long) {
			t.Errorf("titles after the changes: %q", titles)
		}
	}
}

// seededProject is the seeded project with the id, nil for none.
func seededProject(s *testenv.Seed, id string) *domain.Project {
	for _, p := range s.Projects {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// TestDeferredFieldsAreNotAnsweredByCopiesOrEntries defers, under a list
// of projects and a page of tasksByTag, fields a project's copy or a tag
// index entry does not hold: the deferred parts are those of the query
// without @defer (the copy and the entry are used only where every field
// of the document, deferred or not, is theirs).
func TestDeferredFieldsAreNotAnsweredByCopiesOrEntries(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	const deferred = `query { me { projects(first: 10) { nodes { id ... @defer(label: "more") { name description owner { name } } } } }
		tasksByTag(tag: "urgent", first: 10) { nodes { id title ... @defer(label: "task") { status createdAt } } } }`
	plain := strings.ReplaceAll(strings.ReplaceAll(deferred, `@defer(label: "more")`, ""), `@defer(label: "task")`, "")
	var want any
	e.MustQuery(t, "alice", plain, nil, &want)
	raw := e.Send(t, map[string]any{"query": deferred}, e.As("alice"),
		testenv.Header("Accept", "multipart/mixed;deferSpec=20220824, application/json"))
	parts := testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body))
	for i, p := range parts {
		for _, inc := range p.Incremental {
			if len(inc.Errors) > 0 {
				t.Errorf("part %d: %s at %v: %+v", i+1, inc.Label, inc.Path, inc.Errors)
			}
		}
	}
	got, _ := json.Marshal(testenv.MergeParts(t, parts))
	exp, _ := json.Marshal(want)
	if len(parts) < 2 || string(got) != string(exp) {
		t.Errorf("%d parts, merged:\n %s\nwithout @defer:\n %s", len(parts), got, exp)
	}
}
