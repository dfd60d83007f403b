package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Tests of every mutation of the contract (../shared/contract): what a
// success returns and what a follow-up query shows, and for every refusal
// the exact extensions.code and an unchanged table.

type mutVars = map[string]any

// The contract's error codes, spelled out here rather than taken from the
// implementation so that the tests check the contract.
var (
	mutNotFound        = []string{"NOT_FOUND"}
	mutForbidden       = []string{"FORBIDDEN"}
	mutBadInput        = []string{"BAD_USER_INPUT"}
	mutConflict        = []string{"CONFLICT"}
	mutUnauthenticated = []string{"UNAUTHENTICATED"}
	// A bad Date is BAD_USER_INPUT, or GRAPHQL_VALIDATION_FAILED where the
	// document or its variables are refused before execution.
	mutBadDate = []string{"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}
)

// mutMissingULID is a well-formed ULID that no seeded object has.
const mutMissingULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

var mutNowStr = testenv.Now.Format(time.RFC3339)

// ---- documents ----

const (
	mutProjectFields = `id name description createdAt owner { id } members { user { id } role }`
	mutTaskFields    = `id title description status dueDate version createdAt updatedAt project { id } assignee { id } tags { name }`

	mutUpdateProfile   = `mutation($input: UpdateProfileInput!) { updateProfile(input: $input) { id name email createdAt } }`
	mutCreateProject   = `mutation($input: CreateProjectInput!) { createProject(input: $input) { ` + mutProjectFields + ` } }`
	mutUpdateProject   = `mutation($input: UpdateProjectInput!) { updateProject(input: $input) { ` + mutProjectFields + ` } }`
	mutDeleteProject   = `mutation($id: ID!) { deleteProject(id: $id) }`
	mutAddMember       = `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { ` + mutProjectFields + ` } }`
	mutRemoveMember    = `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { ` + mutProjectFields + ` } }`
	mutCreateTask      = `mutation($input: CreateTaskInput!) { createTask(input: $input) { ` + mutTaskFields + ` } }`
	mutUpdateTask      = `mutation($input: UpdateTaskInput!) { updateTask(input: $input) { ` + mutTaskFields + ` } }`
	mutDeleteTask      = `mutation($id: ID!) { deleteTask(id: $id) }`
	mutAddComment      = `mutation($input: AddCommentInput!) { addComment(input: $input) { id body createdAt author { id name } task { id } } }`
	mutDeleteComment   = `mutation($id: ID!) { deleteComment(id: $id) }`
	mutQMe             = `{ me { id name email createdAt } }`
	mutQProject        = `query($id: ID!) { project(id: $id) { ` + mutProjectFields + ` } }`
	mutQProjectTaskIDs = `query($id: ID!) { project(id: $id) { tasks(first: 100) { nodes { id } } } }`
	mutQTask           = `query($id: ID!) { task(id: $id) { ` + mutTaskFields + ` } }`
	mutQNode           = `query($id: ID!) { node(id: $id) { id } }`
	mutQTaskComments   = `query($id: ID!) { task(id: $id) { comments(first: 100) { nodes { id body author { id name } } } } }`
	mutQTag            = `query($tag: String!) { tasksByTag(tag: $tag, first: 100) { nodes { id } } }`
	mutQMyLists        = `{ me { projects(first: 100) { nodes { id } } assignedTasks(first: 100) { nodes { id } }
		overdueTasks(first: 100) { nodes { id } } } }`
)

// ---- views of the responses ----

type mutUserView struct {
	ID        string
	Name      string
	Email     *string
	CreatedAt string
}

type mutMemberView struct {
	User struct{ ID string }
	Role string
}

type mutProjectView struct {
	ID          string
	Name        string
	Description *string
	CreatedAt   string
	Owner       struct{ ID string }
	Members     []mutMemberView
}

// roles maps each member's id to their role.
func (p mutProjectView) roles() map[string]string {
	out := map[string]string{}
	for _, m := range p.Members {
		out[m.User.ID] = m.Role
	}
	return out
}

type mutTaskView struct {
	ID          string
	Title       string
	Description *string
	Status      string
	DueDate     *string
	Version     int
	CreatedAt   string
	UpdatedAt   string
	Project     struct{ ID string }
	Assignee    *struct{ ID string }
	Tags        []struct{ Name string }
}

// tags returns the task's tag names, sorted (the contract gives no order).
func (v mutTaskView) tags() []string {
	out := []string{}
	for _, t := range v.Tags {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func (v mutTaskView) assignee() string {
	if v.Assignee == nil {
		return ""
	}
	return v.Assignee.ID
}

type mutIdConn struct {
	Nodes []struct{ ID string }
}

func (c mutIdConn) ids() []string {
	out := []string{}
	for _, n := range c.Nodes {
		out = append(out, n.ID)
	}
	return out
}

// ---- helpers ----

// mutSeeded returns a fresh env with the demo dataset (and eve) loaded.
func mutSeeded(t *testing.T) (*testenv.Env, *testenv.Seed) {
	t.Helper()
	e := testenv.New(t)
	return e, e.MustSeed(t)
}

// mutRefuse runs a request that must fail with exactly one error whose code is
// one of codes, return no data, and leave every item of the table as it was.
func mutRefuse(t *testing.T, e *testenv.Env, viewer string, codes []string, query string, v mutVars) testenv.Error {
	t.Helper()
	before := e.Dump(t)
	res := e.Query(t, viewer, query, v)
	after := e.Dump(t)
	if len(res.Errors) != 1 || !slices.Contains(codes, res.Errors[0].Code()) {
		t.Errorf("want exactly one error with code in %v, got %+v (data %s)\nvars: %.400s", codes, res.Errors, res.Data, testenv.JSON(v))
	}
	if !testenv.NullData(res.Data) {
		t.Errorf("a refused request returned data %s", res.Data)
	}
	if after != before {
		t.Errorf("a refused request changed the table:\n%s", mutDiffDump(before, after))
	}
	if len(res.Errors) == 0 {
		return testenv.Error{}
	}
	return res.Errors[0]
}

// mutDiffDump lists the lines (items) that differ between two dumps.
func mutDiffDump(before, after string) string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// mutWantOnlyExpiringLog checks that what is left of the items mentioning
// needles (a deleted project or task) is change log items that expire:
// the tombstones a sync gives offline clients until their tokens expire.
func mutWantOnlyExpiringLog(t *testing.T, e *testenv.Env, needles []string) {
	t.Helper()
	for _, it := range e.Items(t) {
		line := testenv.JSON(it)
		if !slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(line, n) }) {
			continue
		}
		if !strings.HasPrefix(fmt.Sprint(it["PK"]), "CHANGES#") || it["expiresAt"] == nil || it["GSI2PK"] == nil {
			t.Errorf("left after the cleanup, and not an expiring item of the change log: %s", line)
		}
	}
}

// mutNextSeq is a project item's line of a dump with its seq and
// projectSeq one further, and seqAt the change's time: a change of the
// project itself took a position of its change log.
func mutNextSeq(line string) string {
	for _, attr := range []string{"seq", "projectSeq"} {
		re := regexp.MustCompile(`"` + attr + `":"(\d+)"`)
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		line = re.ReplaceAllString(line, fmt.Sprintf(`"%s":"%d"`, attr, n+1))
	}
	// The change's time, set with seq (docs/caching.md), by the Env's clock.
	at := `"seqAt":"` + testenv.Now.Format(time.RFC3339Nano) + `"`
	if re := regexp.MustCompile(`"seqAt":"[^"]*"`); re.MatchString(line) {
		return re.ReplaceAllString(line, at)
	}
	return regexp.MustCompile(`("seq":"\d+")`).ReplaceAllString(line, "${1},"+at)
}

// mutLinesWithout returns the lines of a dump that mention none of needles.
func mutLinesWithout(dump string, needles []string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		if !slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(l, n) }) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// mutWithoutProfiles drops the profiles' lines of a dump: a deletion
// removes the project's copies from its members' profiles (their other
// copies stay: TestProfileCopiesFollowMemberships), which
// mutItemsMentioning checks.
func mutWithoutProfiles(dump string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		if !strings.HasPrefix(l, `{"PK":"USER#`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// mutItemsMentioning returns the items with an attribute value containing any
// of needles (a ULID in a PK, GSI key, id or reference).
func mutItemsMentioning(tb testing.TB, e *testenv.Env, needles []string) []string {
	tb.Helper()
	var out []string
	for _, it := range e.Items(tb) {
		line := testenv.JSON(it)
		for _, n := range needles {
			if strings.Contains(line, n) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// mutSkOf returns the sort keys of the items in a partition.
func mutSkOf(tb testing.TB, e *testenv.Env, pk string) []string {
	tb.Helper()
	var out []string
	for _, it := range e.Items(tb) {
		if it["PK"] == pk {
			out = append(out, fmt.Sprint(it["SK"]))
		}
	}
	slices.Sort(out)
	return out
}

func mutItem(tb testing.TB, e *testenv.Env, pk, sk string) map[string]any {
	tb.Helper()
	for _, it := range e.Items(tb) {
		if it["PK"] == pk && it["SK"] == sk {
			return it
		}
	}
	return nil
}

func mutGetTask(t *testing.T, e *testenv.Env, viewer, id string) *mutTaskView {
	t.Helper()
	var got struct{ Task *mutTaskView }
	e.MustQuery(t, viewer, mutQTask, mutVars{"id": id}, &got)
	return got.Task
}

func mutGetProject(t *testing.T, e *testenv.Env, viewer, id string) *mutProjectView {
	t.Helper()
	var got struct{ Project *mutProjectView }
	e.MustQuery(t, viewer, mutQProject, mutVars{"id": id}, &got)
	return got.Project
}

func mutNodeExists(t *testing.T, e *testenv.Env, viewer, id string) bool {
	t.Helper()
	var got struct{ Node *struct{ ID string } }
	e.MustQuery(t, viewer, mutQNode, mutVars{"id": id}, &got)
	return got.Node != nil
}

func mutProjectTaskIDs(t *testing.T, e *testenv.Env, viewer, projectID string) []string {
	t.Helper()
	var got struct{ Project *struct{ Tasks mutIdConn } }
	e.MustQuery(t, viewer, mutQProjectTaskIDs, mutVars{"id": projectID}, &got)
	if got.Project == nil {
		t.Fatalf("%s cannot see project %s", viewer, projectID)
	}
	return got.Project.Tasks.ids()
}

func mutTagTaskIDs(t *testing.T, e *testenv.Env, viewer, tag string) []string {
	t.Helper()
	var got struct{ TasksByTag mutIdConn }
	e.MustQuery(t, viewer, mutQTag, mutVars{"tag": tag}, &got)
	return got.TasksByTag.ids()
}

type mutMyLists struct {
	Projects, Assigned, Overdue []string
}

func mutLists(t *testing.T, e *testenv.Env, viewer string) mutMyLists {
	t.Helper()
	var got struct {
		Me struct{ Projects, AssignedTasks, OverdueTasks mutIdConn }
	}
	e.MustQuery(t, viewer, mutQMyLists, nil, &got)
	return mutMyLists{got.Me.Projects.ids(), got.Me.AssignedTasks.ids(), got.Me.OverdueTasks.ids()}
}

func mutCommentIDs(t *testing.T, e *testenv.Env, viewer, taskID string) []string {
	t.Helper()
	var got struct {
		Task *struct{ Comments mutIdConn }
	}
	e.MustQuery(t, viewer, mutQTaskComments, mutVars{"id": taskID}, &got)
	if got.Task == nil {
		t.Fatalf("%s cannot see task %s", viewer, taskID)
	}
	return got.Task.Comments.ids()
}

// mutIds maps seeded task titles to their ids.
func mutIds(s *testenv.Seed, titles ...string) []string {
	out := []string{}
	for _, title := range titles {
		out = append(out, s.Task(title).ID)
	}
	return out
}

// mutCommentOf returns the first seeded comment by author on the task.
func mutCommentOf(s *testenv.Seed, title, author string) *domain.Comment {
	task := s.Task(title)
	for _, c := range s.Comments {
		if c.TaskID == task.ID && c.AuthorID == author {
			return c
		}
	}
	panic("no comment by " + author + " on " + title)
}

func mutDoUpdateTask(t *testing.T, e *testenv.Env, viewer string, input mutVars) mutTaskView {
	t.Helper()
	var got struct{ UpdateTask mutTaskView }
	e.MustQuery(t, viewer, mutUpdateTask, mutVars{"input": input}, &got)
	return got.UpdateTask
}

func mutWantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func mutWantNoneOf(t *testing.T, what string, got, banned []string) {
	t.Helper()
	for _, id := range got {
		if slices.Contains(banned, id) {
			t.Errorf("%s still lists %s: %v", what, id, got)
		}
	}
}

// mutRefusal is one request that must be refused without changing anything.
type mutRefusal struct {
	name   string
	viewer string
	codes  []string
	query  string
	vars   mutVars
}

func mutRunRefusals(t *testing.T, e *testenv.Env, cases []mutRefusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mutRefuse(t, e, c.viewer, c.codes, c.query, c.vars)
		})
	}
}

// mutTwentyOneTags returns 21 distinct valid tags.
func mutTwentyOneTags() []string {
	out := make([]string, 21)
	for i := range out {
		out[i] = fmt.Sprintf("tag-%02d", i)
	}
	return out
}

// ---- updateProfile ----

func TestMutationUpdateProfile(t *testing.T) {
	type result struct{ UpdateProfile mutUserView }
	type meResult struct{ Me mutUserView }

	t.Run("first call creates the profile with the token's sub as id", func(t *testing.T) {
		e, _ := mutSeeded(t)
		mutRefuse(t, e, "nina", mutNotFound, mutQMe, nil)
		var got result
		e.MustQuery(t, "nina", mutUpdateProfile, mutVars{"input": mutVars{"name": "Nina Novak", "email": "nina@example.com"}}, &got)
		want := mutUserView{ID: "nina", Name: "Nina Novak", Email: testenv.Ptr("nina@example.com"), CreatedAt: mutNowStr}
		if !reflect.DeepEqual(got.UpdateProfile, want) {
			t.Errorf("updateProfile = %s, want %s", testenv.JSON(got.UpdateProfile), testenv.JSON(want))
		}
		var me meResult
		e.MustQuery(t, "nina", mutQMe, nil, &me)
		if !reflect.DeepEqual(me.Me, want) {
			t.Errorf("me = %s, want %s", testenv.JSON(me.Me), testenv.JSON(want))
		}
		// The new profile lets nina use the other mutations.
		var p struct{ CreateProject mutProjectView }
		e.MustQuery(t, "nina", mutCreateProject, mutVars{"input": mutVars{"name": "Nina's"}}, &p)
		if p.CreateProject.Owner.ID != "nina" {
			t.Errorf("createProject owner = %q, want nina", p.CreateProject.Owner.ID)
		}
	})

	t.Run("later call updates the name and keeps createdAt and an email left out", func(t *testing.T) {
		e, _ := mutSeeded(t)
		e.Store.Now = func() time.Time { return testenv.Now.Add(48 * time.Hour) }
		var got result
		e.MustQuery(t, "alice", mutUpdateProfile, mutVars{"input": mutVars{"name": "Alice Renamed"}}, &got)
		want := mutUserView{ID: "alice", Name: "Alice Renamed", Email: testenv.Ptr("alice@example.com"), CreatedAt: mutNowStr}
		if !reflect.DeepEqual(got.UpdateProfile, want) {
			t.Errorf("updateProfile = %s, want %s", testenv.JSON(got.UpdateProfile), testenv.JSON(want))
		}
		var me meResult
		e.MustQuery(t, "alice", mutQMe, nil, &me)
		if !reflect.DeepEqual(me.Me, want) {
			t.Errorf("me = %s, want %s", testenv.JSON(me.Me), testenv.JSON(want))
		}
		// Others see the new name too.
		var u struct{ User *mutUserView }
		e.MustQuery(t, "bob", `query { user(id: "alice") { id name email createdAt } }`, nil, &u)
		if u.User == nil || u.User.Name != "Alice Renamed" || u.User.Email != nil {
			t.Errorf("user(alice) for bob = %s, want name Alice Renamed and no email", testenv.JSON(u.User))
		}
	})

	t.Run("a new email replaces the old one", func(t *testing.T) {
		e, _ := mutSeeded(t)
		var got result
		e.MustQuery(t, "alice", mutUpdateProfile, mutVars{"input": mutVars{"name": "Alice Example", "email": "a@example.org"}}, &got)
		var me meResult
		e.MustQuery(t, "alice", mutQMe, nil, &me)
		for _, u := range []mutUserView{got.UpdateProfile, me.Me} {
			if u.Email == nil || *u.Email != "a@example.org" {
				t.Errorf("email = %s, want a@example.org", testenv.JSON(u.Email))
			}
		}
	})

	t.Run("email null clears it", func(t *testing.T) {
		e, _ := mutSeeded(t)
		var got result
		e.MustQuery(t, "alice", mutUpdateProfile, mutVars{"input": mutVars{"name": "Alice Example", "email": nil}}, &got)
		var me meResult
		e.MustQuery(t, "alice", mutQMe, nil, &me)
		for _, u := range []mutUserView{got.UpdateProfile, me.Me} {
			if u.Email != nil || u.Name != "Alice Example" {
				t.Errorf("after email: null got %s, want the name kept and no email", testenv.JSON(u))
			}
		}
		if it := mutItem(t, e, "USER#alice", "PROFILE"); it == nil || it["email"] != nil {
			t.Errorf("stored profile = %v, want one without email", it)
		}
	})

	t.Run("a name of 200 characters is accepted", func(t *testing.T) {
		e, _ := mutSeeded(t)
		n := strings.Repeat("n", 200)
		var got result
		e.MustQuery(t, "alice", mutUpdateProfile, mutVars{"input": mutVars{"name": n}}, &got)
		if got.UpdateProfile.Name != n {
			t.Errorf("name has %d characters, want 200", len(got.UpdateProfile.Name))
		}
	})

	e, _ := mutSeeded(t)
	var cases []mutRefusal
	for _, viewer := range []string{"alice", "nina"} { // an existing profile and a first call
		bad := []struct {
			name  string
			input mutVars
		}{
			{"empty name", mutVars{"name": ""}},
			{"white-space name", mutVars{"name": " \t\n "}},
			{"201-character name", mutVars{"name": strings.Repeat("n", 201)}},
			{"email without @", mutVars{"name": "X", "email": "alice.example.com"}},
			{"email with two @", mutVars{"name": "X", "email": "a@b@example.com"}},
			{"email starting with @", mutVars{"name": "X", "email": "@example.com"}},
			{"email ending with @", mutVars{"name": "X", "email": "alice@"}},
			{"email with a space", mutVars{"name": "X", "email": "al ice@example.com"}},
			{"255-character email", mutVars{"name": "X", "email": strings.Repeat("a", 243) + "@example.com"}},
		}
		for _, b := range bad {
			cases = append(cases, mutRefusal{viewer + ": " + b.name, viewer, mutBadInput, mutUpdateProfile, mutVars{"input": b.input}})
		}
	}
	cases = append(cases, mutRefusal{"no token", "", mutUnauthenticated, mutUpdateProfile, mutVars{"input": mutVars{"name": "X"}}})
	mutRunRefusals(t, e, cases)
}

// ---- createProject ----

func TestMutationCreateProject(t *testing.T) {
	type result struct{ CreateProject mutProjectView }

	t.Run("the viewer becomes the owner and the only member", func(t *testing.T) {
		e, s := mutSeeded(t)
		var got result
		e.MustQuery(t, "alice", mutCreateProject, mutVars{"input": mutVars{"name": "Garden", "description": "Plant things"}}, &got)
		p := got.CreateProject
		if !strings.HasPrefix(p.ID, "prj#") || slices.ContainsFunc(s.Projects, func(q *domain.Project) bool { return q.ID == p.ID }) {
			t.Errorf("id = %q, want a new prj# id", p.ID)
		}
		if p.Name != "Garden" || p.Description == nil || *p.Description != "Plant things" || p.Owner.ID != "alice" ||
			p.CreatedAt != mutNowStr || !reflect.DeepEqual(p.roles(), map[string]string{"alice": "OWNER"}) {
			t.Errorf("createProject = %s", testenv.JSON(p))
		}
		if again := mutGetProject(t, e, "alice", p.ID); again == nil || !reflect.DeepEqual(*again, p) {
			t.Errorf("project(id) = %s, want %s", testenv.JSON(again), testenv.JSON(p))
		}
		if l := mutLists(t, e, "alice"); len(l.Projects) != 3 || l.Projects[0] != p.ID {
			t.Errorf("me.projects = %v, want the new %s first (newest first)", l.Projects, p.ID)
		}
		if got := mutProjectTaskIDs(t, e, "alice", p.ID); len(got) != 0 {
			t.Errorf("new project has tasks %v", got)
		}
		if other := mutGetProject(t, e, "bob", p.ID); other != nil {
			t.Errorf("bob, no member, sees the project: %s", testenv.JSON(other))
		}
	})

	t.Run("description is optional and a 200-character name is accepted", func(t *testing.T) {
		e, _ := mutSeeded(t)
		n := strings.Repeat("p", 200)
		var got result
		e.MustQuery(t, "eve", mutCreateProject, mutVars{"input": mutVars{"name": n}}, &got)
		if got.CreateProject.Name != n || got.CreateProject.Description != nil || got.CreateProject.Owner.ID != "eve" {
			t.Errorf("createProject = %s", testenv.JSON(got.CreateProject))
		}
	})

	e, _ := mutSeeded(t)
	in := func(name string, desc any) mutVars {
		v := mutVars{"name": name}
		if desc != nil {
			v["description"] = desc
		}
		return mutVars{"input": v}
	}
	mutRunRefusals(t, e, []mutRefusal{
		{"viewer without a profile", "nobody", mutNotFound, mutCreateProject, in("Mine", nil)},
		{"no token", "", mutUnauthenticated, mutCreateProject, in("Mine", nil)},
		{"empty name", "alice", mutBadInput, mutCreateProject, in("", nil)},
		{"white-space name", "alice", mutBadInput, mutCreateProject, in("   ", nil)},
		{"201-character name", "alice", mutBadInput, mutCreateProject, in(strings.Repeat("p", 201), nil)},
		{"10,001-character description", "alice", mutBadInput, mutCreateProject, in("Big", strings.Repeat("d", 10_001))},
	})
}

// ---- updateProject ----

func TestMutationUpdateProject(t *testing.T) {
	type result struct{ UpdateProject mutProjectView }

	cases := []struct {
		name     string
		input    func(id string) mutVars
		wantName string
		wantDesc *string
	}{
		{"owner changes name and description", func(id string) mutVars {
			return mutVars{"id": id, "name": "Website 2.0", "description": "Relaunched"}
		}, "Website 2.0", testenv.Ptr("Relaunched")},
		{"a description left out stays", func(id string) mutVars {
			return mutVars{"id": id, "name": "Only the name"}
		}, "Only the name", testenv.Ptr("New marketing site and blog")},
		{"a name left out stays", func(id string) mutVars {
			return mutVars{"id": id, "description": "Only the description"}
		}, "Website relaunch", testenv.Ptr("Only the description")},
		{"description null clears it", func(id string) mutVars {
			return mutVars{"id": id, "description": nil}
		}, "Website relaunch", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, s := mutSeeded(t)
			web := s.Project("Website relaunch")
			var got result
			e.MustQuery(t, "alice", mutUpdateProject, mutVars{"input": c.input(web.ID)}, &got)
			for who, p := range map[string]*mutProjectView{"updateProject": &got.UpdateProject, "project(id) for bob": mutGetProject(t, e, "bob", web.ID)} {
				if p == nil {
					t.Fatalf("%s = null", who)
				}
				if p.ID != web.ID || p.Name != c.wantName || !reflect.DeepEqual(p.Description, c.wantDesc) ||
					p.Owner.ID != "alice" || len(p.Members) != 3 {
					t.Errorf("%s = %s, want name %q, description %s", who, testenv.JSON(p), c.wantName, testenv.JSON(c.wantDesc))
				}
			}
		})
	}

	e, s := mutSeeded(t)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	in := func(fields mutVars) mutVars { return mutVars{"input": fields} }
	mutRunRefusals(t, e, []mutRefusal{
		{"member who is not the owner", "bob", mutForbidden, mutUpdateProject, in(mutVars{"id": web, "name": "Mine"})},
		{"another member who is not the owner", "carol", mutForbidden, mutUpdateProject, in(mutVars{"id": web, "description": nil})},
		{"user in no project", "eve", mutNotFound, mutUpdateProject, in(mutVars{"id": web, "name": "Mine"})},
		{"owner of other projects but no member", "alice", mutNotFound, mutUpdateProject, in(mutVars{"id": lab, "name": "Mine"})},
		{"viewer without a profile", "nobody", mutNotFound, mutUpdateProject, in(mutVars{"id": web, "name": "Mine"})},
		{"project that does not exist", "alice", mutNotFound, mutUpdateProject, in(mutVars{"id": "prj#" + mutMissingULID, "name": "X"})},
		{"malformed id", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": "prj#nope", "name": "X"})},
		{"task id as project id", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": s.Task("Migrate the blog").ID, "name": "X"})},
		{"empty name", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": web, "name": ""})},
		{"white-space name", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": web, "name": " \t "})},
		{"201-character name", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": web, "name": strings.Repeat("p", 201)})},
		{"name null", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": web, "name": nil})},
		{"10,001-character description", "alice", mutBadInput, mutUpdateProject, in(mutVars{"id": web, "description": strings.Repeat("d", 10_001)})},
	})
}

// ---- deleteProject ----

func TestMutationDeleteProject(t *testing.T) {
	t.Run("the project and everything under it vanish at once and cleanup removes every item", func(t *testing.T) {
		e, s := mutSeeded(t)
		web := s.Project("Website relaunch")
		var webTasks, needles []string
		needles = append(needles, testenv.ULIDOf(web.ID))
		for _, task := range s.TasksOf(web.ID) {
			webTasks = append(webTasks, task.ID)
			needles = append(needles, testenv.ULIDOf(task.ID))
		}
		comment := mutCommentOf(s, "Write the landing page copy", "bob").ID
		before := e.Dump(t)

		var got struct{ DeleteProject string }
		e.MustQuery(t, "alice", mutDeleteProject, mutVars{"id": web.ID}, &got)
		if got.DeleteProject != web.ID {
			t.Errorf("deleteProject = %q, want %q", got.DeleteProject, web.ID)
		}

		// At once, before any cleanup, for the owner and for the members.
		for _, viewer := range []string{"alice", "bob", "carol"} {
			if p := mutGetProject(t, e, viewer, web.ID); p != nil {
				t.Errorf("%s: project(id) = %s, want null", viewer, testenv.JSON(p))
			}
			for _, id := range append(slices.Clone(webTasks), web.ID, comment) {
				if mutNodeExists(t, e, viewer, id) {
					t.Errorf("%s: node(%s) is not null", viewer, id)
				}
			}
			for _, id := range webTasks {
				if task := mutGetTask(t, e, viewer, id); task != nil {
					t.Errorf("%s: task(%s) = %s, want null", viewer, id, testenv.JSON(task))
				}
			}
			for _, tag := range []string{"copy", "urgent", "bug", "frontend", "design", "backend"} {
				mutWantNoneOf(t, viewer+": tasksByTag("+tag+")", mutTagTaskIDs(t, e, viewer, tag), webTasks)
			}
			l := mutLists(t, e, viewer)
			mutWantNoneOf(t, viewer+": me.projects", l.Projects, []string{web.ID})
			mutWantNoneOf(t, viewer+": me.assignedTasks", l.Assigned, webTasks)
			mutWantNoneOf(t, viewer+": me.overdueTasks", l.Overdue, webTasks)
		}
		// What lies elsewhere stays visible.
		l := mutLists(t, e, "alice")
		mutWantIDs(t, "alice: me.projects", l.Projects, []string{s.Project("Mobile app").ID})
		mutWantIDs(t, "alice: me.assignedTasks", l.Assigned, mutIds(s, "App store screenshots", "Crash on start on Android 12"))
		mutWantIDs(t, "alice: me.overdueTasks", l.Overdue, mutIds(s, "Crash on start on Android 12"))
		mutWantIDs(t, "alice: tasksByTag(urgent)", mutTagTaskIDs(t, e, "alice", "urgent"), mutIds(s, "Crash on start on Android 12"))
		mutWantIDs(t, "carol: tasksByTag(copy)", mutTagTaskIDs(t, e, "carol", "copy"), mutIds(s, "Write up results"))
		// Alice and carol shared only the deleted project.
		var u struct{ User *mutUserView }
		e.MustQuery(t, "alice", `query { user(id: "carol") { id name } }`, nil, &u)
		if u.User != nil {
			t.Errorf("alice still sees carol, who shared only the deleted project: %s", testenv.JSON(u.User))
		}
		// Nothing more can be done to it or to anything under it.
		t1 := s.Task("Write the landing page copy").ID
		for _, r := range []mutRefusal{
			{"deleteProject again", "alice", mutNotFound, mutDeleteProject, mutVars{"id": web.ID}},
			{"updateProject", "alice", mutNotFound, mutUpdateProject, mutVars{"input": mutVars{"id": web.ID, "name": "Back"}}},
			{"addProjectMember", "alice", mutNotFound, mutAddMember, mutVars{"p": web.ID, "u": "dave"}},
			{"removeProjectMember", "alice", mutNotFound, mutRemoveMember, mutVars{"p": web.ID, "u": "bob"}},
			{"createTask", "bob", mutNotFound, mutCreateTask, mutVars{"input": mutVars{"projectId": web.ID, "title": "Late"}}},
			{"updateTask", "bob", mutNotFound, mutUpdateTask, mutVars{"input": mutVars{"id": t1, "title": "Late"}}},
			{"deleteTask", "bob", mutNotFound, mutDeleteTask, mutVars{"id": t1}},
			{"addComment", "bob", mutNotFound, mutAddComment, mutVars{"input": mutVars{"taskId": t1, "body": "Late"}}},
			{"deleteComment", "bob", mutNotFound, mutDeleteComment, mutVars{"id": comment}},
		} {
			t.Run("then "+r.name, func(t *testing.T) { mutRefuse(t, e, r.viewer, r.codes, r.query, r.vars) })
		}

		n, err := e.Store.RunCleanup(context.Background())
		if err != nil || n < 1 {
			t.Fatalf("RunCleanup = %d, %v; want at least one job done", n, err)
		}
		mutWantOnlyExpiringLog(t, e, needles)
		e.MustSweepExpired(t)
		if left := mutItemsMentioning(t, e, needles); len(left) > 0 {
			t.Errorf("after cleanup %d items of the project remain:\n%s", len(left), strings.Join(left, "\n"))
		}
		if jobs := mutSkOf(t, e, "CLEANUP"); len(jobs) > 0 {
			t.Errorf("cleanup jobs left: %v", jobs)
		}
		if after, want := mutWithoutProfiles(e.Dump(t)), mutWithoutProfiles(mutLinesWithout(before, needles)); after != want {
			t.Errorf("cleanup touched items of other projects:\n%s", mutDiffDump(want, after))
		}
	})

	t.Run("cleanup removes a project larger than one batch", func(t *testing.T) {
		e := testenv.New(t)
		b := e.Store.NewDataset(testenv.Now)
		owner := b.User("olga", "Olga Owner", "")
		var members []*domain.User
		for i := range 3 {
			members = append(members, b.User(fmt.Sprintf("m%d", i), fmt.Sprintf("Member %d", i), ""))
		}
		big := b.Project("Big", "", owner, members...)
		keep := b.Project("Kept", "", owner, members[0])
		kept := b.Task(keep, "Stays", domain.StatusTodo, nil, members[0], "alpha")
		b.Comment(kept, owner, "stays too")
		needles := []string{testenv.ULIDOf(big.ID)}
		for i := range 40 {
			due := domain.DateOf(testenv.Now).AddDays(i - 20)
			task := b.Task(big, fmt.Sprintf("Task %02d", i), domain.StatusTodo, &due, members[i%3], "alpha", fmt.Sprintf("t%d", i%5))
			needles = append(needles, testenv.ULIDOf(task.ID))
			for j := range i % 3 {
				b.Comment(task, owner, fmt.Sprintf("comment %d", j))
			}
			if i == 0 {
				for j := range 30 {
					b.Comment(task, members[0], fmt.Sprintf("many %d", j))
				}
			}
		}
		e.MustImport(t, &b.D)
		before := e.Dump(t)
		e.MustQuery(t, "olga", mutDeleteProject, mutVars{"id": big.ID}, nil)
		if p := mutGetProject(t, e, "m1", big.ID); p != nil {
			t.Errorf("a member still sees the project")
		}
		mutWantIDs(t, "m0: me.assignedTasks", mutLists(t, e, "m0").Assigned, []string{kept.ID})
		mutWantIDs(t, "olga: tasksByTag(alpha)", mutTagTaskIDs(t, e, "olga", "alpha"), []string{kept.ID})
		if _, err := e.Store.RunCleanup(context.Background()); err != nil {
			t.Fatalf("RunCleanup: %v", err)
		}
		mutWantOnlyExpiringLog(t, e, needles)
		e.MustSweepExpired(t)
		if left := mutItemsMentioning(t, e, needles); len(left) > 0 {
			t.Errorf("after cleanup %d items of the project remain, e.g. %s", len(left), left[0])
		}
		if jobs := mutSkOf(t, e, "CLEANUP"); len(jobs) > 0 {
			t.Errorf("cleanup jobs left: %v", jobs)
		}
		if after, want := mutWithoutProfiles(e.Dump(t)), mutWithoutProfiles(mutLinesWithout(before, needles)); after != want {
			t.Errorf("cleanup touched items of another project:\n%s", mutDiffDump(want, after))
		}
	})

	e, s := mutSeeded(t)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	mutRunRefusals(t, e, []mutRefusal{
		{"member who is not the owner", "bob", mutForbidden, mutDeleteProject, mutVars{"id": web}},
		{"another member who is not the owner", "carol", mutForbidden, mutDeleteProject, mutVars{"id": web}},
		{"user in no project", "eve", mutNotFound, mutDeleteProject, mutVars{"id": web}},
		{"owner of other projects but no member", "alice", mutNotFound, mutDeleteProject, mutVars{"id": lab}},
		{"viewer without a profile", "nobody", mutNotFound, mutDeleteProject, mutVars{"id": web}},
		{"project that does not exist", "alice", mutNotFound, mutDeleteProject, mutVars{"id": "prj#" + mutMissingULID}},
		{"malformed id", "alice", mutBadInput, mutDeleteProject, mutVars{"id": "prj#nope"}},
		{"task id as project id", "alice", mutBadInput, mutDeleteProject, mutVars{"id": s.Task("Migrate the blog").ID}},
	})
}

// ---- addProjectMember ----

func TestMutationAddProjectMember(t *testing.T) {
	type result struct{ AddProjectMember mutProjectView }

	t.Run("owner adds a user with a profile who then sees the project", func(t *testing.T) {
		e, s := mutSeeded(t)
		web := s.Project("Website relaunch").ID
		if p := mutGetProject(t, e, "dave", web); p != nil {
			t.Fatalf("dave sees web before being added")
		}
		var got result
		e.MustQuery(t, "alice", mutAddMember, mutVars{"p": web, "u": "dave"}, &got)
		want := map[string]string{"alice": "OWNER", "bob": "MEMBER", "carol": "MEMBER", "dave": "MEMBER"}
		if got.AddProjectMember.ID != web || !reflect.DeepEqual(got.AddProjectMember.roles(), want) {
			t.Errorf("addProjectMember = %s, want members %v", testenv.JSON(got.AddProjectMember), want)
		}
		p := mutGetProject(t, e, "dave", web)
		if p == nil || !reflect.DeepEqual(p.roles(), want) {
			t.Fatalf("project(id) for dave = %s, want members %v", testenv.JSON(p), want)
		}
		if n := len(mutProjectTaskIDs(t, e, "dave", web)); n != 6 {
			t.Errorf("dave sees %d tasks of web, want 6", n)
		}
		if l := mutLists(t, e, "dave"); !slices.Contains(l.Projects, web) {
			t.Errorf("dave's me.projects = %v, want it to list %s", l.Projects, web)
		}
		// dave is now assignable.
		var ct struct{ CreateTask mutTaskView }
		e.MustQuery(t, "alice", mutCreateTask, mutVars{"input": mutVars{"projectId": web, "title": "For dave", "assigneeId": "dave"}}, &ct)
		if ct.CreateTask.assignee() != "dave" {
			t.Errorf("assignee = %q, want dave", ct.CreateTask.assignee())
		}
	})

	for _, c := range []struct{ name, user, role string }{
		{"adding an existing member succeeds and changes nothing", "bob", "MEMBER"},
		{"adding the owner succeeds and changes nothing", "alice", "OWNER"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, s := mutSeeded(t)
			web := s.Project("Website relaunch").ID
			before := e.Dump(t)
			var got result
			e.MustQuery(t, "alice", mutAddMember, mutVars{"p": web, "u": c.user}, &got)
			if roles := got.AddProjectMember.roles(); len(roles) != 3 || roles[c.user] != c.role {
				t.Errorf("members = %v, want 3 with %s as %s", roles, c.user, c.role)
			}
			if after := e.Dump(t); after != before {
				t.Errorf("the table changed:\n%s", mutDiffDump(before, after))
			}
		})
	}

	e, s := mutSeeded(t)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	mutRunRefusals(t, e, []mutRefusal{
		{"member who is not the owner", "bob", mutForbidden, mutAddMember, mutVars{"p": web, "u": "eve"}},
		{"another member who is not the owner", "carol", mutForbidden, mutAddMember, mutVars{"p": web, "u": "dave"}},
		{"user in no project adding themself", "eve", mutNotFound, mutAddMember, mutVars{"p": web, "u": "eve"}},
		{"owner of other projects but no member", "alice", mutNotFound, mutAddMember, mutVars{"p": lab, "u": "eve"}},
		{"viewer without a profile", "nobody", mutNotFound, mutAddMember, mutVars{"p": web, "u": "eve"}},
		{"user without a profile", "alice", mutNotFound, mutAddMember, mutVars{"p": web, "u": "nobody"}},
		{"project that does not exist", "alice", mutNotFound, mutAddMember, mutVars{"p": "prj#" + mutMissingULID, "u": "eve"}},
		{"malformed project id", "alice", mutBadInput, mutAddMember, mutVars{"p": "prj#nope", "u": "eve"}},
		{"malformed user id", "alice", mutBadInput, mutAddMember, mutVars{"p": web, "u": "e#ve"}},
		{"empty user id", "alice", mutBadInput, mutAddMember, mutVars{"p": web, "u": ""}},
	})
}

// ---- removeProjectMember ----

func TestMutationRemoveProjectMember(t *testing.T) {
	type result struct{ RemoveProjectMember mutProjectView }

	t.Run("removed member's tasks in the project are unassigned, elsewhere kept, and the project is hidden from them", func(t *testing.T) {
		e, s := mutSeeded(t)
		web := s.Project("Website relaunch").ID
		t2, dark := s.Task("Fix the broken signup form").ID, s.Task("Dark mode").ID
		var got result
		e.MustQuery(t, "alice", mutRemoveMember, mutVars{"p": web, "u": "bob"}, &got)
		want := map[string]string{"alice": "OWNER", "carol": "MEMBER"}
		if got.RemoveProjectMember.ID != web || !reflect.DeepEqual(got.RemoveProjectMember.roles(), want) {
			t.Errorf("removeProjectMember = %s, want members %v", testenv.JSON(got.RemoveProjectMember), want)
		}
		if p := mutGetProject(t, e, "alice", web); p == nil || !reflect.DeepEqual(p.roles(), want) {
			t.Errorf("project(id) = %s, want members %v", testenv.JSON(p), want)
		}
		if task := mutGetTask(t, e, "alice", t2); task == nil || task.Assignee != nil {
			t.Errorf("bob's task in web = %s, want it unassigned", testenv.JSON(task))
		}
		// Other assignees in the project stay.
		for title, who := range map[string]string{"Write the landing page copy": "alice", "Pick a colour palette": "carol"} {
			if task := mutGetTask(t, e, "alice", s.Task(title).ID); task == nil || task.assignee() != who {
				t.Errorf("%q assignee = %s, want %s", title, testenv.JSON(task), who)
			}
		}
		// bob's task in another project stays his.
		if task := mutGetTask(t, e, "bob", dark); task == nil || task.assignee() != "bob" {
			t.Errorf("bob's task in the app = %s, want it still assigned to bob", testenv.JSON(task))
		}
		// bob no longer sees web or anything in it.
		if p := mutGetProject(t, e, "bob", web); p != nil {
			t.Errorf("bob still sees the project: %s", testenv.JSON(p))
		}
		if task := mutGetTask(t, e, "bob", t2); task != nil {
			t.Errorf("bob still sees a task of the project: %s", testenv.JSON(task))
		}
		if mutNodeExists(t, e, "bob", web) {
			t.Errorf("node(project) for bob is not null")
		}
		l := mutLists(t, e, "bob")
		mutWantIDs(t, "bob: me.projects", l.Projects, []string{s.Project("Mobile app").ID})
		mutWantIDs(t, "bob: me.assignedTasks", l.Assigned, []string{dark})
		mutWantIDs(t, "bob: tasksByTag(urgent)", mutTagTaskIDs(t, e, "bob", "urgent"), mutIds(s, "Crash on start on Android 12"))
		// bob's comment still shows its author.
		var c struct {
			Task struct {
				Comments struct {
					Nodes []struct {
						Author struct{ ID, Name string }
					}
				}
			}
		}
		e.MustQuery(t, "alice", mutQTaskComments, mutVars{"id": s.Task("Write the landing page copy").ID}, &c)
		if n := c.Task.Comments.Nodes; len(n) != 2 || n[1].Author.Name != "Bob Builder" {
			t.Errorf("comments = %s, want bob's with his name", testenv.JSON(n))
		}
		if it := mutItem(t, e, "PROJECT#"+testenv.ULIDOf(web), "MEMBER#bob"); it != nil {
			t.Errorf("membership item remains: %v", it)
		}
		// Nor may bob change anything in it any more.
		t1 := s.Task("Write the landing page copy").ID
		for _, r := range []mutRefusal{
			{"createTask", "bob", mutNotFound, mutCreateTask, mutVars{"input": mutVars{"projectId": web, "title": "Sneaky"}}},
			{"updateTask", "bob", mutNotFound, mutUpdateTask, mutVars{"input": mutVars{"id": t1, "title": "Sneaky"}}},
			{"deleteTask", "bob", mutNotFound, mutDeleteTask, mutVars{"id": t1}},
			{"addComment", "bob", mutNotFound, mutAddComment, mutVars{"input": mutVars{"taskId": t1, "body": "Sneaky"}}},
			{"assigning bob", "alice", mutBadInput, mutUpdateTask, mutVars{"input": mutVars{"id": t1, "assigneeId": "bob"}}},
		} {
			t.Run("then "+r.name, func(t *testing.T) { mutRefuse(t, e, r.viewer, r.codes, r.query, r.vars) })
		}
	})

	t.Run("a member with more tasks than one transaction holds is removed and every task unassigned", func(t *testing.T) {
		e := testenv.New(t)
		b := e.Store.NewDataset(testenv.Now)
		owner, busy := b.User("olga", "Olga Owner", ""), b.User("max", "Max Busy", "")
		big := b.Project("Big", "", owner, busy)
		other := b.Project("Other", "", owner, busy)
		stays := b.Task(other, "Elsewhere", domain.StatusTodo, nil, busy)
		for i := range 95 {
			status := domain.StatusTodo
			if i%4 == 0 {
				status = domain.StatusDone
			}
			due := domain.DateOf(testenv.Now).AddDays(i - 50)
			b.Task(big, fmt.Sprintf("Task %02d", i), status, &due, busy, "alpha")
		}
		e.MustImport(t, &b.D)
		e.MustQuery(t, "olga", mutRemoveMember, mutVars{"p": big.ID, "u": "max"}, nil)
		var got struct {
			Project struct {
				Members []mutMemberView
				Tasks   struct {
					Nodes []struct{ Assignee *struct{ ID string } }
				}
			}
		}
		e.MustQuery(t, "olga", `query($id: ID!) { project(id: $id) { members { user { id } role }
			tasks(first: 100) { nodes { assignee { id } } } } }`, mutVars{"id": big.ID}, &got)
		if n := len(got.Project.Tasks.Nodes); n != 95 {
			t.Fatalf("project has %d tasks, want 95", n)
		}
		assigned := 0
		for _, n := range got.Project.Tasks.Nodes {
			if n.Assignee != nil {
				assigned++
			}
		}
		if assigned != 0 || len(got.Project.Members) != 1 {
			t.Errorf("%d tasks still assigned and %d members, want 0 and 1", assigned, len(got.Project.Members))
		}
		mutWantIDs(t, "max: me.assignedTasks", mutLists(t, e, "max").Assigned, []string{stays.ID})
	})

	t.Run("a DONE task of the removed member is unassigned too and their other projects' tasks stay", func(t *testing.T) {
		e, s := mutSeeded(t)
		web := s.Project("Website relaunch").ID
		e.MustQuery(t, "alice", mutRemoveMember, mutVars{"p": web, "u": "carol"}, nil)
		if task := mutGetTask(t, e, "alice", s.Task("Pick a colour palette").ID); task == nil || task.Assignee != nil || task.Status != "DONE" {
			t.Errorf("carol's DONE task in web = %s, want it unassigned and still DONE", testenv.JSON(task))
		}
		l := mutLists(t, e, "carol")
		mutWantIDs(t, "carol: me.assignedTasks", l.Assigned, mutIds(s, "Write up results"))
		mutWantIDs(t, "carol: me.projects", l.Projects, []string{s.Project("Research").ID})
	})

	e, s := mutSeeded(t)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	mutRunRefusals(t, e, []mutRefusal{
		{"removing the owner", "alice", mutBadInput, mutRemoveMember, mutVars{"p": web, "u": "alice"}},
		{"removing a user who is no member", "alice", mutNotFound, mutRemoveMember, mutVars{"p": web, "u": "dave"}},
		{"removing a user in no project", "alice", mutNotFound, mutRemoveMember, mutVars{"p": web, "u": "eve"}},
		{"removing a user without a profile", "alice", mutNotFound, mutRemoveMember, mutVars{"p": web, "u": "nobody"}},
		{"member who is not the owner", "bob", mutForbidden, mutRemoveMember, mutVars{"p": web, "u": "carol"}},
		{"member removing themself", "bob", mutForbidden, mutRemoveMember, mutVars{"p": web, "u": "bob"}},
		{"user in no project", "eve", mutNotFound, mutRemoveMember, mutVars{"p": web, "u": "bob"}},
		{"owner of other projects but no member", "alice", mutNotFound, mutRemoveMember, mutVars{"p": lab, "u": "dave"}},
		{"viewer without a profile", "nobody", mutNotFound, mutRemoveMember, mutVars{"p": web, "u": "bob"}},
		{"project that does not exist", "alice", mutNotFound, mutRemoveMember, mutVars{"p": "prj#" + mutMissingULID, "u": "bob"}},
		{"malformed project id", "alice", mutBadInput, mutRemoveMember, mutVars{"p": "prj#nope", "u": "bob"}},
		{"malformed user id", "alice", mutBadInput, mutRemoveMember, mutVars{"p": web, "u": "b#ob"}},
	})
}

// ---- createTask ----

func TestMutationCreateTask(t *testing.T) {
	type result struct{ CreateTask mutTaskView }

	t.Run("a member creates a task with every field and it is listed where it belongs", func(t *testing.T) {
		e, s := mutSeeded(t)
		web := s.Project("Website relaunch").ID
		var got result
		e.MustQuery(t, "bob", mutCreateTask, mutVars{"input": mutVars{"projectId": web, "title": "Write the FAQ", "description": "Questions",
			"dueDate": testenv.Day(10), "assigneeId": "carol", "tags": []string{" FAQ ", "Copy", "faq", "new-thing"}}}, &got)
		task := got.CreateTask
		if !strings.HasPrefix(task.ID, "tsk#") || task.Title != "Write the FAQ" || task.Description == nil ||
			*task.Description != "Questions" || task.Status != "TODO" || task.DueDate == nil || *task.DueDate != testenv.Day(10) ||
			task.Version != 1 || task.CreatedAt != mutNowStr || task.UpdatedAt != mutNowStr || task.Project.ID != web ||
			task.assignee() != "carol" {
			t.Errorf("createTask = %s", testenv.JSON(task))
		}
		if tags, want := task.tags(), []string{"copy", "faq", "new-thing"}; !slices.Equal(tags, want) {
			t.Errorf("tags = %v, want %v (trimmed, lower-cased, no duplicates)", tags, want)
		}
		if again := mutGetTask(t, e, "alice", task.ID); again == nil || !reflect.DeepEqual(*again, task) {
			t.Errorf("task(id) = %s, want %s", testenv.JSON(again), testenv.JSON(task))
		}
		mutWantIDs(t, "project.tasks", mutProjectTaskIDs(t, e, "alice", web), append(mutIds(s, "Pick a colour palette",
			"Write the landing page copy", "Fix the broken signup form", "Set up analytics"), task.ID,
			s.Task("Launch announcement").ID, s.Task("Migrate the blog").ID))
		mutWantIDs(t, "carol: me.assignedTasks", mutLists(t, e, "carol").Assigned,
			[]string{s.Task("Pick a colour palette").ID, task.ID, s.Task("Write up results").ID})
		mutWantIDs(t, "tasksByTag(faq)", mutTagTaskIDs(t, e, "alice", "faq"), []string{task.ID})
		mutWantIDs(t, "tasksByTag(copy)", mutTagTaskIDs(t, e, "alice", "copy"), []string{s.Task("Write the landing page copy").ID, task.ID})
		if mutNodeExists(t, e, "dave", task.ID) {
			t.Errorf("dave, no member of the project, sees the task")
		}
	})

	t.Run("a task with only a title has no description, due date, assignee or tags and comes last", func(t *testing.T) {
		e, s := mutSeeded(t)
		app := s.Project("Mobile app").ID
		var got result
		e.MustQuery(t, "dave", mutCreateTask, mutVars{"input": mutVars{"projectId": app, "title": "Bare"}}, &got)
		task := got.CreateTask
		if task.Title != "Bare" || task.Description != nil || task.DueDate != nil || task.Assignee != nil ||
			len(task.Tags) != 0 || task.Status != "TODO" || task.Version != 1 || task.Project.ID != app {
			t.Errorf("createTask = %s", testenv.JSON(task))
		}
		got2 := mutProjectTaskIDs(t, e, "bob", app)
		if len(got2) != 6 || got2[5] != task.ID {
			t.Errorf("project.tasks = %v, want 6 with %s last", got2, task.ID)
		}
	})

	t.Run("the viewer may assign themself; a leap day and a 200-character non-ASCII title are accepted", func(t *testing.T) {
		e, s := mutSeeded(t)
		title := strings.Repeat("ü", 200)
		var got result
		e.MustQuery(t, "carol", mutCreateTask, mutVars{"input": mutVars{"projectId": s.Project("Research").ID, "title": title,
			"dueDate": "2028-02-29", "assigneeId": "carol"}}, &got)
		task := got.CreateTask
		if task.Title != title || task.DueDate == nil || *task.DueDate != "2028-02-29" || task.assignee() != "carol" {
			t.Errorf("createTask = %s", testenv.JSON(task))
		}
		if l := mutLists(t, e, "carol"); !slices.Contains(l.Assigned, task.ID) {
			t.Errorf("carol's me.assignedTasks = %v, want it to list %s", l.Assigned, task.ID)
		}
	})

	t.Run("20 distinct tags are accepted and duplicates do not count", func(t *testing.T) {
		e, s := mutSeeded(t)
		tags := mutTwentyOneTags()[:20]
		for _, tag := range tags[:5] {
			tags = append(tags, strings.ToUpper(tag))
		}
		var got result
		e.MustQuery(t, "alice", mutCreateTask, mutVars{"input": mutVars{"projectId": s.Project("Website relaunch").ID, "title": "Tagged", "tags": tags}}, &got)
		if n := len(got.CreateTask.Tags); n != 20 {
			t.Errorf("task has %d tags, want 20", n)
		}
		if got := mutGetTask(t, e, "alice", got.CreateTask.ID); got == nil || len(got.Tags) != 20 {
			t.Errorf("task(id) = %s, want 20 tags", testenv.JSON(got))
		}
	})

	e, s := mutSeeded(t)
	web, lab := s.Project("Website relaunch").ID, s.Project("Research").ID
	in := func(extra mutVars) mutVars {
		v := mutVars{"projectId": web, "title": "New task"}
		for k, x := range extra {
			v[k] = x
		}
		return mutVars{"input": v}
	}
	const inlineDate = `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Inline", dueDate: "2026-02-30"}) { id } }`
	mutRunRefusals(t, e, []mutRefusal{
		{"user in no project", "eve", mutNotFound, mutCreateTask, in(nil)},
		{"member of other projects", "alice", mutNotFound, mutCreateTask, in(mutVars{"projectId": lab})},
		{"viewer without a profile", "nobody", mutNotFound, mutCreateTask, in(nil)},
		{"no token", "", mutUnauthenticated, mutCreateTask, in(nil)},
		{"project that does not exist", "alice", mutNotFound, mutCreateTask, in(mutVars{"projectId": "prj#" + mutMissingULID})},
		{"malformed project id", "alice", mutBadInput, mutCreateTask, in(mutVars{"projectId": "prj#nope"})},
		{"task id as project id", "alice", mutBadInput, mutCreateTask, in(mutVars{"projectId": s.Task("Migrate the blog").ID})},
		{"empty title", "alice", mutBadInput, mutCreateTask, in(mutVars{"title": ""})},
		{"white-space title", "alice", mutBadInput, mutCreateTask, in(mutVars{"title": " \n\t "})},
		{"201-character title", "alice", mutBadInput, mutCreateTask, in(mutVars{"title": strings.Repeat("t", 201)})},
		{"10,001-character description", "alice", mutBadInput, mutCreateTask, in(mutVars{"description": strings.Repeat("d", 10_001)})},
		{"tag with a space", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{"two words"}})},
		{"empty tag", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{""}})},
		{"white-space tag", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{"   "}})},
		{"tag with a non-ASCII letter", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{"naïve"}})},
		{"tag with a slash", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{"a/b"}})},
		{"51-character tag", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{strings.Repeat("t", 51)}})},
		{"a bad tag among good ones", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": []string{"good", "bad!"}})},
		{"21 distinct tags", "alice", mutBadInput, mutCreateTask, in(mutVars{"tags": mutTwentyOneTags()})},
		{"February 30th as a variable", "alice", mutBadDate, mutCreateTask, in(mutVars{"dueDate": "2026-02-30"})},
		{"date without leading zeros", "alice", mutBadDate, mutCreateTask, in(mutVars{"dueDate": "2026-9-1"})},
		{"date that is a word", "alice", mutBadDate, mutCreateTask, in(mutVars{"dueDate": "tomorrow"})},
		{"date and time", "alice", mutBadDate, mutCreateTask, in(mutVars{"dueDate": "2026-09-01T00:00:00Z"})},
		{"February 30th as an inline literal", "alice", mutBadDate, inlineDate, mutVars{"p": web}},
		{"assignee who is a member of other projects only", "alice", mutBadInput, mutCreateTask, in(mutVars{"assigneeId": "dave"})},
		{"assignee in no project", "alice", mutBadInput, mutCreateTask, in(mutVars{"assigneeId": "eve"})},
		{"assignee without a profile", "alice", mutBadInput, mutCreateTask, in(mutVars{"assigneeId": "nobody"})},
		{"malformed assignee id", "alice", mutBadInput, mutCreateTask, in(mutVars{"assigneeId": "bo#b"})},
	})
}

