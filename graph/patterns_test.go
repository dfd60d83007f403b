package graph_test

// Tests of the seven read access patterns of the contract, driven through the
// real GraphQL handler: visibility, order, filters, node(id), malformed ids,
// and Relay pagination over every paginated list. The read-path tests run on
// the embedded store, on dynalite and on DynamoDB Local (each when
// scripts/test started it).

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// ---------------------------------------------------------------- helpers

// forBackends runs fn in the subtests "embedded", "dynalite" and
// "dynamodb-local", each with a fresh Env on that backend; the last two
// skip themselves when scripts/test did not start them. The calling test
// and the subtests run in parallel with other parallel tests: every Env
// has a table of its own.
func forBackends(t *testing.T, fn func(t *testing.T, e *testenv.Env)) {
	t.Helper()
	t.Parallel()
	for _, b := range []testenv.Backend{testenv.EmbeddedStore, testenv.Dynalite, testenv.DynamoDBLocal} {
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			fn(t, testenv.NewOn(t, b))
		})
	}
}

// patDig walks a JSON document along object keys and array indexes.
func patDig(t *testing.T, data json.RawMessage, path ...string) json.RawMessage {
	t.Helper()
	for _, k := range path {
		if i, err := strconv.Atoi(k); err == nil {
			var a []json.RawMessage
			if err := json.Unmarshal(data, &a); err != nil || i >= len(a) {
				t.Fatalf("no element %d in %s", i, data)
			}
			data = a[i]
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("no object at %q in %s", k, data)
		}
		v, ok := m[k]
		if !ok {
			t.Fatalf("no field %q in %s", k, data)
		}
		data = v
	}
	return data
}

type patTask struct {
	ID      string
	Title   string
	Status  string
	DueDate *string
}

type patTaskConn struct {
	Nodes    []patTask
	PageInfo struct{ HasNextPage bool }
}

func patTitles(ns []patTask) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Title
	}
	return out
}

// patCheckTasks checks a one-page task list: the titles, the due-date order
// (ascending, no due date last, equal dates by id) and hasNextPage false.
func patCheckTasks(t *testing.T, c patTaskConn, want []string) {
	t.Helper()
	if got := patTitles(c.Nodes); !slices.Equal(got, want) {
		t.Errorf("titles:\n got  %q\n want %q", got, want)
	}
	if c.PageInfo.HasNextPage {
		t.Errorf("hasNextPage = true on a page holding the whole list")
	}
	patCheckDueOrder(t, c.Nodes)
}

func patDueKey(due *string, id string) string {
	d := "~" // after every digit: no due date sorts last
	if due != nil {
		d = *due
	}
	return d + "#" + id
}

func patCheckDueOrder(t *testing.T, ns []patTask) {
	t.Helper()
	for i := 1; i < len(ns); i++ {
		a, b := ns[i-1], ns[i]
		if patDueKey(a.DueDate, a.ID) >= patDueKey(b.DueDate, b.ID) {
			t.Errorf("not in due-date order: %q (due %v, %s) before %q (due %v, %s)",
				a.Title, testenv.DerefOr(a.DueDate, "none"), a.ID, b.Title, testenv.DerefOr(b.DueDate, "none"), b.ID)
		}
	}
}

// patTaskID returns the id of the seeded task with that title, "" for none.
func patTaskID(s *testenv.Seed, title string) string {
	for _, t := range s.Tasks {
		if t.Title == title {
			return t.ID
		}
	}
	return ""
}

// patProjectID returns the id of the seeded project with that name, "" for none.
func patProjectID(s *testenv.Seed, name string) string {
	for _, p := range s.Projects {
		if p.Name == name {
			return p.ID
		}
	}
	return ""
}

func patCommentsOf(d *dynamo.Dataset, taskID string) []*domain.Comment {
	var out []*domain.Comment
	for _, c := range d.Comments {
		if c.TaskID == taskID {
			out = append(out, c)
		}
	}
	return out
}

// ------------------------------------------------- pattern 1: me / user(id)

func TestPatternsProfileVisibility(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		e.MustSeed(t)
		const q = `query($id: ID!) { user(id: $id) { id name email createdAt } }`
		cases := []struct {
			name      string
			viewer    string
			id        string
			wantName  string // "" for null
			wantEmail *string
		}{
			{"own profile shows email", "alice", "alice", "Alice Example", testenv.Ptr("alice@example.com")},
			{"co-member of two projects, email hidden", "alice", "bob", "Bob Builder", nil},
			{"co-member of one project, email hidden", "alice", "dave", "Dave Diaz", nil},
			{"co-member without email", "alice", "carol", "Carol Chen", nil},
			{"shared project the viewer does not own", "dave", "carol", "Carol Chen", nil},
			{"user in no shared project is null", "alice", "eve", "", nil},
			{"nonexistent user is null", "alice", "nobody", "", nil},
			{"outsider sees no one else", "eve", "alice", "", nil},
			{"outsider sees self", "eve", "eve", "Eve Outsider", nil},
			{"user without profile does not see others", "zed", "alice", "", nil},
			{"own id without profile is null", "zed", "zed", "", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct {
					User *struct {
						ID, Name, CreatedAt string
						Email               *string
					}
				}
				e.MustQuery(t, c.viewer, q, map[string]any{"id": c.id}, &got)
				if c.wantName == "" {
					if got.User != nil {
						t.Fatalf("%s sees user %s: %+v, want null", c.viewer, c.id, *got.User)
					}
					return
				}
				if got.User == nil {
					t.Fatalf("%s gets null for user %s, want %q", c.viewer, c.id, c.wantName)
				}
				if got.User.ID != c.id || got.User.Name != c.wantName {
					t.Errorf("got %s %q, want %s %q", got.User.ID, got.User.Name, c.id, c.wantName)
				}
				if testenv.DerefOr(got.User.Email, "none") != testenv.DerefOr(c.wantEmail, "none") {
					t.Errorf("email = %s, want %s", testenv.DerefOr(got.User.Email, "none"), testenv.DerefOr(c.wantEmail, "none"))
				}
				if got.User.CreatedAt != "2026-08-25T12:00:00Z" {
					t.Errorf("createdAt = %q", got.User.CreatedAt)
				}
			})
		}

		t.Run("me is the viewer's profile with email", func(t *testing.T) {
			for viewer, want := range map[string][2]string{
				"alice": {"Alice Example", "alice@example.com"},
				"bob":   {"Bob Builder", "bob@example.com"},
				"eve":   {"Eve Outsider", "none"},
			} {
				var got struct {
					Me struct {
						ID, Name string
						Email    *string
					}
				}
				e.MustQuery(t, viewer, `{ me { id name email } }`, nil, &got)
				if got.Me.ID != viewer || got.Me.Name != want[0] || testenv.DerefOr(got.Me.Email, "none") != want[1] {
					t.Errorf("me as %s = %+v (email %s), want %v", viewer, got.Me, testenv.DerefOr(got.Me.Email, "none"), want)
				}
			}
		})

		t.Run("me without a profile is NOT_FOUND", func(t *testing.T) {
			e.MustFail(t, "zed", "NOT_FOUND", `{ me { id name } }`, nil)
		})

		// me reads the profile in its lists' visibility batch (Loaders.me):
		// lists that find nothing to check must still end in the profile's
		// own read, and a profile that lists found is the viewer's.
		t.Run("me with lists and without a profile is NOT_FOUND", func(t *testing.T) {
			e.MustFail(t, "zed", "NOT_FOUND", `{ me { id assignedTasks { nodes { id } } overdueTasks { nodes { id } } projects { nodes { id } } } }`, nil)
		})
		t.Run("me with lists has the viewer's profile", func(t *testing.T) {
			var got struct {
				Me struct {
					ID, Name      string
					AssignedTasks struct{ Nodes []struct{ ID string } }
				}
			}
			e.MustQuery(t, "alice", `{ me { id name assignedTasks { nodes { id } } } }`, nil, &got)
			if got.Me.ID != "alice" || got.Me.Name != "Alice Example" || len(got.Me.AssignedTasks.Nodes) == 0 {
				t.Errorf("me with its assigned tasks = %+v, want alice's profile and tasks", got.Me)
			}
		})

		t.Run("email reached through members is null except one's own", func(t *testing.T) {
			var got struct {
				Me struct {
					Projects struct {
						Nodes []struct {
							Members []struct {
								User struct {
									ID    string
									Email *string
								}
							}
						}
					}
				}
			}
			e.MustQuery(t, "alice", `{ me { projects { nodes { members { user { id email } } } } } }`, nil, &got)
			seen := 0
			for _, p := range got.Me.Projects.Nodes {
				for _, m := range p.Members {
					seen++
					if m.User.ID == "alice" && testenv.DerefOr(m.User.Email, "none") != "alice@example.com" {
						t.Errorf("alice's own email through members = %s", testenv.DerefOr(m.User.Email, "none"))
					}
					if m.User.ID != "alice" && m.User.Email != nil {
						t.Errorf("alice sees %s's email %q through members", m.User.ID, *m.User.Email)
					}
				}
			}
			if seen != 6 {
				t.Errorf("saw %d memberships, want 6 (3 in each of alice's projects)", seen)
			}
		})
	})
}

// ------------------------------------------------- pattern 2: user.projects

func TestPatternsUserProjectsNewestFirst(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const q = `query($id: ID!) { user(id: $id) { projects(first: 100) { nodes { id name } pageInfo { hasNextPage } } } }`
		cases := []struct {
			name   string
			viewer string
			id     string
			want   []string
		}{
			{"own projects newest first", "alice", "alice", []string{"Mobile app", "Website relaunch"}},
			{"own projects of a member of the hidden project", "dave", "dave", []string{"Research", "Mobile app"}},
			{"another user's projects: only shared ones", "alice", "dave", []string{"Mobile app"}},
			{"another user's projects seen by a co-member of both", "bob", "alice", []string{"Mobile app", "Website relaunch"}},
			{"another user's projects: one of two shared", "bob", "carol", []string{"Website relaunch"}},
			{"shared hidden project only", "carol", "dave", []string{"Research"}},
			{"no projects", "eve", "eve", []string{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct {
					User struct {
						Projects struct {
							Nodes    []struct{ ID, Name string }
							PageInfo struct{ HasNextPage bool }
						}
					}
				}
				e.MustQuery(t, c.viewer, q, map[string]any{"id": c.id}, &got)
				names := []string{}
				for i, p := range got.User.Projects.Nodes {
					names = append(names, p.Name)
					if want := patProjectID(s, p.Name); p.ID != want {
						t.Errorf("project %q has id %s, want %s", p.Name, p.ID, want)
					}
					if i > 0 && got.User.Projects.Nodes[i-1].ID <= p.ID {
						t.Errorf("not newest first: %s before %s", got.User.Projects.Nodes[i-1].ID, p.ID)
					}
				}
				if !slices.Equal(names, c.want) {
					t.Errorf("projects = %q, want %q", names, c.want)
				}
				if got.User.Projects.PageInfo.HasNextPage {
					t.Errorf("hasNextPage = true on the only page")
				}
			})
		}
	})
}

