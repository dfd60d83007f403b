package graph_test

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/bench"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// HTTP caching of GET queries (graph/etag, docs/caching.md).

// cacheClock is a clock the test moves: the store's and the pipeline's.
type cacheClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *cacheClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock past the settle window (the default's).
func (c *cacheClock) Advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(pipeline.DefaultTimeout + pipeline.DefaultHTTPCacheSettle + time.Second)
}

// cacheEnv is an Env whose handler and store share a clock the test moves.
func cacheEnv(t *testing.T) (*testenv.Env, http.Handler, *cacheClock) {
	t.Helper()
	return cacheEnvOn(t, testenv.EmbeddedStore)
}

// cacheEnvOn is cacheEnv on backend b.
func cacheEnvOn(t *testing.T, b testenv.Backend) (*testenv.Env, http.Handler, *cacheClock) {
	t.Helper()
	e := testenv.NewOn(t, b)
	clk := &cacheClock{t: testenv.Now}
	e.Store.Now = clk.Now
	h := e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Now: clk.Now}})
	return e, h, clk
}

// get asks query with GET as viewer, with the tag ifNoneMatch ("": none).
func cacheGet(t *testing.T, e *testenv.Env, h http.Handler, viewer, query string, vars map[string]any, ifNoneMatch string) testenv.Raw {
	t.Helper()
	params := map[string]any{"query": query}
	if vars != nil {
		params["variables"] = vars
	}
	opts := []testenv.RequestOption{testenv.GET(), e.As(viewer), testenv.Via(h)}
	if ifNoneMatch != "" {
		opts = append(opts, testenv.Header("If-None-Match", ifNoneMatch))
	}
	return e.Send(t, params, opts...)
}

// TestTheDashboardsNotModifiedCostsTwoCalls pins what a 304 costs: for
// the benchmark's dashboard (10 projects × 20 tasks × 5 comments, with
// members, assignees and authors), the pending profile jobs (one Query:
// the answer shows other users) and the viewer's profile with the 10
// projects (one BatchGetItem, eventually consistent: 11 items under 4 KB,
// 0.5 RCU each), against the answer's 36 calls; for a project's board, the
// same two with one project; for the viewer's profile, the profile alone.
// On DynamoDB Local, which reports what each call consumed (an empty Query
// nothing), the read units too.
func TestTheDashboardsNotModifiedCostsTwoCalls(t *testing.T) {
	screens := []struct {
		name, query string
		vars        func(f *bench.Fixture) map[string]any
		calls       map[string]int
		rcu         float64
	}{
		{"dashboard", benchOp(t, "dashboard"), nil, map[string]int{"Query": 1, "BatchGetItem": 1}, 5.5},
		{"project board", cacheBoard, func(f *bench.Fixture) map[string]any { return map[string]any{"id": f.ProjectID} },
			map[string]int{"Query": 1, "BatchGetItem": 1}, 1},
		{"profile", `{ me { id name email createdAt } }`, nil, map[string]int{"BatchGetItem": 1}, 0.5},
	}
	for _, b := range []testenv.Backend{testenv.EmbeddedStore, testenv.DynamoDBLocal} {
		t.Run(b.String(), func(t *testing.T) {
			e, h, clk := cacheEnvOn(t, b)
			clk.t = bench.Now
			d, f := bench.BuildDataset(e.Store, 1)
			e.MustImport(t, d)
			clk.Advance()
			for _, sc := range screens {
				var vars map[string]any
				if sc.vars != nil {
					vars = sc.vars(f)
				}
				e.Calls.Reset()
				first := cacheGet(t, e, h, f.Viewer, sc.query, vars, "")
				answered, answeredRCU := e.Calls.Total(), read(e)
				tag := first.Header.Get("ETag")
				if first.Status != http.StatusOK || tag == "" {
					t.Fatalf("the %s answered %d with ETag %q: %.300s", sc.name, first.Status, tag, first.Body)
				}
				e.Calls.Reset()
				again := cacheGet(t, e, h, f.Viewer, sc.query, vars, tag)
				if again.Status != http.StatusNotModified || len(again.Body) != 0 || again.Header.Get("ETag") != tag {
					t.Fatalf("the unchanged %s answered %d, ETag %q, %d bytes; want 304 with its tag and no body",
						sc.name, again.Status, again.Header.Get("ETag"), len(again.Body))
				}
				if got := e.Calls.ByOp(); !maps.Equal(got, sc.calls) {
					t.Errorf("the %s's 304 made %v calls, want %v", sc.name, got, sc.calls)
				}
				rcu := read(e)
				t.Logf("%s, %s: the answer: %d calls, %.1f RCU; its 304: %d calls, %.1f RCU (%.1f%%)", b, sc.name, answered, answeredRCU,
					e.Calls.Total(), rcu, 100*rcu/max(answeredRCU, 1))
				if b == testenv.DynamoDBLocal && rcu != sc.rcu {
					t.Errorf("the %s's 304 consumed %.1f RCU, want %.1f", sc.name, rcu, sc.rcu)
				}
			}
		})
	}
}