// ---- updateTask ----

func TestMutationUpdateTask(t *testing.T) {
	const t1Title = "Write the landing page copy"

	t.Run("fields left out stay as they are", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		before := mutGetTask(t, e, "alice", t1)
		later := testenv.Now.Add(time.Hour)
		e.Store.Now = func() time.Time { return later }
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "title": "New title"})
		want := *before
		want.Title, want.Version, want.UpdatedAt = "New title", 2, later.Format(time.RFC3339)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("updateTask = %s\nwant        %s", testenv.JSON(got), testenv.JSON(want))
		}
		if again := mutGetTask(t, e, "bob", t1); again == nil || !reflect.DeepEqual(*again, want) {
			t.Errorf("task(id) = %s\nwant       %s", testenv.JSON(again), testenv.JSON(want))
		}
	})

	t.Run("any member changes every field given", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		got := mutDoUpdateTask(t, e, "carol", mutVars{"id": t1, "title": "Copy v2", "description": "Longer", "status": "DONE",
			"dueDate": testenv.Day(5), "assigneeId": "bob", "tags": []string{"launch"}})
		for who, v := range map[string]*mutTaskView{"updateTask": &got, "task(id)": mutGetTask(t, e, "alice", t1)} {
			if v == nil || v.Title != "Copy v2" || v.Description == nil || *v.Description != "Longer" || v.Status != "DONE" ||
				v.DueDate == nil || *v.DueDate != testenv.Day(5) || v.assignee() != "bob" || !slices.Equal(v.tags(), []string{"launch"}) ||
				v.Version != 2 || v.Project.ID != s.Project("Website relaunch").ID {
				t.Errorf("%s = %s", who, testenv.JSON(v))
			}
		}
	})

	t.Run("fields given null are cleared", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "description": "to be cleared"})
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "description": nil, "dueDate": nil, "assigneeId": nil, "tags": nil})
		for who, v := range map[string]*mutTaskView{"updateTask": &got, "task(id)": mutGetTask(t, e, "alice", t1)} {
			if v == nil || v.Description != nil || v.DueDate != nil || v.Assignee != nil || len(v.Tags) != 0 ||
				v.Title != t1Title || v.Status != "IN_PROGRESS" || v.Version != 3 {
				t.Errorf("%s = %s, want description, dueDate, assignee and tags cleared, title and status kept", who, testenv.JSON(v))
			}
		}
		l := mutLists(t, e, "alice")
		mutWantNoneOf(t, "me.assignedTasks", l.Assigned, []string{t1})
		mutWantNoneOf(t, "me.overdueTasks", l.Overdue, []string{t1})
		mutWantIDs(t, "tasksByTag(copy)", mutTagTaskIDs(t, e, "alice", "copy"), []string{})
		mutWantIDs(t, "tasksByTag(urgent)", mutTagTaskIDs(t, e, "alice", "urgent"), mutIds(s, "Crash on start on Android 12", "Fix the broken signup form"))
		// Without a due date it sorts with the undated tasks, by id.
		mutWantIDs(t, "project.tasks", mutProjectTaskIDs(t, e, "alice", s.Project("Website relaunch").ID), mutIds(s,
			"Pick a colour palette", "Fix the broken signup form", "Set up analytics", "Launch announcement", t1Title, "Migrate the blog"))
		if sks := mutSkOf(t, e, "TASK#"+testenv.ULIDOf(t1)); slices.ContainsFunc(sks, func(sk string) bool { return strings.HasPrefix(sk, "TAG#") }) {
			t.Errorf("tag links remain: %v", sks)
		}
	})

	t.Run("an empty tag list clears the tags", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "tags": []string{}})
		if len(got.Tags) != 0 || got.Version != 2 {
			t.Errorf("updateTask = %s, want no tags at version 2", testenv.JSON(got))
		}
		if v := mutGetTask(t, e, "alice", t1); v == nil || len(v.Tags) != 0 {
			t.Errorf("task(id) = %s, want no tags", testenv.JSON(v))
		}
		mutWantIDs(t, "tasksByTag(copy)", mutTagTaskIDs(t, e, "alice", "copy"), []string{})
	})

	t.Run("version grows by exactly one per call including calls that change nothing", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		calls := []mutVars{
			{"id": t1},
			{"id": t1},
			{"id": t1, "title": t1Title},
			{"id": t1, "expectedVersion": 4},
			{"id": t1, "status": "IN_PROGRESS", "tags": []string{"urgent", "copy"}},
		}
		for i, in := range calls {
			if got := mutDoUpdateTask(t, e, "bob", in); got.Version != i+2 {
				t.Errorf("call %d (%s): version = %d, want %d", i+1, testenv.JSON(in), got.Version, i+2)
			}
		}
		if v := mutGetTask(t, e, "alice", t1); v == nil || v.Version != len(calls)+1 {
			t.Errorf("task(id) = %s, want version %d", testenv.JSON(v), len(calls)+1)
		}
	})

	t.Run("tags are trimmed lower-cased and de-duplicated", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "tags": []string{" Foo ", "FOO", "bar.", "Bar.", "foo"}})
		if tags := got.tags(); !slices.Equal(tags, []string{"bar.", "foo"}) {
			t.Errorf("tags = %v, want [bar. foo]", tags)
		}
		mutWantIDs(t, "tasksByTag(foo)", mutTagTaskIDs(t, e, "alice", "foo"), []string{t1})
		mutWantIDs(t, "tasksByTag(bar.)", mutTagTaskIDs(t, e, "alice", "bar."), []string{t1})
	})

	t.Run("replacing the tags removes the old tag links", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		mutWantIDs(t, "tasksByTag(copy) before", mutTagTaskIDs(t, e, "alice", "copy"), []string{t1})
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "tags": []string{"URGENT", "fresh"}})
		if tags := got.tags(); !slices.Equal(tags, []string{"fresh", "urgent"}) {
			t.Errorf("tags = %v, want [fresh urgent]", tags)
		}
		mutWantIDs(t, "tasksByTag(copy)", mutTagTaskIDs(t, e, "alice", "copy"), []string{})
		mutWantIDs(t, "tasksByTag(fresh)", mutTagTaskIDs(t, e, "alice", "fresh"), []string{t1})
		mutWantIDs(t, "tasksByTag(urgent)", mutTagTaskIDs(t, e, "alice", "urgent"), mutIds(s, t1Title, "Crash on start on Android 12", "Fix the broken signup form"))
		var links []string
		for _, sk := range mutSkOf(t, e, "TASK#"+testenv.ULIDOf(t1)) {
			if strings.HasPrefix(sk, "TAG#") {
				links = append(links, sk)
			}
		}
		if want := []string{"TAG#fresh", "TAG#urgent"}; !slices.Equal(links, want) {
			t.Errorf("tag link items = %v, want %v", links, want)
		}
	})

	t.Run("a new due date re-orders the task in project.tasks, assignedTasks and tasksByTag", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		web := s.Project("Website relaunch").ID
		steps := []struct {
			due                          any
			project, assigned, urgentTag []string
		}{
			{"untouched",
				mutIds(s, "Pick a colour palette", t1Title, "Fix the broken signup form", "Set up analytics", "Launch announcement", "Migrate the blog"),
				mutIds(s, "App store screenshots", t1Title, "Crash on start on Android 12", "Set up analytics", "Launch announcement"),
				mutIds(s, t1Title, "Crash on start on Android 12", "Fix the broken signup form")},
			{testenv.Day(10),
				mutIds(s, "Pick a colour palette", "Fix the broken signup form", "Set up analytics", t1Title, "Launch announcement", "Migrate the blog"),
				mutIds(s, "App store screenshots", "Crash on start on Android 12", "Set up analytics", t1Title, "Launch announcement"),
				mutIds(s, "Crash on start on Android 12", "Fix the broken signup form", t1Title)},
			{testenv.Day(-30),
				mutIds(s, t1Title, "Pick a colour palette", "Fix the broken signup form", "Set up analytics", "Launch announcement", "Migrate the blog"),
				mutIds(s, t1Title, "App store screenshots", "Crash on start on Android 12", "Set up analytics", "Launch announcement"),
				mutIds(s, t1Title, "Crash on start on Android 12", "Fix the broken signup form")},
			{nil,
				mutIds(s, "Pick a colour palette", "Fix the broken signup form", "Set up analytics", "Launch announcement", t1Title, "Migrate the blog"),
				mutIds(s, "App store screenshots", "Crash on start on Android 12", "Set up analytics", "Launch announcement", t1Title),
				mutIds(s, "Crash on start on Android 12", "Fix the broken signup form", t1Title)},
		}
		for _, st := range steps {
			if st.due != "untouched" {
				mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "dueDate": st.due})
			}
			mutWantIDs(t, fmt.Sprintf("due %v: project.tasks", st.due), mutProjectTaskIDs(t, e, "bob", web), st.project)
			mutWantIDs(t, fmt.Sprintf("due %v: me.assignedTasks", st.due), mutLists(t, e, "alice").Assigned, st.assigned)
			mutWantIDs(t, fmt.Sprintf("due %v: tasksByTag(urgent)", st.due), mutTagTaskIDs(t, e, "alice", "urgent"), st.urgentTag)
		}
	})

	t.Run("status DONE takes the task off overdueTasks and another status puts it back", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1, t7 := s.Task(t1Title).ID, s.Task("Crash on start on Android 12").ID
		mutWantIDs(t, "overdue before", mutLists(t, e, "alice").Overdue, []string{t1, t7})
		mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "status": "DONE"})
		l := mutLists(t, e, "alice")
		mutWantIDs(t, "overdue after DONE", l.Overdue, []string{t7})
		if !slices.Contains(l.Assigned, t1) {
			t.Errorf("me.assignedTasks = %v, want it to still list the DONE task", l.Assigned)
		}
		mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "status": "TODO"})
		mutWantIDs(t, "overdue after TODO", mutLists(t, e, "alice").Overdue, []string{t1, t7})
	})

	t.Run("a new assignee moves the task between assignedTasks", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "assigneeId": "bob"})
		if got.assignee() != "bob" {
			t.Errorf("assignee = %q, want bob", got.assignee())
		}
		mutWantNoneOf(t, "alice: me.assignedTasks", mutLists(t, e, "alice").Assigned, []string{t1})
		bob := mutLists(t, e, "bob")
		mutWantIDs(t, "bob: me.assignedTasks", bob.Assigned, mutIds(s, t1Title, "Fix the broken signup form", "Dark mode"))
		mutWantIDs(t, "bob: me.overdueTasks", bob.Overdue, mutIds(s, t1Title, "Fix the broken signup form"))
	})

	t.Run("expectedVersion equal to the current version succeeds and a stale one is a CONFLICT", func(t *testing.T) {
		e, s := mutSeeded(t)
		t1 := s.Task(t1Title).ID
		got := mutDoUpdateTask(t, e, "alice", mutVars{"id": t1, "title": "First", "expectedVersion": 1})
		if got.Version != 2 || got.Title != "First" {
			t.Errorf("updateTask = %s, want version 2 titled First", testenv.JSON(got))
		}
		mutRefuse(t, e, "bob", mutConflict, mutUpdateTask, mutVars{"input": mutVars{"id": t1, "title": "Second", "expectedVersion": 1}})
		if v := mutGetTask(t, e, "alice", t1); v == nil || v.Version != 2 || v.Title != "First" {
			t.Errorf("task(id) = %s, want version 2 titled First", testenv.JSON(v))
		}
	})

	e, s := mutSeeded(t)
	t1, lab := s.Task(t1Title).ID, s.Task("Benchmark the new model").ID
	in := func(extra mutVars) mutVars {
		v := mutVars{"id": t1}
		for k, x := range extra {
			v[k] = x
		}
		return mutVars{"input": v}
	}
	const inlineDate = `mutation($id: ID!) { updateTask(input: {id: $id, dueDate: "2026-02-30"}) { id } }`
	mutRunRefusals(t, e, []mutRefusal{
		{"title null", "alice", mutBadInput, mutUpdateTask, in(mutVars{"title": nil})},
		{"status null", "alice", mutBadInput, mutUpdateTask, in(mutVars{"status": nil})},
		{"empty title", "alice", mutBadInput, mutUpdateTask, in(mutVars{"title": ""})},
		{"white-space title", "alice", mutBadInput, mutUpdateTask, in(mutVars{"title": "  "})},
		{"201-character title", "alice", mutBadInput, mutUpdateTask, in(mutVars{"title": strings.Repeat("t", 201)})},
		{"10,001-character description", "alice", mutBadInput, mutUpdateTask, in(mutVars{"description": strings.Repeat("d", 10_001)})},
		{"bad tag", "alice", mutBadInput, mutUpdateTask, in(mutVars{"tags": []string{"ok", "not ok"}})},
		{"empty tag", "alice", mutBadInput, mutUpdateTask, in(mutVars{"tags": []string{""}})},
		{"51-character tag", "alice", mutBadInput, mutUpdateTask, in(mutVars{"tags": []string{strings.Repeat("t", 51)}})},
		{"21 distinct tags", "alice", mutBadInput, mutUpdateTask, in(mutVars{"tags": mutTwentyOneTags()})},
		{"February 30th as a variable", "alice", mutBadDate, mutUpdateTask, in(mutVars{"dueDate": "2026-02-30"})},
		{"month 13 as a variable", "alice", mutBadDate, mutUpdateTask, in(mutVars{"dueDate": "2026-13-01"})},
		{"February 30th as an inline literal", "alice", mutBadDate, inlineDate, mutVars{"id": t1}},
		{"assignee who is a member of other projects only", "alice", mutBadInput, mutUpdateTask, in(mutVars{"assigneeId": "dave"})},
		{"assignee in no project", "alice", mutBadInput, mutUpdateTask, in(mutVars{"assigneeId": "eve"})},
		{"assignee without a profile", "alice", mutBadInput, mutUpdateTask, in(mutVars{"assigneeId": "nobody"})},
		{"malformed assignee id", "alice", mutBadInput, mutUpdateTask, in(mutVars{"assigneeId": "a#lice"})},
		{"stale expectedVersion", "alice", mutConflict, mutUpdateTask, in(mutVars{"title": "X", "expectedVersion": 2})},
		{"expectedVersion 0", "alice", mutConflict, mutUpdateTask, in(mutVars{"expectedVersion": 0})},
		{"user in no project", "eve", mutNotFound, mutUpdateTask, in(mutVars{"title": "X"})},
		{"member of other projects", "alice", mutNotFound, mutUpdateTask, mutVars{"input": mutVars{"id": lab, "title": "X"}}},
		{"viewer without a profile", "nobody", mutNotFound, mutUpdateTask, in(mutVars{"title": "X"})},
		{"task that does not exist", "alice", mutNotFound, mutUpdateTask, mutVars{"input": mutVars{"id": "tsk#" + mutMissingULID, "title": "X"}}},
		{"malformed id", "alice", mutBadInput, mutUpdateTask, mutVars{"input": mutVars{"id": "tsk#nope", "title": "X"}}},
		{"project id as task id", "alice", mutBadInput, mutUpdateTask, mutVars{"input": mutVars{"id": s.Project("Website relaunch").ID, "title": "X"}}},
	})
}