// Projects made at different times, by users whose ids are identity
// providers' subs (the contract admits "auth0|abc123" and UUIDs).
func TestPatternsProjectsNewestFirstByCreationTime(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		const pia, quinn = "auth0|pia123", "8f14e45f-ceea-467f-a0e6-0c1b2d3e4f50"
		at := func(d time.Duration) *dynamo.DatasetBuilder { return e.Store.NewDataset(testenv.Now.Add(d)) }
		old, mid, now := at(-72*time.Hour), at(-24*time.Hour), at(0)
		up, uq := old.User(pia, "Pia", "pia@example.com"), old.User(quinn, "Quinn", "")
		old.Project("Oldest", "", up)
		mid.Project("Middle", "", uq, up)
		now.Project("Newest", "", up, uq)
		for _, b := range []*dynamo.DatasetBuilder{old, mid, now} {
			e.MustImport(t, &b.D)
		}
		const q = `query($id: ID!) { user(id: $id) { id name email projects(first: 100) { nodes { id name createdAt } } } }`
		cases := []struct {
			name, viewer, id string
			want             []string
			wantTimes        []string
		}{
			{"own, newest first", pia, pia, []string{"Newest", "Middle", "Oldest"},
				[]string{"2026-08-25T12:00:00Z", "2026-08-24T12:00:00Z", "2026-08-22T12:00:00Z"}},
			{"another user's, only shared, newest first", quinn, pia, []string{"Newest", "Middle"},
				[]string{"2026-08-25T12:00:00Z", "2026-08-24T12:00:00Z"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct {
					User *struct {
						ID, Name string
						Email    *string
						Projects struct {
							Nodes []struct{ ID, Name, CreatedAt string }
						}
					}
				}
				e.MustQuery(t, c.viewer, q, map[string]any{"id": c.id}, &got)
				if got.User == nil || got.User.ID != c.id {
					t.Fatalf("user(%q) as %q = %+v", c.id, c.viewer, got.User)
				}
				if (c.viewer == c.id) != (got.User.Email != nil) {
					t.Errorf("email = %s for viewer %s", testenv.DerefOr(got.User.Email, "none"), c.viewer)
				}
				var names, times []string
				for i, p := range got.User.Projects.Nodes {
					names = append(names, p.Name)
					times = append(times, p.CreatedAt)
					if i > 0 && got.User.Projects.Nodes[i-1].ID <= p.ID {
						t.Errorf("ids not descending: %s before %s", got.User.Projects.Nodes[i-1].ID, p.ID)
					}
				}
				if !slices.Equal(names, c.want) || !slices.Equal(times, c.wantTimes) {
					t.Errorf("projects %q at %q, want %q at %q", names, times, c.want, c.wantTimes)
				}
			})
		}
		t.Run("node and me work for such ids", func(t *testing.T) {
			var got struct {
				Node *struct{ ID, Name string }
				Me   struct{ ID string }
			}
			e.MustQuery(t, pia, `query($id: ID!) { node(id: $id) { ... on User { id name } } me { id } }`,
				map[string]any{"id": quinn}, &got)
			if got.Node == nil || got.Node.ID != quinn || got.Node.Name != "Quinn" || got.Me.ID != pia {
				t.Errorf("got node %+v, me %+v", got.Node, got.Me)
			}
		})
	})
}

// ------------------------------------------------- pattern 3: project.tasks

func TestPatternsProjectTasksByDueDate(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const q = `query($id: ID!, $status: TaskStatus) { project(id: $id) { id name
			tasks(first: 100, status: $status) { nodes { id title status dueDate } pageInfo { hasNextPage } } } }`
		web, app, lab := s.Project("Website relaunch").ID, s.Project("Mobile app").ID, s.Project("Research").ID
		cases := []struct {
			name    string
			viewer  string
			project string
			status  string // "" for none
			want    []string
			null    bool
		}{
			{"by due date ascending, no due date last", "alice", web, "", []string{
				"Pick a colour palette", "Write the landing page copy", "Fix the broken signup form",
				"Set up analytics", "Launch announcement", "Migrate the blog"}, false},
			{"due today between past and future", "dave", app, "", []string{
				"App store screenshots", "Crash on start on Android 12", "Offline sync", "Push notifications", "Dark mode"}, false},
			{"status TODO", "alice", web, "TODO", []string{
				"Fix the broken signup form", "Set up analytics", "Launch announcement", "Migrate the blog"}, false},
			{"status IN_PROGRESS", "bob", web, "IN_PROGRESS", []string{"Write the landing page copy"}, false},
			{"status DONE", "alice", app, "DONE", []string{"App store screenshots"}, false},
			{"status with no match is empty", "carol", lab, "DONE", []string{}, false},
			{"non-member gets null", "alice", lab, "", nil, true},
			{"non-member with a filter gets null", "alice", lab, "TODO", nil, true},
			{"user in no project gets null", "eve", web, "", nil, true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				vars := map[string]any{"id": c.project}
				if c.status != "" {
					vars["status"] = c.status
				}
				var got struct {
					Project *struct {
						ID    string
						Tasks patTaskConn
					}
				}
				e.MustQuery(t, c.viewer, q, vars, &got)
				if c.null {
					if got.Project != nil {
						t.Fatalf("%s sees project %s with tasks %q, want null", c.viewer, c.project, patTitles(got.Project.Tasks.Nodes))
					}
					return
				}
				if got.Project == nil || got.Project.ID != c.project {
					t.Fatalf("project = %+v, want %s", got.Project, c.project)
				}
				patCheckTasks(t, got.Project.Tasks, c.want)
				for _, n := range got.Project.Tasks.Nodes {
					if c.status != "" && n.Status != c.status {
						t.Errorf("status filter %s returned %q with status %s", c.status, n.Title, n.Status)
					}
					if want := patTaskID(s, n.Title); n.ID != want {
						t.Errorf("%q has id %s, want %s", n.Title, n.ID, want)
					}
				}
			})
		}
	})
}

// ------------------------------------------------- pattern 4: assignedTasks

func TestPatternsAssignedTasks(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		e.MustSeed(t)
		const q = `query($id: ID!) { user(id: $id) { assignedTasks(first: 100) {
			nodes { id title status dueDate assignee { id } } pageInfo { hasNextPage } } } }`
		cases := []struct {
			name   string
			viewer string
			id     string
			want   []string
		}{
			{"own tasks in every status by due date", "alice", "alice", []string{
				"App store screenshots", "Write the landing page copy", "Crash on start on Android 12",
				"Set up analytics", "Launch announcement"}},
			{"own tasks across a project others cannot see", "dave", "dave", []string{
				"Benchmark the new model", "Offline sync", "Push notifications"}},
			{"own DONE task included", "carol", "carol", []string{"Pick a colour palette", "Write up results"}},
			{"another user's tasks, no due date last", "alice", "bob", []string{"Fix the broken signup form", "Dark mode"}},
			{"another user's tasks only in shared projects", "alice", "dave", []string{"Offline sync", "Push notifications"}},
			{"another user's tasks in the one shared project", "dave", "bob", []string{"Dark mode"}},
			{"another user's tasks in the hidden project", "carol", "dave", []string{"Benchmark the new model"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct {
					User struct {
						AssignedTasks struct {
							Nodes []struct {
								patTask
								Assignee struct{ ID string }
							}
							PageInfo struct{ HasNextPage bool }
						}
					}
				}
				e.MustQuery(t, c.viewer, q, map[string]any{"id": c.id}, &got)
				var conn patTaskConn
				conn.PageInfo = got.User.AssignedTasks.PageInfo
				for _, n := range got.User.AssignedTasks.Nodes {
					conn.Nodes = append(conn.Nodes, n.patTask)
					if n.Assignee.ID != c.id {
						t.Errorf("%q is assigned to %q, not %s", n.Title, n.Assignee.ID, c.id)
					}
				}
				patCheckTasks(t, conn, c.want)
			})
		}
	})
}

// ------------------------------------------------- pattern 5: task.comments

func TestPatternsCommentsOldestFirst(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const q = `query($id: ID!) { task(id: $id) { id comments(first: 100) {
			nodes { id body createdAt author { name } task { id } } pageInfo { hasNextPage } } } }`
		type line struct{ Body, Author string }
		cases := []struct {
			name   string
			viewer string
			task   string
			want   []line
			null   bool
		}{
			{"four comments oldest first", "alice", "Crash on start on Android 12", []line{
				{"Stack trace attached to the ticket.", "Dave Diaz"},
				{"Update 1: still investigating.", "Alice Example"},
				{"Update 2: still investigating.", "Alice Example"},
				{"Update 3: still investigating.", "Alice Example"}}, false},
			{"two authors in order", "bob", "Write the landing page copy", []line{
				{"First draft is in the shared doc.", "Alice Example"},
				{"Looks good, a few notes inline.", "Bob Builder"}}, false},
			{"no comments", "alice", "Set up analytics", []line{}, false},
			{"non-member gets a null task", "carol", "Crash on start on Android 12", nil, true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				task := s.Task(c.task)
				var got struct {
					Task *struct {
						ID       string
						Comments struct {
							Nodes []struct {
								ID, Body, CreatedAt string
								Author              struct{ Name string }
								Task                struct{ ID string }
							}
							PageInfo struct{ HasNextPage bool }
						}
					}
				}
				e.MustQuery(t, c.viewer, q, map[string]any{"id": task.ID}, &got)
				if c.null {
					if got.Task != nil {
						t.Fatalf("%s sees task %q, want null", c.viewer, c.task)
					}
					return
				}
				if got.Task == nil {
					t.Fatalf("task %q is null for %s", c.task, c.viewer)
				}
				lines := []line{}
				var ids []string
				for _, n := range got.Task.Comments.Nodes {
					lines = append(lines, line{n.Body, n.Author.Name})
					ids = append(ids, n.ID)
					if n.Task.ID != task.ID {
						t.Errorf("comment %s belongs to %s, want %s", n.ID, n.Task.ID, task.ID)
					}
				}
				if !slices.Equal(lines, c.want) {
					t.Errorf("comments:\n got  %q\n want %q", lines, c.want)
				}
				var wantIDs []string
				for _, cm := range patCommentsOf(s.Dataset, task.ID) {
					wantIDs = append(wantIDs, cm.ID)
				}
				if !slices.Equal(ids, wantIDs) {
					t.Errorf("comment ids %v, want %v (creation order)", ids, wantIDs)
				}
				if got.Task.Comments.PageInfo.HasNextPage {
					t.Errorf("hasNextPage = true on the only page")
				}
			})
		}
	})
}

// ------------------------------------------------- pattern 6: tags

