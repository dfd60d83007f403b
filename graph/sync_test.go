package graph_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// Query.sync (docs/sync.md): what each change brings to a replica, joins
// and departures, tokens.

// syncIDs are the ids of a page's upserts and tombstones, sorted.
func syncIDs(pages []*syncPage) (upserts, tombstones []string) {
	for _, p := range pages {
		for _, u := range p.Upserts {
			upserts = append(upserts, u["id"].(string))
		}
		for _, t := range p.Tombstones {
			tombstones = append(tombstones, t.NodeID)
		}
	}
	slices.Sort(upserts)
	slices.Sort(tombstones)
	return upserts, tombstones
}

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

func TestSyncBaseSyncIsWhatAFullReadShows(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, viewer := range []string{"alice", "bob", "carol", "dave", "eve"} {
		for _, first := range []int{1, 3, 100} {
			r := newReplica(viewer)
			pages := r.sync(t, e, first)
			r.mustEqualFullRead(t, e)
			if first == 1 && viewer != "eve" && len(pages) < 5 {
				t.Errorf("%s: a base sync with first 1 took %d pages", viewer, len(pages))
			}
			if _, tombs := syncIDs(pages); len(tombs) > 0 {
				t.Errorf("%s: a base sync with tombstones %v", viewer, tombs)
			}
		}
	}
}

// unchecked: a viewer whose replica must equal a full read after the sync,
// whatever the pages brought.
var unchecked = [2][]string{{"*"}}

// syncCase is a change made after a replica synced, and what the next sync
// must bring to each viewer (exactly those ids; nil: not checked).
type syncCase struct {
	name   string
	change func(t *testing.T, e *testenv.Env, s *testenv.Seed)
	// want: viewer → upserted ids and tombstoned ids, by name (syncNames).
	want map[string][2][]string
}

func TestSyncAfterEachChange(t *testing.T) {
	cases := []syncCase{
		{"nothing changed: empty pages", func(*testing.T, *testenv.Env, *testenv.Seed) {},
			map[string][2][]string{"alice": {}, "bob": {}, "eve": {}}},
		{"a task renamed: the task alone", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "bob", `mutation($id: ID!) { updateTask(input: {id: $id, title: "New"}) { id } }`, map[string]any{"id": s.Task("Set up analytics").ID}, nil)
		}, map[string][2][]string{"alice": {{"task:Set up analytics"}}, "carol": {{"task:Set up analytics"}}, "dave": {}}},
		{"a status changed: the task and its project (its counts)", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "bob", `mutation($id: ID!) { updateTask(input: {id: $id, status: DONE}) { id } }`, map[string]any{"id": s.Task("Set up analytics").ID}, nil)
		}, map[string][2][]string{"alice": {{"task:Set up analytics", "project:Website relaunch"}}}},
		{"a comment added: the comment and its task (its count)", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "dave", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "hi"}) { id } }`, map[string]any{"id": s.Task("Dark mode").ID}, nil)
		}, map[string][2][]string{"bob": {{"task:Dark mode", "comment:new"}}, "carol": {}}},
		{"a comment deleted: its tombstone and its task", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "alice", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": s.Comments[0].ID}, nil)
		}, map[string][2][]string{"bob": {{"task:Write the landing page copy"}, {"comment:0"}}}},
		{"a task deleted: its tombstone and its comments'", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			landing := s.Task("Write the landing page copy")
			e.MustQuery(t, s.MayDeleteTask(landing, "carol"), `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": landing.ID}, nil)
			mustCleanup(t, e) // its comments' items go: their tombstones came with the task's
		}, map[string][2][]string{"alice": {{"project:Website relaunch"}, {"task:Write the landing page copy", "comment:0", "comment:1"}}}},
		{"a project renamed: the project", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "alice", `mutation($id: ID!) { updateProject(input: {id: $id, name: "Web"}) { id } }`, map[string]any{"id": s.Project("Website relaunch").ID}, nil)
		}, map[string][2][]string{"carol": {{"project:Website relaunch"}}, "dave": {}}},
		{"a member added: the project and the user; the new member: all of the project", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "alice", `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "eve") { id } }`, map[string]any{"p": s.Project("Website relaunch").ID}, nil)
		}, map[string][2][]string{"bob": {{"project:Website relaunch", "user:eve"}}, "eve": unchecked}},
		{"a member removed: the project, and the user where no other project is shared; the removed: tombstones of all of it", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "carol") { id } }`, map[string]any{"p": s.Project("Website relaunch").ID}, nil)
		}, map[string][2][]string{"bob": {{"project:Website relaunch", "task:Pick a colour palette"}, {"user:carol"}}, "dave": {}, "carol": unchecked}},
		{"a project deleted: tombstones of all of it, after its cleanup too", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "alice", `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": s.Project("Website relaunch").ID}, nil)
			mustCleanup(t, e)
		}, map[string][2][]string{"bob": unchecked, "carol": unchecked, "dave": {}}},
		{"a profile renamed: the user, once the cleanup worker copied it; the viewer's own at once", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustQuery(t, "carol", `mutation { updateProfile(input: {name: "Caroline"}) { id } }`, nil, nil)
			mustCleanup(t, e)
		}, map[string][2][]string{"alice": {{"user:carol"}}, "dave": {{"user:carol"}}, "carol": {{"user:carol"}}, "eve": {}}},
	}
	// Each case twice: the second with every sync writing its marks
	// (dynamo.Store.MarkEverySync), as a viewer in many projects does; the
	// change then unmarks its project first.
	for _, tc := range cases {
		for _, marks := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{true: " (marked)"}[marks], func(t *testing.T) { syncAfterChange(t, tc, marks) })
		}
	}
}