func TestMutationUpdateTaskConcurrentExpectedVersionOneWinner(t *testing.T) {
	e, s := mutSeeded(t)
	t1 := s.Task("Write the landing page copy").ID
	const n = 10
	codes := make([][]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := e.Query(t, "alice", mutUpdateTask, mutVars{"input": mutVars{"id": t1, "title": fmt.Sprintf("Writer %d", i), "expectedVersion": 1}})
			codes[i] = res.Codes()
		})
	}
	wg.Wait()
	won, conflicts := -1, 0
	for i, c := range codes {
		switch {
		case len(c) == 0:
			if won >= 0 {
				t.Errorf("writers %d and %d both succeeded", won, i)
			}
			won = i
		case slices.Equal(c, mutConflict):
			conflicts++
		default:
			t.Errorf("writer %d got %v, want success or CONFLICT", i, c)
		}
	}
	if won < 0 || conflicts != n-1 {
		t.Fatalf("%d conflicts and winner %d, want exactly one winner and %d CONFLICT", conflicts, won, n-1)
	}
	if v := mutGetTask(t, e, "alice", t1); v == nil || v.Version != 2 || v.Title != fmt.Sprintf("Writer %d", won) {
		t.Errorf("task = %s, want version 2 titled by writer %d", testenv.JSON(v), won)
	}
}