func TestPatternsTasksByTag(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const q = `query($tag: String!) { tasksByTag(tag: $tag, first: 100) { nodes { id title status dueDate } pageInfo { hasNextPage } } }`
		urgentAlice := []string{"Write the landing page copy", "Crash on start on Android 12", "Fix the broken signup form"}
		cases := []struct {
			name   string
			viewer string
			tag    string
			want   []string
		}{
			{"only tasks in the viewer's projects, by due date", "alice", "urgent", urgentAlice},
			{"tag is trimmed and lower-cased", "alice", " URGENT ", urgentAlice},
			{"mixed case", "alice", "UrGeNt", urgentAlice},
			{"member of the hidden project sees its task", "dave", "urgent", []string{"Benchmark the new model", "Crash on start on Android 12"}},
			{"two projects merged by due date", "carol", "urgent", []string{
				"Benchmark the new model", "Write the landing page copy", "Fix the broken signup form"}},
			{"every status, no due date last", "alice", "design", []string{"Pick a colour palette", "App store screenshots", "Dark mode"}},
			{"tag only in another project is empty", "carol", "android", []string{}},
			{"unused tag is empty", "alice", "nothing-here", []string{}},
			{"user in no project sees nothing", "eve", "urgent", []string{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct{ TasksByTag patTaskConn }
				e.MustQuery(t, c.viewer, q, map[string]any{"tag": c.tag}, &got)
				patCheckTasks(t, got.TasksByTag, c.want)
				for _, n := range got.TasksByTag.Nodes {
					if want := patTaskID(s, n.Title); n.ID != want {
						t.Errorf("%q has id %s, want %s", n.Title, n.ID, want)
					}
				}
			})
		}

		for _, bad := range []string{"no spaces!", "", "   ", "ünïcode", strings.Repeat("a", 51)} {
			t.Run(fmt.Sprintf("bad tag %q is BAD_USER_INPUT", bad), func(t *testing.T) {
				e.MustFail(t, "alice", "BAD_USER_INPUT", q, map[string]any{"tag": bad})
			})
		}

		t.Run("Tag.tasks is scoped to the viewer", func(t *testing.T) {
			const tq = `query($id: ID!) { task(id: $id) { tags { name tasks(first: 100) {
				nodes { id title status dueDate } pageInfo { hasNextPage } } } } }`
			cases := []struct {
				viewer, task string
				want         map[string][]string
			}{
				{"alice", "Write the landing page copy", map[string][]string{
					"copy":   {"Write the landing page copy"}, // not "Write up results" (Research)
					"urgent": urgentAlice}},
				{"dave", "Crash on start on Android 12", map[string][]string{
					"bug":     {"Crash on start on Android 12"}, // not the signup form (Website relaunch)
					"android": {"Crash on start on Android 12"},
					"urgent":  {"Benchmark the new model", "Crash on start on Android 12"}}},
			}
			for _, c := range cases {
				var got struct {
					Task struct {
						Tags []struct {
							Name  string
							Tasks patTaskConn
						}
					}
				}
				e.MustQuery(t, c.viewer, tq, map[string]any{"id": s.Task(c.task).ID}, &got)
				if len(got.Task.Tags) != len(c.want) {
					t.Errorf("%s: %d tags, want %d", c.task, len(got.Task.Tags), len(c.want))
				}
				for _, tag := range got.Task.Tags {
					want, ok := c.want[tag.Name]
					if !ok {
						t.Errorf("%s: unexpected tag %q", c.task, tag.Name)
						continue
					}
					patCheckTasks(t, tag.Tasks, want)
				}
			}
		})
	})
}

// ------------------------------------------------- pattern 7: overdueTasks

func TestPatternsOverdueTasks(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		e.MustSeed(t)
		const withAsOf = `query($id: ID!, $asOf: Date) { user(id: $id) { overdueTasks(asOf: $asOf, first: 100) {
			nodes { id title status dueDate } pageInfo { hasNextPage } } } }`
		const byDefault = `query($id: ID!) { user(id: $id) { overdueTasks(first: 100) {
			nodes { id title status dueDate } pageInfo { hasNextPage } } } }`
		cases := []struct {
			name   string
			viewer string
			id     string
			asOf   string // "" for the default (today, 2026-08-25)
			want   []string
		}{
			{"default today: open past-due, DONE excluded", "alice", "alice", "", []string{
				"Write the landing page copy", "Crash on start on Android 12"}},
			{"explicit today equals the default", "alice", "alice", testenv.Day(0), []string{
				"Write the landing page copy", "Crash on start on Android 12"}},
			{"task due exactly on asOf is not overdue", "alice", "alice", testenv.Day(-2), []string{"Write the landing page copy"}},
			{"nothing before the earliest open due date", "alice", "alice", testenv.Day(-3), []string{}},
			{"future asOf includes later tasks", "alice", "alice", testenv.Day(8), []string{
				"Write the landing page copy", "Crash on start on Android 12", "Set up analytics"}},
			{"far future never includes DONE", "alice", "alice", "2030-01-01", []string{
				"Write the landing page copy", "Crash on start on Android 12", "Set up analytics", "Launch announcement"}},
			{"task without due date is never overdue", "bob", "bob", "2100-01-01", []string{"Fix the broken signup form"}},
			{"due today is not overdue by default", "dave", "dave", "", []string{"Benchmark the new model"}},
			{"due today is overdue tomorrow", "dave", "dave", testenv.Day(1), []string{"Benchmark the new model", "Offline sync"}},
			{"only DONE past-due tasks gives nothing", "carol", "carol", "", []string{}},
			{"another user's: hidden project excluded", "alice", "dave", "", []string{}},
			{"another user's: shared project included", "alice", "dave", testenv.Day(1), []string{"Offline sync"}},
			{"another user's in a shared project", "carol", "bob", "", []string{"Fix the broken signup form"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				q, vars := byDefault, map[string]any{"id": c.id}
				if c.asOf != "" {
					q, vars["asOf"] = withAsOf, c.asOf
				}
				var got struct {
					User struct{ OverdueTasks patTaskConn }
				}
				e.MustQuery(t, c.viewer, q, vars, &got)
				patCheckTasks(t, got.User.OverdueTasks, c.want)
				asOf := c.asOf
				if asOf == "" {
					asOf = testenv.Day(0)
				}
				for _, n := range got.User.OverdueTasks.Nodes {
					if n.Status == "DONE" || n.DueDate == nil || *n.DueDate >= asOf {
						t.Errorf("%q (status %s, due %s) is not overdue as of %s", n.Title, n.Status, testenv.DerefOr(n.DueDate, "none"), asOf)
					}
				}
			})
		}
		t.Run("bad asOf is refused", func(t *testing.T) {
			res := e.Query(t, "alice", withAsOf, map[string]any{"id": "alice", "asOf": "2026-02-30"})
			if len(res.Errors) != 1 || (res.Errors[0].Code() != "BAD_USER_INPUT" && res.Errors[0].Code() != "GRAPHQL_VALIDATION_FAILED") {
				t.Errorf("asOf 2026-02-30: errors %+v, want one BAD_USER_INPUT or GRAPHQL_VALIDATION_FAILED", res.Errors)
			}
		})
	})
}

// ------------------------------------------------- node(id), task(id), project(id)

const patNodeQuery = `query($id: ID!) { node(id: $id) { __typename id
	... on User { name } ... on Project { name } ... on Task { title } ... on Comment { body } ... on Tag { name } } }`

func TestPatternsNodeByID(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		t1 := s.Task("Write the landing page copy")
		t7 := s.Task("Crash on start on Android 12")
		c1, c7 := patCommentsOf(s.Dataset, t1.ID)[0], patCommentsOf(s.Dataset, t7.ID)[0]
		cases := []struct {
			name     string
			viewer   string
			id       string
			typename string // "" for null
			label    string // name, title or body
		}{
			{"user sharing a project", "alice", "bob", "User", "Bob Builder"},
			{"the viewer", "eve", "eve", "User", "Eve Outsider"},
			{"user sharing no project is null", "alice", "eve", "", ""},
			{"user seen by an outsider is null", "eve", "bob", "", ""},
			{"project of a member", "alice", s.Project("Website relaunch").ID, "Project", "Website relaunch"},
			{"project of a non-member is null", "alice", s.Project("Research").ID, "", ""},
			{"project for an outsider is null", "eve", s.Project("Website relaunch").ID, "", ""},
			{"task of a member", "alice", t1.ID, "Task", "Write the landing page copy"},
			{"task of a non-member is null", "dave", t1.ID, "", ""},
			{"task in the hidden project is null", "alice", s.Task("Benchmark the new model").ID, "", ""},
			{"comment of a member", "alice", c1.ID, "Comment", "First draft is in the shared doc."},
			{"comment of another member", "dave", c7.ID, "Comment", "Stack trace attached to the ticket."},
			{"comment of a non-member is null", "dave", c1.ID, "", ""},
			{"comment for an outsider is null", "eve", c7.ID, "", ""},
			{"tag of a member", "alice", "tag#urgent", "Tag", "urgent"},
			{"tag for an outsider: a tag is its name", "eve", "tag#urgent", "Tag", "urgent"},
			{"tag no task has", "alice", "tag#never-used", "Tag", "never-used"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got struct {
					Node *struct {
						Typename              string `json:"__typename"`
						ID, Name, Title, Body string
					}
				}
				e.MustQuery(t, c.viewer, patNodeQuery, map[string]any{"id": c.id}, &got)
				if c.typename == "" {
					if got.Node != nil {
						t.Fatalf("%s sees node %s: %+v, want null", c.viewer, c.id, *got.Node)
					}
					return
				}
				if got.Node == nil {
					t.Fatalf("node %s is null for %s, want a %s", c.id, c.viewer, c.typename)
				}
				label := got.Node.Name + got.Node.Title + got.Node.Body
				if got.Node.Typename != c.typename || got.Node.ID != c.id || label != c.label {
					t.Errorf("node = %s %s %q, want %s %s %q", got.Node.Typename, got.Node.ID, label, c.typename, c.id, c.label)
				}
			})
		}
	})
}

// A well-formed id that no object has.
const patUnusedULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