func syncAfterChange(t *testing.T, tc syncCase, marks bool) {
	e := testenv.New(t)
	e.Store.MarkEverySync = marks
	s := e.MustSeed(t)
	replicas := map[string]*replica{}
	for v := range tc.want {
		replicas[v] = newReplica(v)
		replicas[v].sync(t, e, 100)
	}
	before := e.Items(t)
	tc.change(t, e, s)
	for v, want := range tc.want {
		pages := replicas[v].sync(t, e, 100)
		replicas[v].mustEqualFullRead(t, e)
		if slices.Equal(want[0], unchecked[0]) {
			continue
		}
		ups, tombs := syncIDs(pages)
		wantUps, wantTombs := syncNames(t, e, s, before, want[0]), syncNames(t, e, s, before, want[1])
		if !slices.Equal(ups, wantUps) || !slices.Equal(tombs, wantTombs) {
			t.Errorf("%s got upserts %v, tombstones %v;\nwant %v, %v", v, ups, tombs, wantUps, wantTombs)
		}
	}
	v := slices.DeleteFunc(testenv.CheckTable(e.Items(t)), func(v string) bool { return strings.HasPrefix(v, "cleanup job left") })
	if len(v) > 0 {
		t.Errorf("table invariants:\n%s", strings.Join(v, "\n"))
	}
}