func TestMutationUpdateTaskConcurrentWithoutExpectedVersionLosesNoUpdate(t *testing.T) {
	e, s := mutSeeded(t)
	t1 := s.Task("Write the landing page copy").ID
	const n = 10
	versions := make([]int, n)
	codes := make([][]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := e.Query(t, "bob", `mutation($input: UpdateTaskInput!) { updateTask(input: $input) { version } }`,
				mutVars{"input": mutVars{"id": t1, "tags": []string{fmt.Sprintf("w%d", i)}}})
			codes[i] = res.Codes()
			var got struct{ UpdateTask *struct{ Version int } }
			if len(res.Errors) == 0 && json.Unmarshal(res.Data, &got) == nil && got.UpdateTask != nil {
				versions[i] = got.UpdateTask.Version
			}
		})
	}
	wg.Wait()
	var won []int
	for i, c := range codes {
		switch {
		case len(c) == 0:
			won = append(won, versions[i])
		case !slices.Equal(c, mutConflict): // a concurrent change may win, nothing else may happen
			t.Errorf("writer %d got %v, want success or CONFLICT", i, c)
		}
	}
	slices.Sort(won)
	t.Logf("%d of %d writers succeeded, versions %v", len(won), n, won)
	want := make([]int, len(won))
	for i := range want {
		want[i] = i + 2
	}
	if len(won) == 0 || !slices.Equal(won, want) {
		t.Errorf("successful writers got versions %v, want %v (each success one step)", won, want)
	}
	v := mutGetTask(t, e, "alice", t1)
	if v == nil || v.Version != 1+len(won) || len(v.Tags) != 1 {
		t.Fatalf("task = %s, want version %d with the tag of the last writer", testenv.JSON(v), 1+len(won))
	}
	// The tag links match the final tag set: the other writers' links are gone.
	var links []string
	for _, sk := range mutSkOf(t, e, "TASK#"+testenv.ULIDOf(t1)) {
		if strings.HasPrefix(sk, "TAG#") {
			links = append(links, sk)
		}
	}
	if want := []string{"TAG#" + v.Tags[0].Name}; !slices.Equal(links, want) {
		t.Errorf("tag link items = %v, want %v", links, want)
	}
}