func TestPatternsByIDNullAndMalformed(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		web, lab := s.Project("Website relaunch"), s.Project("Research")
		t1 := s.Task("Write the landing page copy")
		t1ULID := strings.TrimPrefix(t1.ID, "tsk#")
		c1 := patCommentsOf(s.Dataset, t1.ID)[0]
		const pq = `query($id: ID!) { project(id: $id) { id name } }`
		const tq = `query($id: ID!) { task(id: $id) { id title } }`

		nulls := []struct {
			name, viewer, query, id, field string
		}{
			{"project of a non-member", "alice", pq, lab.ID, "project"},
			{"nonexistent project", "alice", pq, "prj#" + patUnusedULID, "project"},
			{"task of a non-member", "alice", tq, s.Task("Benchmark the new model").ID, "task"},
			{"task for a user without projects", "eve", tq, t1.ID, "task"},
			{"nonexistent task", "alice", tq, "tsk#" + patUnusedULID, "task"},
			{"nonexistent node project", "alice", patNodeQuery, "prj#" + patUnusedULID, "node"},
			{"nonexistent node task", "alice", patNodeQuery, "tsk#" + patUnusedULID, "node"},
			{"nonexistent comment of a nonexistent task", "alice", patNodeQuery, "cmt#" + patUnusedULID + "#" + patUnusedULID, "node"},
			{"nonexistent comment of a visible task", "alice", patNodeQuery, "cmt#" + t1ULID + "#" + patUnusedULID, "node"},
		}
		for _, c := range nulls {
			t.Run("null: "+c.name, func(t *testing.T) {
				res := e.Query(t, c.viewer, c.query, map[string]any{"id": c.id})
				if len(res.Errors) > 0 {
					t.Fatalf("errors %+v, want none", res.Errors)
				}
				if got := string(patDig(t, res.Data, c.field)); got != "null" {
					t.Errorf("%s(%s) = %s, want null", c.field, c.id, got)
				}
			})
		}

		t.Run("member sees them", func(t *testing.T) {
			var got struct {
				Project struct{ ID, Name string }
				Task    struct {
					ID      string
					Project struct{ ID string }
				}
			}
			e.MustQuery(t, "carol", `query($p: ID!, $t: ID!) { project(id: $p) { id name } task(id: $t) { id project { id } } }`,
				map[string]any{"p": web.ID, "t": t1.ID}, &got)
			if got.Project.ID != web.ID || got.Project.Name != "Website relaunch" || got.Task.ID != t1.ID || got.Task.Project.ID != web.ID {
				t.Errorf("got %+v", got)
			}
		})

		malformed := []struct {
			name, query, id string
		}{
			{"node with '#' but no type", patNodeQuery, "abc#"},
			{"node project id without ULID", patNodeQuery, "prj#nope"},
			{"node task id without ULID", patNodeQuery, "tsk#nope"},
			{"node comment id without task", patNodeQuery, "cmt#" + patUnusedULID},
			{"node empty id", patNodeQuery, ""},
			{"project with a task id", pq, t1.ID},
			{"project with a comment id", pq, c1.ID},
			{"project with a user id", pq, "alice"},
			{"project id without ULID", pq, "prj#nope"},
			{"project id with a short ULID", pq, "prj#" + patUnusedULID[:25]},
			{"task with a project id", tq, web.ID},
			{"task with a comment id", tq, c1.ID},
			{"task id without ULID", tq, "tsk#nope"},
			{"user id with '#'", `query($id: ID!) { user(id: $id) { id } }`, "abc#"},
			{"user with a project id", `query($id: ID!) { user(id: $id) { id } }`, web.ID},
			{"user with a tag id", `query($id: ID!) { user(id: $id) { id } }`, "tag#urgent"},
			{"project with a tag id", pq, "tag#urgent"},
			{"task with a tag id", tq, "tag#urgent"},
			{"node comment id with a bad ULID", patNodeQuery, "cmt#x"},
			{"node tag id with an upper-case name", patNodeQuery, "tag#Urgent"},
			{"node tag id with a space", patNodeQuery, "tag#a b"},
			{"node tag id without a name", patNodeQuery, "tag#"},
		}
		// An id of a form no object of the field's type has names no such
		// object: null, as a missing one, and nothing is read.
		for _, c := range malformed {
			t.Run("null without a read: "+c.name, func(t *testing.T) {
				e.Calls.Reset()
				res := e.Query(t, "alice", c.query, map[string]any{"id": c.id})
				if len(res.Errors) > 0 {
					t.Fatalf("errors %+v, want none", res.Errors)
				}
				var data map[string]json.RawMessage
				if err := json.Unmarshal(res.Data, &data); err != nil || len(data) != 1 {
					t.Fatalf("data %s: %v", res.Data, err)
				}
				for field, v := range data {
					if string(v) != "null" {
						t.Errorf("%s(%q) = %s, want null", field, c.id, v)
					}
				}
				if n := e.Calls.Total(); n != 0 {
					t.Errorf("%d DynamoDB calls (%v), want none", n, e.Calls)
				}
			})
		}
	})
}

// Deleting needs transactions, which dynalite lacks: the embedded store only.
func TestPatternsDeletedObjectsVanishAtOnce(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	t1, t2, t5 := s.Task("Write the landing page copy"), s.Task("Fix the broken signup form"), s.Task("Migrate the blog")
	c1, c2 := patCommentsOf(s.Dataset, t1.ID)[0], patCommentsOf(s.Dataset, t2.ID)[0]
	const tq = `query($id: ID!) { task(id: $id) { id } }`
	const pq = `query($id: ID!) { project(id: $id) { id } }`
	isNull := func(t *testing.T, viewer, q, id, field string) {
		t.Helper()
		res := e.Query(t, viewer, q, map[string]any{"id": id})
		if len(res.Errors) > 0 {
			t.Fatalf("errors %+v", res.Errors)
		}
		if got := string(patDig(t, res.Data, field)); got != "null" {
			t.Errorf("%s(%s) = %s after deletion, want null", field, id, got)
		}
	}
	tagTitles := func(t *testing.T, viewer, tag string) []string {
		t.Helper()
		var got struct{ TasksByTag patTaskConn }
		e.MustQuery(t, viewer, `query($tag: String!) { tasksByTag(tag: $tag, first: 100) { nodes { id title dueDate } } }`,
			map[string]any{"tag": tag}, &got)
		return patTitles(got.TasksByTag.Nodes)
	}
	del := func(t *testing.T, viewer, mutation, id string) {
		t.Helper()
		var got map[string]string
		e.MustQuery(t, viewer, `mutation($id: ID!) { `+mutation+`(id: $id) }`, map[string]any{"id": id}, &got)
		if got[mutation] != id {
			t.Fatalf("%s returned %v, want %s", mutation, got, id)
		}
	}

	t.Run("deleted task", func(t *testing.T) {
		del(t, "alice", "deleteTask", t5.ID)
		isNull(t, "alice", tq, t5.ID, "task")
		isNull(t, "alice", patNodeQuery, t5.ID, "node")
		if got, want := tagTitles(t, "alice", "backend"), []string{"Offline sync", "Push notifications"}; !slices.Equal(got, want) {
			t.Errorf("tasksByTag(backend) = %q, want %q", got, want)
		}
		var got struct{ Project struct{ Tasks patTaskConn } }
		e.MustQuery(t, "alice", `query($id: ID!) { project(id: $id) { tasks(first: 100) { nodes { id title dueDate } } } }`,
			map[string]any{"id": web.ID}, &got)
		if slices.Contains(patTitles(got.Project.Tasks.Nodes), t5.Title) || len(got.Project.Tasks.Nodes) != 5 {
			t.Errorf("project tasks after deleting %q: %q", t5.Title, patTitles(got.Project.Tasks.Nodes))
		}
	})

	t.Run("deleted task's comments", func(t *testing.T) {
		del(t, "bob", "deleteTask", t2.ID)
		isNull(t, "bob", patNodeQuery, c2.ID, "node")
		var got struct {
			User struct{ AssignedTasks, OverdueTasks patTaskConn }
		}
		e.MustQuery(t, "alice", `{ user(id: "bob") { assignedTasks { nodes { id title dueDate } } overdueTasks { nodes { id title dueDate } } } }`, nil, &got)
		if a := patTitles(got.User.AssignedTasks.Nodes); !slices.Equal(a, []string{"Dark mode"}) {
			t.Errorf("bob's assigned tasks = %q, want [Dark mode]", a)
		}
		if o := patTitles(got.User.OverdueTasks.Nodes); len(o) != 0 {
			t.Errorf("bob's overdue tasks = %q, want none", o)
		}
	})

	t.Run("deleted project", func(t *testing.T) {
		del(t, "alice", "deleteProject", web.ID)
		isNull(t, "alice", pq, web.ID, "project")
		isNull(t, "bob", patNodeQuery, web.ID, "node")
		isNull(t, "alice", tq, t1.ID, "task")
		isNull(t, "alice", patNodeQuery, c1.ID, "node")
		isNull(t, "bob", `query($id: ID!) { user(id: $id) { id } }`, "carol", "user") // they shared only that project
		if got := tagTitles(t, "alice", "urgent"); !slices.Equal(got, []string{"Crash on start on Android 12"}) {
			t.Errorf("tasksByTag(urgent) = %q, want only the Mobile app task", got)
		}
		var got struct {
			Me struct {
				Projects                    struct{ Nodes []struct{ Name string } }
				AssignedTasks, OverdueTasks patTaskConn
			}
		}
		e.MustQuery(t, "alice", `{ me { projects { nodes { name } } assignedTasks { nodes { id title dueDate } }
			overdueTasks { nodes { id title dueDate } } } }`, nil, &got)
		if len(got.Me.Projects.Nodes) != 1 || got.Me.Projects.Nodes[0].Name != "Mobile app" {
			t.Errorf("alice's projects = %+v, want only Mobile app", got.Me.Projects.Nodes)
		}
		if a, want := patTitles(got.Me.AssignedTasks.Nodes), []string{"App store screenshots", "Crash on start on Android 12"}; !slices.Equal(a, want) {
			t.Errorf("alice's assigned tasks = %q, want %q", a, want)
		}
		if o, want := patTitles(got.Me.OverdueTasks.Nodes), []string{"Crash on start on Android 12"}; !slices.Equal(o, want) {
			t.Errorf("alice's overdue tasks = %q, want %q", o, want)
		}
	})
}

// ------------------------------------------------- one query, all seven patterns

