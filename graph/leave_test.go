package graph_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

const (
	mutLeave     = `mutation($p: ID!) { leaveProject(projectId: $p) }`
	leaveWatched = `subscription($p: ID!) { projectEvents(projectId: $p) { kind subjectId actor { id } } }`
)

// leaveOutcome is what a member's departure from the Website project left
// behind, with ids named by what they are (the seed's names), so that two
// tables can be compared: the owner's and the member's own stream, the
// member's sync, what the project and the member's profile show.
type leaveOutcome struct {
	OwnerSaw, MemberSaw string
	MemberStreamEnded   bool
	Tombstones          []string
	Members             []string
	Unassigned          []string
	MemberProjects      []string
}

// leaveWebsite runs bob's departure from the Website project: by himself
// (leaveProject) or by its owner (removeProjectMember), and tells what it
// left.
func leaveWebsite(t *testing.T, byHimself bool) leaveOutcome {
	e := testenv.New(t)
	s := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := s.Project("Website relaunch")
	bob := newReplica("bob")
	bob.sync(t, e, 100)
	aliceWS, bobWS := e.MustDialWS(t, srv, "alice"), e.MustDialWS(t, srv, "bob")
	aliceWS.Subscribe(t, "a", leaveWatched, map[string]any{"p": web.ID})
	bobWS.Subscribe(t, "b", leaveWatched, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)

	if byHimself {
		var d struct{ LeaveProject string }
		e.MustQuery(t, "bob", mutLeave, map[string]any{"p": web.ID}, &d)
		if d.LeaveProject != web.ID {
			t.Errorf("leaveProject answered %q, want the project's id %s", d.LeaveProject, web.ID)
		}
	} else {
		e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)
	}
	var out leaveOutcome
	out.OwnerSaw = string(aliceWS.MustNext(t, "a").Data)
	out.MemberSaw = string(bobWS.MustNext(t, "b").Data)
	out.MemberStreamEnded = bobWS.MustRead(t).Type == "complete"

	label := map[string]string{web.ID: "project " + web.Name}
	for _, tk := range s.Tasks {
		label[tk.ID] = "task " + tk.Title
	}
	for _, c := range s.Comments {
		label[c.ID] = "comment " + c.Body
	}
	for _, p := range bob.sync(t, e, 100) {
		for _, tb := range p.Tombstones {
			name, ok := label[tb.NodeID]
			if !ok {
				name = tb.NodeID // a user: their id is their name
			}
			out.Tombstones = append(out.Tombstones, tb.Typename+" "+name)
		}
	}
	slices.Sort(out.Tombstones)
	bob.mustEqualFullRead(t, e)

	var view struct {
		Project struct {
			Members []struct{ User struct{ ID string } }
			Tasks   struct {
				Nodes []struct {
					Title    string
					Assignee *struct{ ID string }
				}
			}
		}
	}
	e.MustQuery(t, "alice", `query($p: ID!) { project(id: $p) { members { user { id } } tasks(first: 50) { nodes { title assignee { id } } } } }`,
		map[string]any{"p": web.ID}, &view)
	for _, m := range view.Project.Members {
		out.Members = append(out.Members, m.User.ID)
	}
	for _, tk := range view.Project.Tasks.Nodes {
		if tk.Assignee == nil {
			out.Unassigned = append(out.Unassigned, tk.Title)
		}
	}
	slices.Sort(out.Unassigned)
	var me struct {
		Me struct {
			Projects struct{ Nodes []struct{ Name string } }
		}
	}
	e.MustQuery(t, "bob", `{ me { projects(first: 10) { nodes { name } } } }`, nil, &me)
	for _, p := range me.Me.Projects.Nodes {
		out.MemberProjects = append(out.MemberProjects, p.Name)
	}
	if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
		t.Errorf("the table after bob's departure:\n%s", strings.Join(v, "\n"))
	}
	return out
}

// TestAMemberLeavesAsTheOwnerWouldRemoveThem: bob's leaveProject does what
// alice's removeProjectMember of bob does, but for who did it: the one
// MEMBER_REMOVED (its actor bob), his own event ends his stream, the same
// tombstones in his sync, the project's members, his tasks unassigned, his
// profile's projects, and a table whose invariants hold.
func TestAMemberLeavesAsTheOwnerWouldRemoveThem(t *testing.T) {
	left := leaveWebsite(t, true)
	removed := leaveWebsite(t, false)
	if want := `{"projectEvents":{"kind":"MEMBER_REMOVED","subjectId":"bob","actor":{"id":"bob"}}}`; left.OwnerSaw != want || left.MemberSaw != want {
		t.Errorf("after bob left, alice saw %s and bob %s; want %s", left.OwnerSaw, left.MemberSaw, want)
	}
	if !left.MemberStreamEnded {
		t.Error("bob's stream goes on after he left")
	}
	if !slices.Contains(left.Unassigned, "Fix the broken signup form") || slices.Contains(left.Members, "bob") ||
		slices.Contains(left.MemberProjects, "Website relaunch") || !slices.Contains(left.Tombstones, "Project project Website relaunch") {
		t.Errorf("after bob left: %+v", left)
	}
	removed.OwnerSaw = strings.Replace(removed.OwnerSaw, `"actor":{"id":"alice"}`, `"actor":{"id":"bob"}`, 1)
	removed.MemberSaw = strings.Replace(removed.MemberSaw, `"actor":{"id":"alice"}`, `"actor":{"id":"bob"}`, 1)
	if a, b := testenv.JSON(left), testenv.JSON(removed); a != b {
		t.Errorf("leaving and being removed differ (but for the actor):\n left:   %s\n removed: %s", a, b)
	}
}