// ---- deleteTask ----

func TestMutationDeleteTask(t *testing.T) {
	t.Run("a member deletes a task: it, its comments and tag links vanish at once and cleanup removes every item", func(t *testing.T) {
		e, s := mutSeeded(t)
		landing := s.Task("Write the landing page copy")
		t1 := landing.ID
		web := s.Project("Website relaunch").ID
		comments := []string{mutCommentOf(s, "Write the landing page copy", "alice").ID, mutCommentOf(s, "Write the landing page copy", "bob").ID}
		before := e.Dump(t)

		var got struct{ DeleteTask string }
		// carol (neither owner nor assignee) where policy lets her, else a member it lets
		e.MustQuery(t, s.MayDeleteTask(landing, "carol"), mutDeleteTask, mutVars{"id": t1}, &got)
		if got.DeleteTask != t1 {
			t.Errorf("deleteTask = %q, want %q", got.DeleteTask, t1)
		}
		for _, viewer := range []string{"alice", "bob", "carol"} {
			if v := mutGetTask(t, e, viewer, t1); v != nil {
				t.Errorf("%s: task(id) = %s, want null", viewer, testenv.JSON(v))
			}
			for _, id := range append([]string{t1}, comments...) {
				if mutNodeExists(t, e, viewer, id) {
					t.Errorf("%s: node(%s) is not null", viewer, id)
				}
			}
			mutWantNoneOf(t, viewer+": project.tasks", mutProjectTaskIDs(t, e, viewer, web), []string{t1})
			for _, tag := range []string{"copy", "urgent"} {
				mutWantNoneOf(t, viewer+": tasksByTag("+tag+")", mutTagTaskIDs(t, e, viewer, tag), []string{t1})
			}
		}
		l := mutLists(t, e, "alice")
		mutWantIDs(t, "alice: me.assignedTasks", l.Assigned, mutIds(s, "App store screenshots", "Crash on start on Android 12", "Set up analytics", "Launch announcement"))
		mutWantIDs(t, "alice: me.overdueTasks", l.Overdue, mutIds(s, "Crash on start on Android 12"))
		mutWantIDs(t, "alice: tasksByTag(urgent)", mutTagTaskIDs(t, e, "alice", "urgent"), mutIds(s, "Crash on start on Android 12", "Fix the broken signup form"))
		if n := len(mutProjectTaskIDs(t, e, "alice", web)); n != 5 {
			t.Errorf("project has %d tasks, want 5", n)
		}
		// Nothing more can be done to it.
		mutRefuse(t, e, "alice", mutNotFound, mutDeleteTask, mutVars{"id": t1})
		mutRefuse(t, e, "alice", mutNotFound, mutUpdateTask, mutVars{"input": mutVars{"id": t1, "title": "Back"}})
		mutRefuse(t, e, "alice", mutNotFound, mutAddComment, mutVars{"input": mutVars{"taskId": t1, "body": "Hello?"}})

		n, err := e.Store.RunCleanup(context.Background())
		if err != nil || n < 1 {
			t.Fatalf("RunCleanup = %d, %v; want at least one job done", n, err)
		}
		needles := []string{testenv.ULIDOf(t1)}
		mutWantOnlyExpiringLog(t, e, needles) // the task's tombstone in the change log
		e.MustSweepExpired(t)
		if left := mutItemsMentioning(t, e, needles); len(left) > 0 {
			t.Errorf("after cleanup %d items of the task remain:\n%s", len(left), strings.Join(left, "\n"))
		}
		if jobs := mutSkOf(t, e, "CLEANUP"); len(jobs) > 0 {
			t.Errorf("cleanup jobs left: %v", jobs)
		}
		// The project's counters lose the task (IN_PROGRESS) in the delete's
		// own transaction, and its rev grows with them; nothing else changes.
		want := mutLinesWithout(before, needles)
		for _, l := range strings.Split(want, "\n") {
			if strings.Contains(l, `"id":"`+web+`"`) {
				counted := strings.Replace(strings.Replace(l, `"inProgressCount":"1"`, `"inProgressCount":"0"`, 1), `"rev":"0"`, `"rev":"1"`, 1)
				counted = mutNextSeq(counted) // the delete's position in the project's change log
				if counted == l {
					t.Fatalf("the project's item before the delete has no inProgressCount 1 and rev 0: %s", l)
				}
				want = strings.Replace(want, l, counted, 1)
			}
		}
		// The task's tag indexes lose its entries (CheckTable); they are
		// left out of the comparison.
		indexes := []string{`"type":"TAGS"`}
		if after := mutLinesWithout(e.Dump(t), indexes); after != mutLinesWithout(want, indexes) {
			t.Errorf("deleting the task touched other items:\n%s", mutDiffDump(mutLinesWithout(want, indexes), after))
		}
		if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
			t.Errorf("violations after the delete and its cleanup:\n%s", strings.Join(v, "\n"))
		}
	})

	e, s := mutSeeded(t)
	t1, lab := s.Task("Write the landing page copy").ID, s.Task("Benchmark the new model").ID
	mutRunRefusals(t, e, []mutRefusal{
		{"user in no project", "eve", mutNotFound, mutDeleteTask, mutVars{"id": t1}},
		{"member of other projects", "alice", mutNotFound, mutDeleteTask, mutVars{"id": lab}},
		{"viewer without a profile", "nobody", mutNotFound, mutDeleteTask, mutVars{"id": t1}},
		{"task that does not exist", "alice", mutNotFound, mutDeleteTask, mutVars{"id": "tsk#" + mutMissingULID}},
		{"malformed id", "alice", mutBadInput, mutDeleteTask, mutVars{"id": "tsk#nope"}},
		{"comment id as task id", "alice", mutBadInput, mutDeleteTask, mutVars{"id": mutCommentOf(s, "Write the landing page copy", "bob").ID}},
	})
}