func TestPatternsAllSevenInOneQueryOnDemoData(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const q = `query($project: ID!, $task: ID!) {
			me { id name email
				projects(first: 10) { nodes { name } }
				assignedTasks(first: 10) { nodes { title } }
				overdueTasks(first: 10) { nodes { title } } }
			dave: user(id: "dave") { name email projects(first: 10) { nodes { name } }
				assignedTasks(first: 10) { nodes { title } } overdueTasks(asOf: "2026-08-26", first: 10) { nodes { title } } }
			eve: user(id: "eve") { id }
			project(id: $project) { tasks(first: 10) { nodes { title } } todo: tasks(first: 10, status: TODO) { nodes { title } } }
			task(id: $task) { comments(first: 10) { nodes { body author { name } } } tags { name tasks(first: 10) { nodes { title } } } }
			tasksByTag(tag: " URGENT ", first: 10) { nodes { title } pageInfo { hasNextPage } }
		}`
		type titled struct{ Nodes []struct{ Title string } }
		type named struct{ Nodes []struct{ Name string } }
		var got struct {
			Me struct {
				ID, Name                    string
				Email                       *string
				Projects                    named
				AssignedTasks, OverdueTasks titled
			}
			Dave struct {
				Name                        string
				Email                       *string
				Projects                    named
				AssignedTasks, OverdueTasks titled
			}
			Eve     *struct{ ID string }
			Project struct{ Tasks, Todo titled }
			Task    struct {
				Comments struct {
					Nodes []struct {
						Body   string
						Author struct{ Name string }
					}
				}
				Tags []struct {
					Name  string
					Tasks titled
				}
			}
			TasksByTag struct {
				titled
				PageInfo struct{ HasNextPage bool }
			}
		}
		e.MustQuery(t, "alice", q, map[string]any{"project": s.Project("Website relaunch").ID,
			"task": s.Task("Crash on start on Android 12").ID}, &got)
		ts := func(c titled) []string {
			out := []string{}
			for _, n := range c.Nodes {
				out = append(out, n.Title)
			}
			return out
		}
		ns := func(c named) []string {
			out := []string{}
			for _, n := range c.Nodes {
				out = append(out, n.Name)
			}
			return out
		}
		check := func(what string, got, want []string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("%s:\n got  %q\n want %q", what, got, want)
			}
		}
		// 1: profiles
		if got.Me.ID != "alice" || got.Me.Name != "Alice Example" || testenv.DerefOr(got.Me.Email, "none") != "alice@example.com" {
			t.Errorf("me = %+v (email %s)", got.Me, testenv.DerefOr(got.Me.Email, "none"))
		}
		if got.Dave.Name != "Dave Diaz" || got.Dave.Email != nil {
			t.Errorf("dave = %q, email %s; want Dave Diaz without email", got.Dave.Name, testenv.DerefOr(got.Dave.Email, "none"))
		}
		if got.Eve != nil {
			t.Errorf("alice sees eve: %+v", *got.Eve)
		}
		// 2: projects
		check("me.projects", ns(got.Me.Projects), []string{"Mobile app", "Website relaunch"})
		check("dave.projects", ns(got.Dave.Projects), []string{"Mobile app"})
		// 3: project tasks
		check("project.tasks", ts(got.Project.Tasks), []string{"Pick a colour palette", "Write the landing page copy",
			"Fix the broken signup form", "Set up analytics", "Launch announcement", "Migrate the blog"})
		check("project.tasks(TODO)", ts(got.Project.Todo), []string{"Fix the broken signup form", "Set up analytics",
			"Launch announcement", "Migrate the blog"})
		// 4: assigned
		check("me.assignedTasks", ts(got.Me.AssignedTasks), []string{"App store screenshots", "Write the landing page copy",
			"Crash on start on Android 12", "Set up analytics", "Launch announcement"})
		check("dave.assignedTasks", ts(got.Dave.AssignedTasks), []string{"Offline sync", "Push notifications"})
		// 5: comments
		var comments []string
		for _, c := range got.Task.Comments.Nodes {
			comments = append(comments, c.Author.Name+": "+c.Body)
		}
		check("task.comments", comments, []string{"Dave Diaz: Stack trace attached to the ticket.",
			"Alice Example: Update 1: still investigating.", "Alice Example: Update 2: still investigating.",
			"Alice Example: Update 3: still investigating."})
		// 6: tags
		urgent := []string{"Write the landing page copy", "Crash on start on Android 12", "Fix the broken signup form"}
		check("tasksByTag", ts(got.TasksByTag.titled), urgent)
		if got.TasksByTag.PageInfo.HasNextPage {
			t.Errorf("tasksByTag hasNextPage = true")
		}
		tags := map[string][]string{}
		for _, tag := range got.Task.Tags {
			tags[tag.Name] = ts(tag.Tasks)
		}
		check("task.tags", slices.Sorted(maps.Keys(tags)), []string{"android", "bug", "urgent"})
		check("Tag(urgent).tasks", tags["urgent"], urgent)
		check("Tag(bug).tasks", tags["bug"], []string{"Crash on start on Android 12", "Fix the broken signup form"})
		// 7: overdue
		check("me.overdueTasks", ts(got.Me.OverdueTasks), []string{"Write the landing page copy", "Crash on start on Android 12"})
		check("dave.overdueTasks(asOf tomorrow)", ts(got.Dave.OverdueTasks), []string{"Offline sync"})
	})
}

// ------------------------------------------------- pagination

// patWorld is a dataset made for paging: lists long enough for many pages,
// sparse filter matches, equal due dates, and hidden projects interleaved
// with visible ones.
type patWorld struct {
	*dynamo.Dataset
	big, same *domain.Project
	commented *domain.Task   // 6 comments
	tagged    *domain.Task   // exactly one tag: "spread"
	sameOrder []*domain.Task // the tasks of "Same day" in the order they must be listed
}

// patSeedPaging builds the paging world:
//
//	users vic (the usual viewer), ann, out, lonely (in no project)
//	Big          vic (owner), ann   30 tasks: due dates over 11 days (2-3 per date), 3 without, 3 sparse DONE
//	Hidden A, B  out (owner), ann   5 tasks each, all ann's, tag "spread", dates interleaved with Big's
//	Shared small ann (owner), vic   4 tasks, vic's or nobody's, tag "spread"
//	Same day     vic                8 tasks due the same day, 2 without due date (one made first)
//	Hidden C, D  out (owner), ann   no tasks; with Extra 0-4 (ann's, out in 1 and 3): ann is in 11 projects,
//	                                out shares 6 of them, interleaved with the 5 others
//	comments     6 on "Big 01", by vic and ann in turn
func patSeedPaging(t *testing.T, e *testenv.Env) *patWorld {
	t.Helper()
	b := e.Store.NewDataset(testenv.Now)
	w := &patWorld{}
	vic := b.User("vic", "Vic Viewer", "vic@example.com")
	ann := b.User("ann", "Ann Assignee", "")
	out := b.User("out", "Olga Outside", "")
	b.User("lonely", "Lonely Nobody", "")

	w.big = b.Project("Big", "", vic, ann)
	hidA := b.Project("Hidden A", "", out, ann)
	small := b.Project("Shared small", "", ann, vic)
	hidB := b.Project("Hidden B", "", out, ann)
	w.same = b.Project("Same day", "", vic)
	b.Project("Hidden C", "", out, ann)
	for k := range 5 {
		if k%2 == 1 {
			b.Project(fmt.Sprintf("Extra %d", k), "", ann, out)
		} else {
			b.Project(fmt.Sprintf("Extra %d", k), "", ann)
		}
	}
	b.Project("Hidden D", "", out, ann)

	for i := range 30 {
		var due *domain.Date
		if i%10 != 9 {
			due = testenv.DayPtr((i*7)%11 - 5)
		}
		status := domain.StatusTodo
		switch {
		case i == 4 || i == 13 || i == 22:
			status = domain.StatusDone
		case i%3 == 1:
			status = domain.StatusInProgress
		}
		var who *domain.User
		switch i % 5 {
		case 0:
			who = ann
		case 2:
			who = vic
		}
		var tags []string
		if i%10 == 0 {
			tags = []string{"spread"}
		}
		task := b.Task(w.big, fmt.Sprintf("Big %02d", i), status, due, who, tags...)
		switch i {
		case 0:
			w.tagged = task
		case 1:
			w.commented = task
		}
	}
	for k, p := range []*domain.Project{hidA, hidB} {
		for i := range 5 {
			var due *domain.Date
			if i != 4 {
				due = testenv.DayPtr(i*2 - 5 + k)
			}
			status := domain.StatusTodo
			if i == 1 {
				status = domain.StatusDone
			}
			b.Task(p, fmt.Sprintf("%s %d", p.Name, i), status, due, ann, "spread")
		}
	}
	for i := range 4 {
		var who *domain.User
		if i%2 == 1 {
			who = vic
		}
		b.Task(small, fmt.Sprintf("Small %d", i), domain.StatusInProgress, testenv.DayPtr(i*2-4), who, "spread")
	}
	first := b.Task(w.same, "Same day: no due date, made first", domain.StatusTodo, nil, vic)
	for i := range 8 {
		status := domain.StatusTodo
		if i%4 == 2 {
			status = domain.StatusDone
		}
		var tags []string
		if i%5 == 0 {
			tags = []string{"spread"}
		}
		var who *domain.User
		if i%3 == 0 {
			who = vic
		}
		w.sameOrder = append(w.sameOrder, b.Task(w.same, fmt.Sprintf("Same day %02d", i), status, testenv.DayPtr(2), who, tags...))
	}
	last := b.Task(w.same, "Same day: no due date, made last", domain.StatusTodo, nil, nil)
	w.sameOrder = append(w.sameOrder, first, last)
	for i := range 6 {
		author := vic
		if i%2 == 1 {
			author = ann
		}
		b.Comment(w.commented, author, fmt.Sprintf("comment %d", i))
	}
	e.MustImport(t, &b.D)
	w.Dataset = &b.D
	return w
}

func (w *patWorld) member(user, project string) bool {
	for _, m := range w.Members {
		if m.UserID == user && m.ProjectID == project {
			return true
		}
	}
	return false
}

// tasks returns the ids of the tasks pred admits, in the contract's order:
// due date ascending, no due date last, equal due dates by id.
func (w *patWorld) tasks(pred func(*domain.Task) bool) []string {
	var ts []*domain.Task
	for _, t := range w.Tasks {
		if pred(t) {
			ts = append(ts, t)
		}
	}
	key := func(t *domain.Task) string {
		var d *string
		if t.DueDate != nil {
			d = testenv.Ptr(t.DueDate.String())
		}
		return patDueKey(d, t.ID)
	}
	slices.SortFunc(ts, func(a, b *domain.Task) int { return strings.Compare(key(a), key(b)) })
	ids := []string{}
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}

func patAssignedTo(user string) func(*domain.Task) bool {
	return func(t *domain.Task) bool { return t.AssigneeID != nil && *t.AssigneeID == user }
}

func (w *patWorld) overdue(user string, asOf string) func(*domain.Task) bool {
	return func(t *domain.Task) bool {
		return patAssignedTo(user)(t) && t.Status != domain.StatusDone && t.DueDate != nil && t.DueDate.String() < asOf
	}
}

func (w *patWorld) withTag(tag string) func(*domain.Task) bool {
	return func(t *domain.Task) bool { return slices.Contains(t.Tags, tag) }
}

func (w *patWorld) seenBy(viewer string, pred func(*domain.Task) bool) func(*domain.Task) bool {
	return func(t *domain.Task) bool { return pred(t) && w.member(viewer, t.ProjectID) }
}