// syncNames turns names of a case into ids: "task:<title>",
// "project:<name>", "user:<id>", "comment:<index in the seed>" and
// "comment:new" (a comment the table has and the seed had not).
func syncNames(t *testing.T, e *testenv.Env, s *testenv.Seed, before []map[string]any, names []string) []string {
	t.Helper()
	ids := []string{}
	for _, n := range names {
		kind, name, _ := strings.Cut(n, ":")
		switch kind {
		case "task":
			ids = append(ids, s.Task(name).ID)
		case "project":
			ids = append(ids, s.Project(name).ID)
		case "user":
			ids = append(ids, name)
		case "comment":
			if name != "new" {
				i := 0
				for j := range name {
					i = i*10 + int(name[j]-'0')
				}
				ids = append(ids, s.Comments[i].ID)
				continue
			}
			old := map[string]bool{}
			for _, it := range before {
				old[it["PK"].(string)+" "+it["SK"].(string)] = true
			}
			for _, it := range e.Items(t) {
				if it["type"] == "COMMENT" && !old[it["PK"].(string)+" "+it["SK"].(string)] {
					ids = append(ids, it["id"].(string))
				}
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func mustCleanup(t *testing.T, e *testenv.Env) {
	t.Helper()
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSyncTokens(t *testing.T) {
	e, clock := newSyncEnv(t)
	s := e.MustSeed(t)
	alice := newReplica("alice")
	alice.sync(t, e, 100)
	token := *alice.token
	refuse := func(t *testing.T, viewer string, vars map[string]any, code, msg string) {
		t.Helper()
		before := e.Dump(t)
		res := e.Query(t, viewer, syncDoc, vars)
		if len(res.Errors) != 1 || res.Errors[0].Code() != code || !strings.Contains(res.Errors[0].Message, msg) || !testenv.NullData(res.Data) {
			t.Errorf("got %s %+v; want one %s saying %q", res.Data, res.Errors, code, msg)
		}
		if e.Dump(t) != before {
			t.Error("a refused sync changed the table")
		}
	}
	for _, tc := range []struct {
		name, viewer string
		vars         map[string]any
		code, msg    string
	}{
		{"garbage is no token", "alice", map[string]any{"since": "garbage"}, "BAD_USER_INPUT", "since is not a sync token of this viewer"},
		{"a cursor of projectEvents is no token", "alice", map[string]any{"since": strings.Repeat("A", 50)}, "BAD_USER_INPUT", "since is not a sync token of this viewer"},
		{"a token changed in one character", "alice", map[string]any{"since": flip(token)}, "BAD_USER_INPUT", "since is not a sync token of this viewer"},
		{"another viewer's token", "bob", map[string]any{"since": token}, "BAD_USER_INPUT", "since is not a sync token of this viewer"},
		{"first 0", "alice", map[string]any{"first": 0}, "BAD_USER_INPUT", "first must be between 1 and 100"},
		{"first 101", "alice", map[string]any{"first": 101}, "BAD_USER_INPUT", "first must be between 1 and 100"},
	} {
		t.Run(tc.name, func(t *testing.T) { refuse(t, tc.viewer, tc.vars, tc.code, tc.msg) })
	}
	t.Run("a token older than the retention is SYNC_TOKEN_EXPIRED; one just within it is not", func(t *testing.T) {
		defer clock.Advance(-clock.Now().Sub(testenv.Now))
		clock.Advance(e.Store.Retention() - time.Minute)
		if res := e.Query(t, "alice", syncDoc, map[string]any{"since": token}); len(res.Errors) > 0 {
			t.Errorf("a token 30 days old less a minute: %+v", res.Errors)
		}
		clock.Advance(2 * time.Minute)
		refuse(t, "alice", map[string]any{"since": token}, "SYNC_TOKEN_EXPIRED", "older than the 30 days the server keeps changes for")
	})
	t.Run("a token of a change log rebuilt since is SYNC_TOKEN_EXPIRED", func(t *testing.T) {
		e := testenv.New(t)
		e.MustSeed(t)
		r := newReplica("alice")
		r.sync(t, e, 100)
		e.MustSeed(t) // another import: the change log is built afresh
		res := e.Query(t, "alice", syncDoc, map[string]any{"since": *r.token})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "SYNC_TOKEN_EXPIRED" || !strings.Contains(res.Errors[0].Message, "rebuilt") {
			t.Errorf("got %+v", res.Errors)
		}
	})
	t.Run("a page's token goes on where it stopped: pages of first 1 bring what one page brings", func(t *testing.T) {
		one, many := newReplica("bob"), newReplica("bob")
		one.sync(t, e, 100)
		many.sync(t, e, 100)
		e.MustQuery(t, "alice", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "A"}) { id } }`, map[string]any{"p": s.Project("Website relaunch").ID}, nil)
		e.MustQuery(t, "dave", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "B"}) { id } }`, map[string]any{"p": s.Project("Mobile app").ID}, nil)
		a, b := one.sync(t, e, 100), many.sync(t, e, 1)
		if len(a) != 1 || len(b) < 2 {
			t.Errorf("%d pages with first 100, %d with first 1", len(a), len(b))
		}
		if d := diffObjects(many.objs, one.objs); d != "" {
			t.Errorf("paged replica differs:\n%s", d)
		}
	})
}

// flip changes one character in the middle of s.
func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// A removed member's sync gives the tombstones of what they had, and
// nothing of what was made after they left, not even its id.
func TestSyncGivesNothingMadeAfterTheViewerLeft(t *testing.T) {
	e, clock := newSyncEnv(t)
	s := e.MustSeed(t)
	carol := newReplica("carol")
	clock.Advance(time.Second)
	carol.sync(t, e, 100)
	web := s.Project("Website relaunch").ID
	clock.Advance(time.Second)
	e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "carol") { id } }`, map[string]any{"p": web}, nil)
	clock.Advance(time.Second)
	var made struct{ CreateTask struct{ ID string } }
	e.MustQuery(t, "alice", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "After carol"}) { id } }`, map[string]any{"p": web}, &made)
	var c struct{ AddComment struct{ ID string } }
	e.MustQuery(t, "bob", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "after"}) { id } }`, map[string]any{"id": s.Task("Set up analytics").ID}, &c)
	pages := carol.sync(t, e, 2)
	carol.mustEqualFullRead(t, e)
	ups, tombs := syncIDs(pages)
	for _, id := range []string{made.CreateTask.ID, c.AddComment.ID} {
		if slices.Contains(ups, id) || slices.Contains(tombs, id) {
			t.Errorf("carol's sync names %s, made after she left", id)
		}
	}
	if !slices.Contains(tombs, web) || !slices.Contains(tombs, s.Task("Set up analytics").ID) {
		t.Errorf("carol's tombstones %v miss the project or its tasks", tombs)
	}
	b, _ := json.Marshal(pages)
	if strings.Contains(string(b), "After carol") {
		t.Error("the page shows the task made after carol left")
	}
}

// A client syncs, then subscribes to a project with the sync's last token
// as after: the stream starts where the sync read the project, so a change
// made between the two comes as an event, and nothing is missed.
func TestSyncThenLiveFromTheTokenMissesNothing(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := s.Project("Website relaunch").ID
	task := s.Task("Set up analytics").ID
	mustUpdateTask(t, e, "bob", task, `title: "before the sync"`)
	alice := newReplica("alice")
	alice.sync(t, e, 100)
	token := *alice.token
	mustUpdateTask(t, e, "bob", task, `title: "between"`)

	c := e.MustDialWS(t, srv, "alice")
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web, "after": token})
	if got := decodeEvent(t, c.MustNext(t, "1")).ProjectEvents.Task.Title; got != "between" {
		t.Fatalf("the first event after the sync's token shows %q, want the change made after the sync", got)
	}
	testenv.WaitSubscribers(t, lv.Hub, web, 1)
	mustUpdateTask(t, e, "bob", task, `title: "live"`)
	if got := decodeEvent(t, c.MustNext(t, "1")).ProjectEvents.Task.Title; got != "live" {
		t.Fatalf("then %q, want the live change", got)
	}

	t.Run("a token of a sync with more pages is refused as after", func(t *testing.T) {
		r := newReplica("alice")
		p, _ := r.page(t, e, 1)
		if !p.HasMore {
			t.Fatal("a first page of 1 change says no more")
		}
		c := e.MustDialWS(t, srv, "alice")
		c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web, "after": p.NextToken})
		if got := mustEndWith(t, c, "1", "BAD_USER_INPUT"); !strings.Contains(got.Message, "more pages") {
			t.Errorf("message %q", got.Message)
		}
	})
	t.Run("another viewer's token is refused as after like a bad cursor", func(t *testing.T) {
		c := e.MustDialWS(t, srv, "bob")
		c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web, "after": token})
		if got := mustEndWith(t, c, "1", "BAD_USER_INPUT"); got.Message != "after is not a cursor of this project's events" {
			t.Errorf("message %q", got.Message)
		}
	})
}