// ---- addComment ----

func TestMutationAddComment(t *testing.T) {
	type comment struct {
		ID, Body, CreatedAt string
		Author              struct{ ID, Name string }
		Task                struct{ ID string }
	}
	type result struct{ AddComment comment }

	bodies := []struct{ name, body string }{
		{"a short body", "Ship it"},
		{"a body of 10,000 characters", strings.Repeat("b", 10_000)},
		{"a body of 10,000 non-ASCII characters", strings.Repeat("é", 10_000)},
		{"a body of 10,000 characters after trimming", "  " + strings.Repeat("b", 10_000) + "\n"},
	}
	for _, b := range bodies {
		t.Run("a member comments with "+b.name+" and it is listed last", func(t *testing.T) {
			e, s := mutSeeded(t)
			t1 := s.Task("Write the landing page copy").ID
			var got result
			e.MustQuery(t, "carol", mutAddComment, mutVars{"input": mutVars{"taskId": t1, "body": b.body}}, &got)
			c := got.AddComment
			if !strings.HasPrefix(c.ID, "cmt#"+testenv.ULIDOf(t1)+"#") || strings.TrimSpace(c.Body) != strings.TrimSpace(b.body) ||
				c.Author.ID != "carol" || c.Author.Name != "Carol Chen" || c.Task.ID != t1 || c.CreatedAt != mutNowStr {
				t.Errorf("addComment = %.300s", testenv.JSON(c))
			}
			want := []string{mutCommentOf(s, "Write the landing page copy", "alice").ID, mutCommentOf(s, "Write the landing page copy", "bob").ID, c.ID}
			mutWantIDs(t, "task.comments", mutCommentIDs(t, e, "bob", t1), want)
			if !mutNodeExists(t, e, "alice", c.ID) {
				t.Errorf("node(comment) for a member is null")
			}
			if mutNodeExists(t, e, "dave", c.ID) {
				t.Errorf("node(comment) for dave, no member, is not null")
			}
		})
	}

	e, s := mutSeeded(t)
	t1, lab := s.Task("Write the landing page copy").ID, s.Task("Benchmark the new model").ID
	in := func(task, body string) mutVars { return mutVars{"input": mutVars{"taskId": task, "body": body}} }
	mutRunRefusals(t, e, []mutRefusal{
		{"user in no project", "eve", mutNotFound, mutAddComment, in(t1, "Hi")},
		{"member of other projects", "alice", mutNotFound, mutAddComment, in(lab, "Hi")},
		{"viewer without a profile", "nobody", mutNotFound, mutAddComment, in(t1, "Hi")},
		{"task that does not exist", "alice", mutNotFound, mutAddComment, in("tsk#"+mutMissingULID, "Hi")},
		{"malformed task id", "alice", mutBadInput, mutAddComment, in("tsk#nope", "Hi")},
		{"project id as task id", "alice", mutBadInput, mutAddComment, in(s.Project("Website relaunch").ID, "Hi")},
		{"empty body", "alice", mutBadInput, mutAddComment, in(t1, "")},
		{"white-space body", "alice", mutBadInput, mutAddComment, in(t1, " \n\t ")},
		{"10,001-character body", "alice", mutBadInput, mutAddComment, in(t1, strings.Repeat("b", 10_001))},
	})
}