// projectsOf returns the ids of user's projects that viewer may see, newest first.
func (w *patWorld) projectsOf(user, viewer string) []string {
	ids := []string{}
	for _, m := range w.Members {
		if m.UserID == user && w.member(viewer, m.ProjectID) {
			ids = append(ids, m.ProjectID)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}

// patList is one paginated list read through GraphQL: the query declares
// $first, $after, $last and $before (patPageVars) and selects patConnSel at
// path.
type patList struct {
	name   string
	kind   string // "task", "project" or "comment": the shape of its cursors
	viewer string
	query  string
	path   []string
	vars   map[string]any
	want   []string // every id of the list, in order
	all    []string // for filtered lists: the ids before filtering, in the same order
}

const patConnSel = `edges { cursor node { id } } nodes { id } pageInfo { hasNextPage endCursor hasPreviousPage startCursor }`

// patQ fills in a list query: CONN is patConnSel, VARS the page variables'
// declarations and PAGE the page arguments.
func patQ(s string) string {
	return strings.NewReplacer("CONN", patConnSel, "VARS", "$first: Int, $after: String, $last: Int, $before: String",
		"PAGE", "first: $first, after: $after, last: $last, before: $before").Replace(s)
}

var (
	patProjectTasksQ = patQ(`query($id: ID!, $status: TaskStatus, VARS) {
		x: project(id: $id) { c: tasks(PAGE, status: $status) { CONN } } }`)
	patAssignedQ = patQ(`query($id: ID!, VARS) {
		x: user(id: $id) { c: assignedTasks(PAGE) { CONN } } }`)
	patOverdueQ = patQ(`query($id: ID!, $asOf: Date, VARS) {
		x: user(id: $id) { c: overdueTasks(asOf: $asOf, PAGE) { CONN } } }`)
	patOverdueDefaultQ = patQ(`query($id: ID!, VARS) {
		x: user(id: $id) { c: overdueTasks(PAGE) { CONN } } }`)
	patCommentsQ = patQ(`query($id: ID!, VARS) {
		x: task(id: $id) { c: comments(PAGE) { CONN } } }`)
	patProjectsQ = patQ(`query($id: ID!, VARS) {
		x: user(id: $id) { c: projects(PAGE) { CONN } } }`)
	patMeProjectsQ = patQ(`query(VARS) { x: me { c: projects(PAGE) { CONN } } }`)
	patByTagQ      = patQ(`query($tag: String!, VARS) { c: tasksByTag(tag: $tag, PAGE) { CONN } }`)
	patTagTasksQ   = patQ(`query($id: ID!, VARS) {
		x: task(id: $id) { tags { name c: tasks(PAGE) { CONN } } } }`)
)

func (w *patWorld) lists() []patList {
	inBig := func(t *domain.Task) bool { return t.ProjectID == w.big.ID }
	withStatus := func(s domain.TaskStatus) func(*domain.Task) bool {
		return func(t *domain.Task) bool { return inBig(t) && t.Status == s }
	}
	var sameIDs []string
	for _, t := range w.sameOrder {
		sameIDs = append(sameIDs, t.ID)
	}
	var commentIDs []string
	for _, c := range patCommentsOf(w.Dataset, w.commented.ID) {
		commentIDs = append(commentIDs, c.ID)
	}
	today, later := testenv.Day(0), testenv.Day(3)
	xc := []string{"x", "c"}
	return []patList{
		{name: "project.tasks", kind: "task", viewer: "vic", query: patProjectTasksQ, path: xc,
			vars: map[string]any{"id": w.big.ID}, want: w.tasks(inBig)},
		{name: "project.tasks status DONE, 3 sparse of 30", kind: "task", viewer: "ann", query: patProjectTasksQ, path: xc,
			vars: map[string]any{"id": w.big.ID, "status": "DONE"}, want: w.tasks(withStatus(domain.StatusDone)), all: w.tasks(inBig)},
		{name: "project.tasks status IN_PROGRESS", kind: "task", viewer: "vic", query: patProjectTasksQ, path: xc,
			vars: map[string]any{"id": w.big.ID, "status": "IN_PROGRESS"}, want: w.tasks(withStatus(domain.StatusInProgress)), all: w.tasks(inBig)},
		{name: "project.tasks equal due dates by id, no due date last", kind: "task", viewer: "vic", query: patProjectTasksQ, path: xc,
			vars: map[string]any{"id": w.same.ID}, want: sameIDs},
		{name: "own assignedTasks in 3 projects", kind: "task", viewer: "ann", query: patAssignedQ, path: xc,
			vars: map[string]any{"id": "ann"}, want: w.tasks(patAssignedTo("ann"))},
		{name: "another user's assignedTasks in 3 projects, 1 shared", kind: "task", viewer: "vic", query: patAssignedQ, path: xc,
			vars: map[string]any{"id": "ann"}, want: w.tasks(w.seenBy("vic", patAssignedTo("ann"))), all: w.tasks(patAssignedTo("ann"))},
		{name: "own overdueTasks by default", kind: "task", viewer: "ann", query: patOverdueDefaultQ, path: xc,
			vars: map[string]any{"id": "ann"}, want: w.tasks(w.overdue("ann", today))},
		{name: "another user's overdueTasks asOf, 1 of 3 projects shared", kind: "task", viewer: "vic", query: patOverdueQ, path: xc,
			vars: map[string]any{"id": "ann", "asOf": later}, want: w.tasks(w.seenBy("vic", w.overdue("ann", later))),
			all: w.tasks(w.overdue("ann", later))},
		{name: "comments oldest first", kind: "comment", viewer: "ann", query: patCommentsQ, path: xc,
			vars: map[string]any{"id": w.commented.ID}, want: commentIDs},
		{name: "own projects newest first", kind: "project", viewer: "ann", query: patMeProjectsQ, path: xc,
			want: w.projectsOf("ann", "ann")},
		{name: "another user's projects, only shared", kind: "project", viewer: "out", query: patProjectsQ, path: xc,
			vars: map[string]any{"id": "ann"}, want: w.projectsOf("ann", "out"), all: w.projectsOf("ann", "ann")},
		{name: "no projects", kind: "project", viewer: "lonely", query: patMeProjectsQ, path: xc, want: []string{}},
		{name: "tasksByTag over 5 projects, 3 visible", kind: "task", viewer: "vic", query: patByTagQ, path: []string{"c"},
			vars: map[string]any{"tag": "spread"}, want: w.tasks(w.seenBy("vic", w.withTag("spread"))), all: w.tasks(w.withTag("spread"))},
		{name: "tasksByTag for a user in no project", kind: "task", viewer: "lonely", query: patByTagQ, path: []string{"c"},
			vars: map[string]any{"tag": "spread"}, want: []string{}},
		{name: "Tag.tasks over 5 projects, 3 visible", kind: "task", viewer: "vic", query: patTagTasksQ, path: []string{"x", "tags", "0", "c"},
			vars: map[string]any{"id": w.tagged.ID}, want: w.tasks(w.seenBy("vic", w.withTag("spread"))), all: w.tasks(w.withTag("spread"))},
	}
}

type patPage struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID string }
	}
	Nodes    []struct{ ID string }
	PageInfo struct {
		HasNextPage     bool
		EndCursor       *string
		HasPreviousPage bool
		StartCursor     *string
	}
}

func (p patPage) ids() []string {
	out := []string{}
	for _, n := range p.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func (l patList) fetch(t *testing.T, e *testenv.Env, first int, after *string) patPage {
	t.Helper()
	return l.get(t, e, map[string]any{"first": first, "after": after}, first, false)
}

// fetchBack reads the page of the last items before the cursor before.
// $first is left out: its default does not count as given with last.
func (l patList) fetchBack(t *testing.T, e *testenv.Env, last int, before *string) patPage {
	t.Helper()
	return l.get(t, e, map[string]any{"last": last, "before": before}, last, true)
}

// get reads a page of size n with the page variables vars, and checks it
// is a page: edges and nodes agree, startCursor and endCursor are the first
// and last edge's cursors, and the far side's flag (hasPreviousPage
// forwards, hasNextPage backwards) is false, as the schema says.
func (l patList) get(t *testing.T, e *testenv.Env, vars map[string]any, n int, back bool) patPage {
	t.Helper()
	for k, v := range l.vars {
		vars[k] = v
	}
	res := e.Query(t, l.viewer, l.query, vars)
	if len(res.Errors) > 0 {
		t.Fatalf("%v: errors %+v", vars, res.Errors)
	}
	var p patPage
	if err := json.Unmarshal(patDig(t, res.Data, l.path...), &p); err != nil {
		t.Fatalf("decoding page: %v", err)
	}
	if len(p.Nodes) > n {
		t.Errorf("page of %d has %d nodes", n, len(p.Nodes))
	}
	if len(p.Edges) != len(p.Nodes) {
		t.Fatalf("%d edges but %d nodes", len(p.Edges), len(p.Nodes))
	}
	for i, ed := range p.Edges {
		if ed.Node.ID != p.Nodes[i].ID || ed.Cursor == "" {
			t.Errorf("edge %d: node %s cursor %q, but nodes[%d] is %s", i, ed.Node.ID, ed.Cursor, i, p.Nodes[i].ID)
		}
	}
	start, end := testenv.DerefOr(p.PageInfo.StartCursor, "none"), testenv.DerefOr(p.PageInfo.EndCursor, "none")
	if k := len(p.Edges); k > 0 && (start != p.Edges[0].Cursor || end != p.Edges[k-1].Cursor) {
		t.Errorf("startCursor %s, endCursor %s are not the first and last edge's cursors %s, %s", start, end, p.Edges[0].Cursor, p.Edges[k-1].Cursor)
	}
	if len(p.Edges) == 0 && (p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil) {
		t.Errorf("an empty page has startCursor %s, endCursor %s; want null", start, end)
	}
	if back && p.PageInfo.HasNextPage || !back && p.PageInfo.HasPreviousPage {
		t.Errorf("%v: hasNextPage %v, hasPreviousPage %v: the far side of a page is reported false", vars, p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage)
	}
	return p
}

// firstCursor returns the endCursor of the list's first page of one.
func (l patList) firstCursor(t *testing.T, e *testenv.Env) string {
	t.Helper()
	p := l.fetch(t, e, 1, nil)
	if p.PageInfo.EndCursor == nil || len(p.Nodes) != 1 {
		t.Fatalf("first page of one has %d nodes and endCursor %v", len(p.Nodes), p.PageInfo.EndCursor)
	}
	return *p.PageInfo.EndCursor
}

// pageThrough reads the whole list with pages of n, forwards (first,
// after: endCursor) or backwards (last, before: startCursor), and checks
// the Relay rules on the way: a page after hasNextPage (hasPreviousPage) is
// never empty (nor short), the cursor leads to the next page, the last
// page says so. It returns the ids in the list's order.
func (l patList) pageThrough(t *testing.T, e *testenv.Env, n int, back bool) []string {
	t.Helper()
	ids := []string{}
	var cursor *string
	for i := 0; ; i++ {
		if i > len(l.want)+1 {
			t.Fatalf("still paging after %d pages for %d items", i, len(l.want))
		}
		var p patPage
		more, next := false, (*string)(nil)
		if back {
			p = l.fetchBack(t, e, n, cursor)
			ids = append(p.ids(), ids...)
			more, next = p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor
		} else {
			p = l.fetch(t, e, n, cursor)
			ids = append(ids, p.ids()...)
			more, next = p.PageInfo.HasNextPage, p.PageInfo.EndCursor
		}
		if i > 0 && len(p.Nodes) == 0 {
			t.Errorf("page %d is empty although the page before said more remain", i+1)
		}
		if !more {
			return ids
		}
		if len(p.Nodes) < n {
			t.Errorf("page %d has %d of %d items although more remain", i+1, len(p.Nodes), n)
		}
		if next == nil {
			t.Fatalf("page %d says more remain but has no cursor to them", i+1)
		}
		cursor = next
	}
}

// patInterleaved reports whether some item of all that is not in want lies
// between two items of want: the filter must drop items mid-list.
func patInterleaved(want, all []string) bool {
	firstIdx, lastIdx := -1, -1
	for i, id := range all {
		if slices.Contains(want, id) {
			if firstIdx < 0 {
				firstIdx = i
			}
			lastIdx = i
		}
	}
	for i := firstIdx + 1; i < lastIdx; i++ {
		if !slices.Contains(want, all[i]) {
			return true
		}
	}
	return false
}

func TestPatternsPagination(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		w := patSeedPaging(t, e)
		t.Run("default first is 20", func(t *testing.T) {
			t.Parallel()
			const q = `query($id: ID!, $after: String) { project(id: $id) { tasks(after: $after) { nodes { id }
				pageInfo { hasNextPage endCursor } } } }`
			want := w.tasks(func(t *domain.Task) bool { return t.ProjectID == w.big.ID })
			var ids []string
			var after *string
			for _, n := range []int{20, 10} {
				var got struct {
					Project struct {
						Tasks struct {
							Nodes    []struct{ ID string }
							PageInfo struct {
								HasNextPage bool
								EndCursor   *string
							}
						}
					}
				}
				e.MustQuery(t, "vic", q, map[string]any{"id": w.big.ID, "after": after}, &got)
				c := got.Project.Tasks
				if len(c.Nodes) != n || c.PageInfo.HasNextPage != (n == 20) || c.PageInfo.EndCursor == nil {
					t.Fatalf("page of %d nodes, hasNextPage %v, endCursor %v; want %d nodes", len(c.Nodes), c.PageInfo.HasNextPage, c.PageInfo.EndCursor, n)
				}
				for _, nd := range c.Nodes {
					ids = append(ids, nd.ID)
				}
				after = c.PageInfo.EndCursor
			}
			if !slices.Equal(ids, want) {
				t.Errorf("pages of the default size:\n got  %v\n want %v", ids, want)
			}
		})
		for _, l := range w.lists() {
			t.Run(l.name, func(t *testing.T) {
				t.Parallel()
				if l.all != nil && (len(l.want) < 2 || len(l.want) >= len(l.all) || !patInterleaved(l.want, l.all)) {
					t.Fatalf("dataset does not exercise filtering: %d of %d kept, interleaved %v",
						len(l.want), len(l.all), patInterleaved(l.want, l.all))
				}
				full := l.fetch(t, e, 100, nil)
				if got := full.ids(); !slices.Equal(got, l.want) {
					t.Fatalf("single page of first=100:\n got  %v\n want %v", got, l.want)
				}
				if full.PageInfo.HasNextPage {
					t.Errorf("hasNextPage = true on a page with the whole list")
				}
				last := l.fetchBack(t, e, 100, nil)
				if got := last.ids(); !slices.Equal(got, l.want) || last.PageInfo.HasPreviousPage {
					t.Fatalf("single page of last=100 (hasPreviousPage %v):\n got  %v\n want %v", last.PageInfo.HasPreviousPage, got, l.want)
				}
				for _, n := range []int{1, 2, 3, 20} {
					for _, back := range []bool{false, true} {
						name := fmt.Sprintf("first=%d", n)
						if back {
							name = fmt.Sprintf("last=%d", n)
						}
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							if got := l.pageThrough(t, e, n, back); !slices.Equal(got, l.want) {
								t.Errorf("pages concatenated:\n got  %v\n want %v", got, l.want)
							}
						})
					}
				}
				if len(full.Edges) > 2 {
					t.Run("after a middle edge's cursor", func(t *testing.T) {
						i := len(full.Edges) / 2
						p := l.fetch(t, e, 2, &full.Edges[i].Cursor)
						if got, want := p.ids(), l.want[i+1:min(i+3, len(l.want))]; !slices.Equal(got, want) {
							t.Errorf("after edge %d: got %v, want %v", i, got, want)
						}
						if p.PageInfo.HasNextPage != (i+3 < len(l.want)) {
							t.Errorf("after edge %d: hasNextPage = %v with %d items left", i, p.PageInfo.HasNextPage, len(l.want)-i-1)
						}
					})
					t.Run("before a middle edge's cursor", func(t *testing.T) {
						i := len(full.Edges) / 2
						p := l.fetchBack(t, e, 2, &full.Edges[i].Cursor)
						if got, want := p.ids(), l.want[max(i-2, 0):i]; !slices.Equal(got, want) {
							t.Errorf("before edge %d: got %v, want %v", i, got, want)
						}
						if p.PageInfo.HasPreviousPage != (i > 2) {
							t.Errorf("before edge %d: hasPreviousPage = %v with %d items before", i, p.PageInfo.HasPreviousPage, i)
						}
					})
				}
			})
		}
	})
}