// read is the read units the Env's calls consumed (reported by DynamoDB
// Local, none by the embedded store).
func read(e *testenv.Env) float64 { r, _ := e.Calls.Capacity(); return r }

// benchOp is the benchmark suite's operation name's document.
func benchOp(t *testing.T, name string) string {
	t.Helper()
	for _, op := range bench.Suite() {
		if op.Name == name {
			return op.Query
		}
	}
	t.Fatalf("no operation %s in the benchmark's suite", name)
	return ""
}

// cacheSetup makes profiles for users and a project of the first with the
// others as members, and returns the project's id.
func cacheSetup(t *testing.T, e *testenv.Env, h http.Handler, users ...string) string {
	t.Helper()
	w := &cacheWorld{e: e, h: h}
	for _, u := range users {
		w.mutate(t, u, `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": u})
	}
	d := w.mutate(t, users[0], `mutation { createProject(input: {name: "Shared"}) { id } }`, nil)
	p := d["createProject"].(map[string]any)["id"].(string)
	for _, u := range users[1:] {
		if w.mutate(t, users[0], `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`,
			map[string]any{"p": p, "u": u}) == nil {
			t.Fatalf("adding %s failed", u)
		}
	}
	return p
}

const cacheBoard = `query($id: ID!) { project(id: $id) { id name members { role user { id name } } } }`

// TestAProfileEditInvalidatesTheTagsThatShowIt: another member's new name
// shows at once (their profile is read), while the seqs of their projects
// move only when the cleanup worker copies the profile into their change
// logs; until then their pending job, which the tag's filter of users
// names, refuses the 304.
func TestAProfileEditInvalidatesTheTagsThatShowIt(t *testing.T) {
	e, h, clk := cacheEnv(t)
	p := cacheSetup(t, e, h, "ana", "ben")
	clk.Advance()
	vars := map[string]any{"id": p}
	tag := cacheGet(t, e, h, "ben", cacheBoard, vars, "").Header.Get("ETag")
	if got := cacheGet(t, e, h, "ben", cacheBoard, vars, tag).Status; tag == "" || got != http.StatusNotModified {
		t.Fatalf("the unchanged board: tag %q, then %d; want a tag, then 304", tag, got)
	}
	w := &cacheWorld{e: e, h: h}
	w.mutate(t, "ana", `mutation { updateProfile(input: {name: "Ana Renamed"}) { id } }`, nil)
	clk.Advance()
	if got := cacheGet(t, e, h, "ben", cacheBoard, vars, tag); got.Status != http.StatusOK || !bytes.Contains(got.Body, []byte("Ana Renamed")) {
		t.Fatalf("with ana's profile job pending: %d %s; want 200 with her new name", got.Status, got.Body)
	}
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := cacheGet(t, e, h, "ben", cacheBoard, vars, tag); got.Status != http.StatusOK {
		t.Fatalf("with ana's profile copied: %d; want 200 (the project's seq moved)", got.Status)
	}
}

const cacheThread = `query($id: ID!) { task(id: $id) { id title comments(first: 5) { edges { node { id body author { id name } } } } } }`

// TestAUserShownOutsideTheProjectsHasNoTag: a comment's author who has
// left its project, and whom the viewer still sees through another
// project, is shown by a task thread whose project's seq does not follow
// them (their new name moves the seqs of their own projects): no tag.
func TestAUserShownOutsideTheProjectsHasNoTag(t *testing.T) {
	e, h, clk := cacheEnv(t)
	p := cacheSetup(t, e, h, "ana", "ben", "cy")
	w := &cacheWorld{e: e, h: h}
	q := w.mutate(t, "ana", `mutation { createProject(input: {name: "Other"}) { id } }`, nil)["createProject"].(map[string]any)["id"].(string)
	for _, u := range []string{"ben", "cy"} {
		w.mutate(t, "ana", `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`, map[string]any{"p": q, "u": u})
	}
	task := w.mutate(t, "ana", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "T"}) { id } }`, map[string]any{"p": p})["createTask"].(map[string]any)["id"].(string)
	w.mutate(t, "ben", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "mine"}) { id } }`, map[string]any{"id": task})
	vars := map[string]any{"id": task}
	clk.Advance()
	if got := cacheGet(t, e, h, "cy", cacheThread, vars, ""); got.Status != http.StatusOK || got.Header.Get("ETag") == "" {
		t.Fatalf("the thread while ben is a member: %d, ETag %q; want 200 with a tag", got.Status, got.Header.Get("ETag"))
	}
	w.mutate(t, "ana", `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`, map[string]any{"p": p, "u": "ben"})
	clk.Advance()
	got := cacheGet(t, e, h, "cy", cacheThread, vars, "")
	if !bytes.Contains(got.Body, []byte(`"ben"`)) {
		t.Fatalf("the thread does not show ben, seen through the other project: %s", got.Body)
	}
	if tag := got.Header.Get("ETag"); tag != "" {
		t.Errorf("the thread showing ben, a member of none of its projects, has ETag %s", tag)
	}
}

// TestAChangeInAnotherProjectLeavesTheTagValid: every kind of change in a
// project the viewer is not in, by users who share none with them, leaves
// the viewer's tags valid (304), on every screen.
func TestAChangeInAnotherProjectLeavesTheTagValid(t *testing.T) {
	e, h, clk := cacheEnv(t)
	mine := cacheSetup(t, e, h, "ana", "ben")
	w := &cacheWorld{e: e, h: h}
	for _, u := range []string{"cy", "dee"} {
		w.mutate(t, u, `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": u})
	}
	other := w.mutate(t, "cy", `mutation { createProject(input: {name: "Theirs"}) { id } }`, nil)["createProject"].(map[string]any)["id"].(string)
	myTask := w.mutate(t, "ana", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Mine", assigneeId: "ben"}) { id } }`,
		map[string]any{"p": mine})["createTask"].(map[string]any)["id"].(string)
	w.mutate(t, "ben", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "hi"}) { id } }`, map[string]any{"id": myTask})
	clk.Advance()
	tags := map[string]string{}
	varsOf := func(sc string) map[string]any {
		switch sc {
		case "project board", "project tasks":
			return map[string]any{"id": mine}
		case "task thread", "node":
			return map[string]any{"id": myTask}
		}
		return nil
	}
	for _, sc := range cacheScreens {
		if sc.tagged {
			if tags[sc.name] = cacheGet(t, e, h, "ana", sc.query, varsOf(sc.name), "").Header.Get("ETag"); tags[sc.name] == "" {
				t.Fatalf("ana's %s has no tag", sc.name)
			}
		}
	}
	var theirTask, theirComment string
	changes := []struct {
		what string
		do   func()
	}{
		{"a rename", func() {
			w.mutate(t, "cy", `mutation($id: ID!) { updateProject(input: {id: $id, name: "Renamed"}) { id } }`, map[string]any{"id": other})
		}},
		{"a member added", func() {
			w.mutate(t, "cy", `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "dee") { id } }`, map[string]any{"p": other})
		}},
		{"a task made", func() {
			theirTask = w.mutate(t, "dee", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Theirs", tags: ["ui"], assigneeId: "dee"}) { id } }`,
				map[string]any{"p": other})["createTask"].(map[string]any)["id"].(string)
		}},
		{"a task changed and retagged", func() {
			w.mutate(t, "cy", `mutation($id: ID!) { updateTask(input: {id: $id, title: "Changed", status: DONE, tags: ["db"]}) { id } }`, map[string]any{"id": theirTask})
		}},
		{"a comment made", func() {
			theirComment = w.mutate(t, "cy", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "x"}) { id } }`,
				map[string]any{"id": theirTask})["addComment"].(map[string]any)["id"].(string)
		}},
		{"a comment deleted", func() {
			w.mutate(t, "cy", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": theirComment})
		}},
		{"a task deleted", func() {
			w.mutate(t, "cy", `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": theirTask})
		}},
		{"a member leaving", func() {
			w.mutate(t, "dee", `mutation($p: ID!) { leaveProject(projectId: $p) }`, map[string]any{"p": other})
		}},
		{"a profile edited", func() {
			w.mutate(t, "dee", `mutation { updateProfile(input: {name: "Dee Renamed"}) { id } }`, nil)
			if _, err := e.Store.RunCleanup(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"the project deleted", func() {
			w.mutate(t, "cy", `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": other})
		}},
	}
	for _, c := range changes {
		c.do()
		clk.Advance()
		for _, sc := range cacheScreens {
			if sc.tagged {
				if got := cacheGet(t, e, h, "ana", sc.query, varsOf(sc.name), tags[sc.name]); got.Status != http.StatusNotModified {
					t.Errorf("after %s in a project ana is not in, her %s answered %d, not 304", c.what, sc.name, got.Status)
				}
			}
		}
	}
}

// TestARecentChangeHasNoTagUntilItSettles: an answer showing a project
// changed less than the settle window before it began gets no tag (its
// eventually consistent reads and index reads might not all show the
// change, and a tag would pair the new seq with old data for good); one
// made after it does. A POST is never tagged, a 304 never runs the query.
func TestARecentChangeHasNoTagUntilItSettles(t *testing.T) {
	e, h, clk := cacheEnv(t)
	p := cacheSetup(t, e, h, "ana", "ben")
	vars := map[string]any{"id": p}
	if got := cacheGet(t, e, h, "ben", cacheBoard, vars, ""); got.Status != http.StatusOK || got.Header.Get("ETag") != "" {
		t.Fatalf("an answer made as the project changed: %d, ETag %q; want 200 without one", got.Status, got.Header.Get("ETag"))
	}
	clk.mu.Lock()
	clk.t = clk.t.Add(pipeline.DefaultTimeout) // within the default window: the timeout and 2 s
	clk.mu.Unlock()
	if tag := cacheGet(t, e, h, "ben", cacheBoard, vars, "").Header.Get("ETag"); tag != "" {
		t.Fatalf("an answer %v after the change has ETag %s", pipeline.DefaultTimeout, tag)
	}
	clk.Advance()
	got := cacheGet(t, e, h, "ben", cacheBoard, vars, "")
	tag := got.Header.Get("ETag")
	if tag == "" || got.Header.Get("Cache-Control") != "private, no-cache" || !slices.Contains(got.Header.Values("Vary"), "Authorization, Accept") {
		t.Fatalf("a settled answer: ETag %q, Cache-Control %q, Vary %q", tag, got.Header.Get("Cache-Control"), got.Header.Values("Vary"))
	}
	post := e.Send(t, map[string]any{"query": cacheBoard, "variables": vars}, e.As("ben"), testenv.Via(h), testenv.Header("If-None-Match", tag))
	if post.Status != http.StatusOK || post.Header.Get("ETag") != "" {
		t.Errorf("a POST with the tag: %d, ETag %q; want 200 without one", post.Status, post.Header.Get("ETag"))
	}
	if got := cacheGet(t, e, h, "ana", cacheBoard, vars, tag); got.Status != http.StatusOK {
		t.Errorf("another viewer with ben's tag: %d, want 200", got.Status)
	}
	e.Calls.Reset()
	// The check's two calls (the pending jobs: the board shows ana; the
	// profile with the project), none of the query's (its members' Query).
	want := map[string]int{"Query": 1, "BatchGetItem": 1}
	if got := cacheGet(t, e, h, "ben", cacheBoard, vars, "W/"+tag); got.Status != http.StatusNotModified || !maps.Equal(e.Calls.ByOp(), want) {
		t.Errorf("ben's tag (weak, as If-None-Match compares): %d after %v; want 304 after %v", got.Status, e.Calls, want)
	}
}