// ---- deleteComment ----

func TestMutationDeleteComment(t *testing.T) {
	cases := []struct {
		name, viewer, task, author string
	}{
		{"the author deletes their comment", "bob", "Write the landing page copy", "bob"},
		{"the project's owner deletes a member's comment", "alice", "Fix the broken signup form", "carol"},
		{"the owner of another project deletes a comment in theirs", "bob", "Crash on start on Android 12", "dave"},
		{"the author who is not the owner deletes their comment in a project owned by another", "alice", "Crash on start on Android 12", "alice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, s := mutSeeded(t)
			task := s.Task(c.task).ID
			cm := mutCommentOf(s, c.task, c.author).ID
			before := mutCommentIDs(t, e, c.viewer, task)
			var got struct{ DeleteComment string }
			e.MustQuery(t, c.viewer, mutDeleteComment, mutVars{"id": cm}, &got)
			if got.DeleteComment != cm {
				t.Errorf("deleteComment = %q, want %q", got.DeleteComment, cm)
			}
			want := slices.DeleteFunc(slices.Clone(before), func(id string) bool { return id == cm })
			mutWantIDs(t, "task.comments", mutCommentIDs(t, e, c.viewer, task), want)
			if len(want) != len(before)-1 {
				t.Fatalf("comment %s was not listed before: %v", cm, before)
			}
			if mutNodeExists(t, e, c.viewer, cm) {
				t.Errorf("node(comment) is not null after delete")
			}
			_, cu, _ := strings.Cut(strings.TrimPrefix(cm, "cmt#"), "#")
			if it := mutItem(t, e, "TASK#"+testenv.ULIDOf(task), "COMMENT#"+cu); it != nil {
				t.Errorf("comment item remains: %v", it)
			}
			mutRefuse(t, e, c.viewer, mutNotFound, mutDeleteComment, mutVars{"id": cm})
		})
	}

	e, s := mutSeeded(t)
	onT1 := mutCommentOf(s, "Write the landing page copy", "bob").ID
	onT7 := mutCommentOf(s, "Crash on start on Android 12", "dave").ID
	aliceOnT7 := mutCommentOf(s, "Crash on start on Android 12", "alice").ID
	t1 := s.Task("Write the landing page copy").ID
	mutRunRefusals(t, e, []mutRefusal{
		{"member who is neither author nor owner", "carol", mutForbidden, mutDeleteComment, mutVars{"id": onT1}},
		{"member who owns another project", "alice", mutForbidden, mutDeleteComment, mutVars{"id": onT7}},
		{"member deleting the comment of another member", "dave", mutForbidden, mutDeleteComment, mutVars{"id": aliceOnT7}},
		{"user in no project", "eve", mutNotFound, mutDeleteComment, mutVars{"id": onT1}},
		{"no member of the project", "dave", mutNotFound, mutDeleteComment, mutVars{"id": onT1}},
		{"viewer without a profile", "nobody", mutNotFound, mutDeleteComment, mutVars{"id": onT1}},
		{"comment that does not exist", "alice", mutNotFound, mutDeleteComment, mutVars{"id": "cmt#" + testenv.ULIDOf(t1) + "#" + mutMissingULID}},
		{"comment on a task that does not exist", "alice", mutNotFound, mutDeleteComment, mutVars{"id": "cmt#" + mutMissingULID + "#" + mutMissingULID}},
		{"malformed id", "alice", mutBadInput, mutDeleteComment, mutVars{"id": "cmt#nope"}},
		{"task id as comment id", "alice", mutBadInput, mutDeleteComment, mutVars{"id": t1}},
	})
}