func TestPatternsPaginationRejectsBadArguments(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		w := patSeedPaging(t, e)
		lists := w.lists()
		// One cursor of each shape, to use in lists of another shape.
		cursors := map[string]string{}
		for _, l := range lists {
			if _, ok := cursors[l.kind]; !ok && len(l.want) > 0 {
				cursors[l.kind] = l.firstCursor(t, e)
			}
		}
		foreign := map[string]string{"task": cursors["project"], "project": cursors["task"], "comment": cursors["task"]}
		seen := map[string]bool{} // one list per query (and status filter or not)
		for _, l := range lists {
			if key := fmt.Sprint(l.query, l.vars["status"] != nil, len(l.want) > 0); seen[key] {
				continue
			} else {
				seen[key] = true
			}
			t.Run(l.name, func(t *testing.T) {
				t.Parallel()
				type bad struct {
					name string
					page map[string]any
				}
				fwd := func(first int, after *string) map[string]any { return map[string]any{"first": first, "after": after} }
				back := func(last int, before *string) map[string]any { return map[string]any{"last": last, "before": before} }
				bads := []bad{{"first=0", fwd(0, nil)}, {"first=101", fwd(101, nil)},
					{"last=0", back(0, nil)}, {"last=101", back(101, nil)}, {"last=-1", back(-1, nil)},
					{"garbage cursor", fwd(1, testenv.Ptr("garbage"))}, {"cursor of another kind of list", fwd(1, testenv.Ptr(foreign[l.kind]))},
					{"garbage before", back(1, testenv.Ptr("garbage"))}, {"before: a cursor of another kind of list", back(1, testenv.Ptr(foreign[l.kind]))},
					{"first with a garbage before", map[string]any{"first": 1, "before": "garbage"}}}
				if len(l.want) > 0 {
					cur := l.firstCursor(t, e)
					bads = append(bads,
						bad{"truncated cursor", fwd(1, testenv.Ptr(cur[:len(cur)-4]))},
						bad{"cursor with a foreign character", fwd(1, testenv.Ptr(cur[:len(cur)/2]+"*"+cur[len(cur)/2+1:]))},
						bad{"first=-1 with a valid cursor", fwd(-1, &cur)},
						bad{"last=-1 with a valid cursor", back(-1, &cur)},
						bad{"truncated before", back(1, testenv.Ptr(cur[:len(cur)-4]))})
				}
				for _, b := range bads {
					t.Run(b.name, func(t *testing.T) {
						vars := b.page
						for k, v := range l.vars {
							vars[k] = v
						}
						e.MustFail(t, l.viewer, "BAD_USER_INPUT", l.query, vars)
					})
				}
			})
		}

		// A well-formed cursor from another list may point past the end of
		// this one (a task due after asOf): an empty last page or
		// BAD_USER_INPUT, never an internal error from the store.
		t.Run("cursor past the end of overdueTasks", func(t *testing.T) {
			assigned := patList{viewer: "ann", query: patAssignedQ, path: []string{"x", "c"}, vars: map[string]any{"id": "ann"}}
			full := assigned.fetch(t, e, 100, nil)
			if len(full.Edges) == 0 {
				t.Fatal("ann has no assigned tasks")
			}
			last := full.Edges[len(full.Edges)-1].Cursor // a task without due date
			res := e.Query(t, "ann", patOverdueDefaultQ, map[string]any{"id": "ann", "first": 5, "after": last})
			if len(res.Errors) > 0 {
				if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" {
					t.Fatalf("errors %+v, want none or one BAD_USER_INPUT", res.Errors)
				}
				return
			}
			var p patPage
			if err := json.Unmarshal(patDig(t, res.Data, "x", "c"), &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Nodes) != 0 || p.PageInfo.HasNextPage {
				t.Errorf("page after the last task: %v, hasNextPage %v; want empty and last", p.ids(), p.PageInfo.HasNextPage)
			}
		})
	})
}

// first together with last is refused as BAD_USER_INPUT before anything
// runs: no DynamoDB call, no data, on every connection, whether the values
// come as variables or literals. A variable left out or sent as null is no
// argument given: last with the default first, or with first: null, pages
// backwards.
func TestPaginationFirstWithLastIsRefusedWithoutACall(t *testing.T) {
	e := testenv.New(t)
	w := patSeedPaging(t, e) // not stepped: it pins no call but zero
	seen := map[string]bool{}
	for _, l := range w.lists() {
		if seen[l.query] || len(l.want) < 2 {
			continue
		}
		seen[l.query] = true
		vars := map[string]any{"first": 1, "last": 1}
		for k, v := range l.vars {
			vars[k] = v
		}
		literal := strings.NewReplacer("$first: Int, ", "", "first: $first", "first: 1").Replace(l.query)
		for _, q := range []string{l.query, literal} {
			e.Calls.Reset()
			res := e.Query(t, l.viewer, q, vars)
			if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || len(res.Data) > 0 && string(res.Data) != "null" {
				t.Fatalf("%s: errors %+v, data %s; want one BAD_USER_INPUT and no data", l.name, res.Errors, res.Data)
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%s: %d DynamoDB calls (%v), want 0", l.name, n, e.Calls.ByOp())
			}
		}
	}
	if len(seen) < 7 {
		t.Errorf("%d connections checked, want all 7", len(seen))
	}
}

// last alone, or with first: null (not given), pages backwards on every
// connection: the schema's default first (20) is no first given.
func TestPaginationLastAlonePagesBackwards(t *testing.T) {
	e := testenv.New(t)
	w := patSeedPaging(t, e)
	seen := map[string]bool{}
	for _, l := range w.lists() {
		if seen[l.query] || len(l.want) < 2 {
			continue
		}
		seen[l.query] = true
		for _, vars := range []map[string]any{{"last": 1}, {"first": nil, "last": 1}} {
			maps.Copy(vars, l.vars)
			p := l.get(t, e, vars, 1, true)
			if got := p.ids(); !slices.Equal(got, l.want[len(l.want)-1:]) || !p.PageInfo.HasPreviousPage {
				t.Errorf("%s with %v: %v (hasPreviousPage %v), want the last item %v", l.name, vars, got, p.PageInfo.HasPreviousPage, l.want[len(l.want)-1:])
			}
		}
	}
	if len(seen) < 7 {
		t.Errorf("%d connections checked, want all 7", len(seen))
	}
}