// TestWhoMayLeave: the owner cannot (BAD_USER_INPUT, nothing changes); an
// outsider, or a project that does not exist, is NOT_FOUND; a malformed id
// BAD_USER_INPUT; a member removing themself with removeProjectMember is
// FORBIDDEN, pointed to leaveProject; a member who left cannot leave again.
func TestWhoMayLeave(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	before := e.Dump(t)
	for _, c := range []struct {
		name, viewer, code, doc string
		vars                    map[string]any
		message                 string
	}{
		{"the owner", "alice", "BAD_USER_INPUT", mutLeave, map[string]any{"p": web.ID}, "the project's owner cannot leave it"},
		{"an outsider", "eve", "NOT_FOUND", mutLeave, map[string]any{"p": web.ID}, "project not found"},
		{"no such project", "bob", "NOT_FOUND", mutLeave, map[string]any{"p": "prj#01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "project not found"},
		{"a malformed id", "bob", "BAD_USER_INPUT", mutLeave, map[string]any{"p": "tsk#01ARZ3NDEKTSV4RRFFQ69G5FAV"}, ""},
		{"removeProjectMember of oneself", "bob", "FORBIDDEN", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`,
			map[string]any{"p": web.ID}, "use leaveProject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := e.MustFail(t, c.viewer, c.code, c.doc, c.vars)
			if !strings.Contains(err.Message, c.message) {
				t.Errorf("%q, want it to say %q", err.Message, c.message)
			}
		})
	}
	if e.Dump(t) != before {
		t.Error("a refused leave changed the table")
	}
	e.MustQuery(t, "bob", mutLeave, map[string]any{"p": web.ID}, nil)
	e.MustFail(t, "bob", "NOT_FOUND", mutLeave, map[string]any{"p": web.ID})
}

// TestLeaveOnEveryTransport: leaveProject passes the one pipeline of every
// transport: over POST, a WebSocket and server-sent events a member leaves
// and the owner is refused alike; over GET it is a mutation (405); a
// retry with the same Idempotency-Key answers like the first call and
// leaves once (one event).
func TestLeaveOnEveryTransport(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web, app := s.Project("Website relaunch"), s.Project("Mobile app")
	vars := func(p string) map[string]any { return map[string]any{"p": p} }

	// POST, with an idempotency key, twice.
	aliceWS := e.MustDialWS(t, srv, "alice")
	aliceWS.Subscribe(t, "a", leaveWatched, vars(web.ID))
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	for i := range 2 {
		res := e.Send(t, map[string]any{"query": mutLeave, "variables": vars(web.ID)}, e.As("carol"), testenv.Header(pipeline.IdempotencyHeader, "leave-1")).Decode(t)
		if len(res.Errors) > 0 || !strings.Contains(string(res.Data), web.ID) {
			t.Fatalf("POST, call %d: %s %+v", i+1, res.Data, res.Errors)
		}
	}
	if d := string(aliceWS.MustNext(t, "a").Data); !strings.Contains(d, `"subjectId":"carol"`) {
		t.Errorf("alice saw %s, want carol's departure", d)
	}
	// A WebSocket: dave leaves the Mobile app; alice, its member, is not
	// its owner either, bob is.
	daveWS := e.MustDialWS(t, srv, "dave")
	daveWS.Subscribe(t, "l", mutLeave, vars(app.ID))
	if n := daveWS.MustNext(t, "l"); len(n.Errors) > 0 || !strings.Contains(string(n.Data), app.ID) {
		t.Errorf("over a WebSocket: %s %+v", n.Data, n.Errors)
	}
	bobWS := e.MustDialWS(t, srv, "bob")
	bobWS.Subscribe(t, "l", mutLeave, vars(app.ID))
	if n := bobWS.MustNext(t, "l"); len(n.Errors) != 1 || n.Errors[0].Code() != "BAD_USER_INPUT" {
		t.Errorf("the owner over a WebSocket: %s %+v, want BAD_USER_INPUT", n.Data, n.Errors)
	}
	// Server-sent events: alice leaves the Mobile app.
	resp := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "alice"), mutLeave, vars(app.ID))
	var got []string
	for ev := range testenv.ReadSSE(resp.Body) {
		got = append(got, ev.Type+" "+ev.Data)
	}
	if len(got) == 0 || !strings.Contains(got[0], app.ID) || strings.Contains(got[0], "errors") {
		t.Errorf("over SSE: %q", got)
	}
	// GET: a mutation is 405, and changes nothing.
	q := fmt.Sprintf("/query?query=%s&variables=%s", url.QueryEscape(mutLeave), url.QueryEscape(testenv.JSON(vars(web.ID))))
	req, _ := http.NewRequest(http.MethodGet, srv.URL+q, nil)
	req.Header.Set("Authorization", "Bearer "+e.Token(t, "bob"))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("over GET: HTTP %d, want 405", r.StatusCode)
	}
	var me struct {
		Me struct {
			Projects struct{ Nodes []struct{ ID string } }
		}
	}
	e.MustQuery(t, "bob", `{ me { projects(first: 10) { nodes { id } } } }`, nil, &me)
	if b, _ := json.Marshal(me); !strings.Contains(string(b), web.ID) {
		t.Errorf("bob left over GET: %s", b)
	}
	var members struct {
		Project struct {
			Members []struct{ User struct{ ID string } }
		}
	}
	e.MustQuery(t, "bob", `query($p: ID!) { project(id: $p) { members { user { id } } } }`, vars(app.ID), &members)
	if got := testenv.JSON(members); strings.Contains(got, "dave") || strings.Contains(got, "alice") || !strings.Contains(got, "bob") {
		t.Errorf("the Mobile app's members: %s, want bob only", got)
	}
}