// ---- failures of the store ----

func TestMutationFailedTransactionChangesNothingAndRevealsNothing(t *testing.T) {
	e, s := mutSeeded(t)
	web := s.Project("Website relaunch").ID
	srv := e.Emb.Server
	t.Cleanup(func() { srv.EmulateFailure(false) })
	before := e.Dump(t)
	input := mutVars{"input": mutVars{"projectId": web, "title": "During the outage", "assigneeId": "bob", "tags": []string{"outage"}}}

	srv.EmulateFailure(true)
	res := e.Query(t, "alice", mutCreateTask, input)
	srv.EmulateFailure(false)

	if len(res.Errors) != 1 || !slices.Contains([]string{"SERVICE_UNAVAILABLE", "INTERNAL_SERVER_ERROR"}, res.Errors[0].Code()) {
		t.Fatalf("errors = %+v, want one SERVICE_UNAVAILABLE or INTERNAL_SERVER_ERROR", res.Errors)
	}
	if !testenv.NullData(res.Data) {
		t.Errorf("failed mutation returned data %s", res.Data)
	}
	t.Logf("during the outage: %s %q", res.Errors[0].Code(), res.Errors[0].Message)
	msg := strings.ToLower(res.Errors[0].Message)
	for _, secret := range []string{"emulated", "dynamo", "minidyn", strings.ToLower(e.Store.Table()), "127.0.0.1", "internalservererror", "transact"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error message %q reveals %q", res.Errors[0].Message, secret)
		}
	}
	if after := e.Dump(t); after != before {
		t.Errorf("the failed mutation changed the table:\n%s", mutDiffDump(before, after))
	}
	// Once the store is back, the same mutation goes through.
	var got struct{ CreateTask mutTaskView }
	e.MustQuery(t, "alice", mutCreateTask, input, &got)
	if got.CreateTask.Title != "During the outage" {
		t.Errorf("createTask after recovery = %s", testenv.JSON(got.CreateTask))
	}
}