// The lists' indexes follow changes: a task's new due date, assignee, status
// and tags, and a member's removal or addition. Mutations need transactions,
// which dynalite lacks: the embedded store only.
func TestPatternsListsFollowChanges(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	blog := s.Task("Migrate the blog")
	const (
		projectTasks = `query($id: ID!, $status: TaskStatus) { project(id: $id) { tasks(first: 100, status: $status) { nodes { id title dueDate } } } }`
		byTag        = `query($tag: String!) { tasksByTag(tag: $tag, first: 100) { nodes { id title dueDate } } }`
		userLists    = `query($id: ID!) { user(id: $id) { projects { nodes { name } }
			assignedTasks(first: 100) { nodes { id title dueDate } } overdueTasks(first: 100) { nodes { id title dueDate } } } }`
		update = `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { id version } }`
	)
	check := func(t *testing.T, what string, c patTaskConn, want ...string) {
		t.Helper()
		if got := patTitles(c.Nodes); !slices.Equal(got, want) {
			t.Errorf("%s:\n got  %q\n want %q", what, got, want)
		}
		patCheckDueOrder(t, c.Nodes)
	}
	tasksOf := func(t *testing.T, viewer string, status any) patTaskConn {
		var got struct{ Project struct{ Tasks patTaskConn } }
		e.MustQuery(t, viewer, projectTasks, map[string]any{"id": web.ID, "status": status}, &got)
		return got.Project.Tasks
	}
	tagged := func(t *testing.T, viewer, tag string) patTaskConn {
		var got struct{ TasksByTag patTaskConn }
		e.MustQuery(t, viewer, byTag, map[string]any{"tag": tag}, &got)
		return got.TasksByTag
	}
	type userView struct {
		Projects                    struct{ Nodes []struct{ Name string } }
		AssignedTasks, OverdueTasks patTaskConn
	}
	userOf := func(t *testing.T, viewer, id string) *userView {
		var got struct{ User *userView }
		e.MustQuery(t, viewer, userLists, map[string]any{"id": id}, &got)
		return got.User
	}

	t.Run("new due date, assignee and tags move the task in every list", func(t *testing.T) {
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": blog.ID,
			"dueDate": testenv.Day(-20), "assigneeId": "alice", "tags": []string{"backend", "URGENT"}}}, nil)
		check(t, "project.tasks", tasksOf(t, "bob", nil), "Migrate the blog", "Pick a colour palette",
			"Write the landing page copy", "Fix the broken signup form", "Set up analytics", "Launch announcement")
		check(t, "tasksByTag(urgent)", tagged(t, "alice", "urgent"), "Migrate the blog", "Write the landing page copy",
			"Crash on start on Android 12", "Fix the broken signup form")
		u := userOf(t, "bob", "alice")
		check(t, "alice's assignedTasks", u.AssignedTasks, "Migrate the blog", "App store screenshots",
			"Write the landing page copy", "Crash on start on Android 12", "Set up analytics", "Launch announcement")
		check(t, "alice's overdueTasks", u.OverdueTasks, "Migrate the blog", "Write the landing page copy", "Crash on start on Android 12")
	})

	t.Run("DONE leaves overdue but stays assigned", func(t *testing.T) {
		e.MustQuery(t, "bob", update, map[string]any{"in": map[string]any{"id": blog.ID, "status": "DONE"}}, nil)
		u := userOf(t, "alice", "alice")
		check(t, "overdueTasks", u.OverdueTasks, "Write the landing page copy", "Crash on start on Android 12")
		check(t, "assignedTasks", u.AssignedTasks, "Migrate the blog", "App store screenshots",
			"Write the landing page copy", "Crash on start on Android 12", "Set up analytics", "Launch announcement")
		check(t, "project.tasks(DONE)", tasksOf(t, "alice", "DONE"), "Migrate the blog", "Pick a colour palette")
	})

	t.Run("cleared due date moves the task last", func(t *testing.T) {
		e.MustQuery(t, "alice", update, map[string]any{"in": map[string]any{"id": blog.ID, "dueDate": nil}}, nil)
		check(t, "project.tasks", tasksOf(t, "carol", nil), "Pick a colour palette", "Write the landing page copy",
			"Fix the broken signup form", "Set up analytics", "Launch announcement", "Migrate the blog")
		check(t, "tasksByTag(urgent)", tagged(t, "bob", "urgent"), "Write the landing page copy",
			"Crash on start on Android 12", "Fix the broken signup form", "Migrate the blog")
	})

	t.Run("removed member: no longer visible, comments keep their author", func(t *testing.T) {
		e.MustQuery(t, "alice", `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": web.ID, "u": "carol"}, nil)
		if u := userOf(t, "bob", "carol"); u != nil {
			t.Errorf("bob still sees carol (they shared only %q): %+v", web.Name, u)
		}
		carol := userOf(t, "carol", "carol")
		if len(carol.Projects.Nodes) != 1 || carol.Projects.Nodes[0].Name != "Research" {
			t.Errorf("carol's projects = %+v, want only Research", carol.Projects.Nodes)
		}
		check(t, "carol's assignedTasks", carol.AssignedTasks, "Write up results")
		check(t, "carol's tasksByTag(urgent)", tagged(t, "carol", "urgent"), "Benchmark the new model")
		var got struct {
			Project *struct{ ID string }
			Task    struct {
				Comments struct {
					Nodes []struct {
						Body   string
						Author struct{ ID, Name string }
					}
				}
			}
		}
		e.MustQuery(t, "bob", `query($p: ID!, $t: ID!) { project(id: $p) { id } task(id: $t) { comments { nodes { body author { id name } } } } }`,
			map[string]any{"p": web.ID, "t": s.Task("Fix the broken signup form").ID}, &got)
		if n := got.Task.Comments.Nodes; len(n) != 2 || n[0].Author.ID != "carol" || n[0].Author.Name != "Carol Chen" {
			t.Errorf("comments after carol left: %+v, want carol's first with her name", n)
		}
		var carolsView struct{ Project *struct{ ID string } }
		e.MustQuery(t, "carol", `query($p: ID!) { project(id: $p) { id } }`, map[string]any{"p": web.ID}, &carolsView)
		if carolsView.Project != nil {
			t.Errorf("carol still sees %q after removal", web.Name)
		}
	})

	t.Run("added member sees the project in every pattern", func(t *testing.T) {
		e.MustQuery(t, "alice", `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": web.ID, "u": "eve"}, nil)
		var got struct {
			User *struct {
				Name  string
				Email *string
			}
		}
		e.MustQuery(t, "alice", `{ user(id: "eve") { name email } }`, nil, &got)
		if got.User == nil || got.User.Name != "Eve Outsider" {
			t.Errorf("alice does not see eve after adding her: %+v", got.User)
		}
		eve := userOf(t, "eve", "eve")
		if len(eve.Projects.Nodes) != 1 || eve.Projects.Nodes[0].Name != web.Name {
			t.Errorf("eve's projects = %+v", eve.Projects.Nodes)
		}
		check(t, "eve's tasksByTag(urgent)", tagged(t, "eve", "urgent"), "Write the landing page copy",
			"Fix the broken signup form", "Migrate the blog")
		check(t, "eve's project.tasks", tasksOf(t, "eve", "TODO"), "Fix the broken signup form", "Set up analytics", "Launch announcement")
	})
}

// A backward page costs what the forward page of the same size costs: the
// same DynamoDB calls by operation (the Queries read the partitions the
// other way round with the same Limit), on every connection, for the first
// page and for a page from a cursor. Lists whose filter drops items are
// left out: how far each end reads on depends on where the dropped items
// lie.
func TestBackwardPagesReadWhatForwardPagesRead(t *testing.T) {
	e := testenv.New(t)
	w := patSeedPaging(t, e)
	count := func(l patList, vars map[string]any, n int, back bool) (map[string]int, patPage) {
		e.Calls.Reset()
		p := l.get(t, e, vars, n, back)
		return e.Calls.ByOp(), p
	}
	checked := 0
	for _, l := range w.lists() {
		if l.vars["status"] != nil || len(l.want) < 4 {
			continue
		}
		checked++
		t.Logf("%s", l.name)
		for _, n := range []int{1, 2, 20} {
			fwd, fp := count(l, map[string]any{"first": n}, n, false)
			back, bp := count(l, map[string]any{"last": n}, n, true)
			if !maps.Equal(fwd, back) {
				t.Errorf("%s, pages of %d: first page %v, last page %v", l.name, n, fwd, back)
			}
			if !fp.PageInfo.HasNextPage || !bp.PageInfo.HasPreviousPage {
				continue // one page holds the list
			}
			fwd, _ = count(l, map[string]any{"first": n, "after": fp.PageInfo.EndCursor}, n, false)
			back, _ = count(l, map[string]any{"last": n, "before": bp.PageInfo.StartCursor}, n, true)
			if !maps.Equal(fwd, back) {
				t.Errorf("%s, pages of %d: second page %v, second-to-last page %v", l.name, n, fwd, back)
			}
		}
	}
	if checked < 6 {
		t.Errorf("%d lists checked", checked)
	}
}

// Backward pages skip, like forward ones, what the viewer may no longer
// see, and are never empty while more remain: vic leaves (is removed from)
// a project whose tasks, assigned to ann, lie at both ends and in the
// middle of ann's assigned tasks by due date, around the few of a project
// vic still shares; vic's pages of ann's lists, read backwards, hold only
// what vic shares, with no empty page, and the projects too.
func TestPatternsBackwardPagesSkipAProjectTheViewerLeft(t *testing.T) {
	e := testenv.New(t)
	b := e.Store.NewDataset(testenv.Now)
	ann := b.User("ann", "Ann", "")
	vic := b.User("vic", "Vic", "")
	left := b.Project("Left", "", ann, vic)
	kept := b.Project("Kept", "", ann, vic)
	var want []*domain.Task
	var all []*domain.Task
	for i := range 24 {
		p := left
		if i%8 == 3 || i%8 == 4 {
			p = kept
		}
		task := b.Task(p, fmt.Sprintf("T%02d", i), domain.StatusTodo, testenv.DayPtr(i-12), ann)
		all = append(all, task)
		if p == kept {
			want = append(want, task)
		}
	}
	for i := range 6 {
		b.Project(fmt.Sprintf("Ann alone %d", i), "", ann)
	}
	e.MustImport(t, &b.D)
	if _, err := e.Store.RemoveProjectMember(t.Context(), "ann", left.ID, "vic"); err != nil {
		t.Fatal(err)
	}
	ids := func(ts []*domain.Task) []string {
		out := []string{}
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	xc := []string{"x", "c"}
	for _, l := range []patList{
		{name: "user(ann).assignedTasks for vic", viewer: "vic", query: patAssignedQ, path: xc, vars: map[string]any{"id": "ann"},
			want: ids(want), all: ids(all)},
		{name: "user(ann).overdueTasks for vic", viewer: "vic", query: patOverdueQ, path: xc,
			vars: map[string]any{"id": "ann", "asOf": testenv.Day(20)}, want: ids(want), all: ids(all)},
		{name: "user(ann).projects for vic", viewer: "vic", query: patProjectsQ, path: xc, vars: map[string]any{"id": "ann"},
			want: []string{kept.ID}},
	} {
		if !slices.Equal(l.pageThrough(t, e, 100, false), l.want) {
			t.Fatalf("%s: not the set-up's list", l.name)
		}
		for _, n := range []int{1, 2, 20} {
			if got := l.pageThrough(t, e, n, true); !slices.Equal(got, l.want) {
				t.Errorf("%s, pages of last %d:\n got  %v\n want %v", l.name, n, got, l.want)
			}
		}
	}
}
