package graph_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Counters: Project.taskCounts and Task.commentCount (dynamo/counts.go).

type countsView struct{ Total, Todo, InProgress, Done int }

const (
	cntProject = `query($id: ID!) { project(id: $id) { taskCounts { total todo inProgress done } } }`
	cntTask    = `query($id: ID!) { task(id: $id) { commentCount } }`
	cntCreate  = `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Counted"}) { id commentCount } }`
	cntStatus  = `mutation($id: ID!, $s: TaskStatus!) { updateTask(input: {id: $id, status: $s}) { id status } }`
	cntDelete  = `mutation($id: ID!) { deleteTask(id: $id) }`
	cntComment = `mutation($id: ID!) { addComment(input: {taskId: $id, body: "counted"}) { id } }`
	cntUncomm  = `mutation($id: ID!) { deleteComment(id: $id) }`
)

func cntProjectCounts(t *testing.T, e *testenv.Env, viewer, id string) countsView {
	t.Helper()
	var got struct {
		Project struct{ TaskCounts countsView }
	}
	e.MustQuery(t, viewer, cntProject, map[string]any{"id": id}, &got)
	return got.Project.TaskCounts
}

func cntComments(t *testing.T, e *testenv.Env, viewer, id string) int {
	t.Helper()
	var got struct{ Task struct{ CommentCount int } }
	e.MustQuery(t, viewer, cntTask, map[string]any{"id": id}, &got)
	return got.Task.CommentCount
}

// cntExact fails the test when a counter of the table disagrees with the
// items it counts.
func cntExact(t *testing.T, e *testenv.Env, when string) {
	t.Helper()
	if v := testenv.CheckCounters(e.Items(t)); len(v) > 0 {
		t.Errorf("%s: counters disagree with the items:\n%s", when, strings.Join(v, "\n"))
	}
}

func cntID(got map[string]any, field string) string {
	v, _ := got[field].(map[string]any)
	id, _ := v["id"].(string)
	return id
}

func (c *countsView) add(status string, d int) {
	c.Total += d
	switch status {
	case "TODO":
		c.Todo += d
	case "IN_PROGRESS":
		c.InProgress += d
	case "DONE":
		c.Done += d
	}
}

func TestTaskCountsFollowEveryTaskChange(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch").ID
	want := countsView{Total: 6, Todo: 4, InProgress: 1, Done: 1}
	expect := func(step string) {
		t.Helper()
		if got := cntProjectCounts(t, e, "bob", web); got != want {
			t.Errorf("%s: taskCounts %+v, want %+v", step, got, want)
		}
		cntExact(t, e, step)
	}
	expect("the demo data")

	var got map[string]any
	e.MustQuery(t, "bob", cntCreate, map[string]any{"p": web}, &got)
	id := cntID(got, "createTask")
	want.add("TODO", 1)
	expect("createTask")
	// Every transition between the three statuses, each once.
	from := "TODO"
	for _, to := range []string{"IN_PROGRESS", "DONE", "TODO", "DONE", "IN_PROGRESS", "TODO"} {
		e.MustQuery(t, "bob", cntStatus, map[string]any{"id": id, "s": to}, nil)
		want.add(from, -1)
		want.add(to, 1)
		expect(from + " → " + to)
		from = to
	}
	e.MustQuery(t, "bob", cntStatus, map[string]any{"id": id, "s": "TODO"}, nil)
	expect("TODO → TODO (no change)")
	e.MustQuery(t, "bob", `mutation($id: ID!) { updateTask(input: {id: $id, title: "Renamed", tags: ["x"]}) { id } }`, map[string]any{"id": id}, nil)
	expect("a change of other fields")

	// A deleted task leaves the counts at once, before its cleanup runs.
	palette := s.Task("Pick a colour palette") // DONE
	e.MustQuery(t, s.MayDeleteTask(palette, "bob"), cntDelete, map[string]any{"id": palette.ID}, nil)
	want.add("DONE", -1)
	expect("deleteTask, before cleanup")
	e.MustQuery(t, "bob", cntDelete, map[string]any{"id": id}, nil)
	want.add("TODO", -1)
	expect("deleteTask of the created task")
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	expect("after cleanup")
	if got := cntProjectCounts(t, e, "alice", s.Project("Mobile app").ID); got != (countsView{5, 3, 1, 1}) {
		t.Errorf("another project's counts %+v, want its own (5 tasks, 3 to do, 1 in progress, 1 done)", got)
	}
}

func TestCommentCountFollowsComments(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	task := s.Task("Fix the broken signup form").ID // two comments, by carol and bob
	want := 2
	expect := func(step string) {
		t.Helper()
		if got := cntComments(t, e, "alice", task); got != want {
			t.Errorf("%s: commentCount %d, want %d", step, got, want)
		}
		cntExact(t, e, step)
	}
	expect("the demo data")
	var added []string
	for i := range 3 {
		var got map[string]any
		e.MustQuery(t, "carol", cntComment, map[string]any{"id": task}, &got)
		added = append(added, cntID(got, "addComment"))
		want++
		expect(fmt.Sprintf("addComment %d", i+1))
	}
	e.MustQuery(t, "carol", cntUncomm, map[string]any{"id": added[0]}, nil) // by its author
	want--
	expect("deleteComment by its author")
	e.MustQuery(t, "alice", cntUncomm, map[string]any{"id": added[1]}, nil) // by the project's owner
	want--
	expect("deleteComment by the owner")
	e.MustFail(t, "carol", "NOT_FOUND", cntUncomm, map[string]any{"id": added[0]})
	expect("deleteComment of a deleted comment")
	var list struct {
		Task struct {
			CommentCount int
			Comments     struct{ Nodes []struct{ ID string } }
		}
	}
	e.MustQuery(t, "bob", `query($id: ID!) { task(id: $id) { commentCount comments(first: 50) { nodes { id } } } }`,
		map[string]any{"id": task}, &list)
	if n := len(list.Task.Comments.Nodes); n != list.Task.CommentCount {
		t.Errorf("commentCount %d, but the task lists %d comments", list.Task.CommentCount, n)
	}
	// The created task starts at 0.
	var created map[string]any
	e.MustQuery(t, "bob", cntCreate, map[string]any{"p": s.Project("Website relaunch").ID}, &created)
	if n := created["createTask"].(map[string]any)["commentCount"]; n != float64(0) {
		t.Errorf("a new task's commentCount %v, want 0", n)
	}
}

// A task deleted with its comments leaves its project's counts at once; its
// comments, deleted later by the cleanup, are counted nowhere.
func TestDeletedTaskWithCommentsCountsAtOnce(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch").ID
	landing := s.Task("Write the landing page copy") // IN_PROGRESS, two comments
	t1 := landing.ID
	e.MustQuery(t, "bob", cntComment, map[string]any{"id": t1}, nil)
	e.MustQuery(t, s.MayDeleteTask(landing, "bob"), cntDelete, map[string]any{"id": t1}, nil)
	if got, want := cntProjectCounts(t, e, "alice", web), (countsView{5, 4, 0, 1}); got != want {
		t.Errorf("after deleteTask, before cleanup: %+v, want %+v", got, want)
	}
	cntExact(t, e, "before cleanup (its comments are still stored)")
	e.MustFail(t, "bob", "NOT_FOUND", cntComment, map[string]any{"id": t1})
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
		t.Errorf("after cleanup:\n%s", strings.Join(v, "\n"))
	}
}

// A deleted project takes its counts with its item; the tasks the cleanup
// has not reached yet keep exact comment counts, and nothing else moves.
func TestDeletedProjectCounts(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	app, web := s.Project("Mobile app").ID, s.Project("Website relaunch").ID
	crash := s.Task("Crash on start on Android 12").ID // in app, four comments
	webBefore := cntProjectCounts(t, e, "alice", web)
	e.MustQuery(t, "bob", `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": app}, nil)
	cntExact(t, e, "before cleanup")
	e.MustFail(t, "alice", "NOT_FOUND", cntComment, map[string]any{"id": crash})
	e.MustFail(t, "alice", "NOT_FOUND", cntStatus, map[string]any{"id": crash, "s": "DONE"})
	cntExact(t, e, "after refused changes to its tasks")
	if got := cntProjectCounts(t, e, "alice", web); got != webBefore {
		t.Errorf("another project's counts moved: %+v, want %+v", got, webBefore)
	}
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
		t.Errorf("after cleanup:\n%s", strings.Join(v, "\n"))
	}
}

// A mutation retried with its idempotency key counts once.
func TestCountsReplayedMutationCountsOnce(t *testing.T) {
	type state struct {
		project  countsView
		comments int
	}
	cases := []struct {
		name  string
		query func(s *testenv.Seed) (viewer, doc string, vars map[string]any)
		want  func(before state) state
	}{
		{"createTask", func(s *testenv.Seed) (string, string, map[string]any) {
			return "bob", cntCreate, map[string]any{"p": s.Project("Website relaunch").ID}
		}, func(b state) state { b.project.add("TODO", 1); return b }},
		{"updateTask's status", func(s *testenv.Seed) (string, string, map[string]any) {
			return "bob", cntStatus, map[string]any{"id": s.Task("Fix the broken signup form").ID, "s": "DONE"}
		}, func(b state) state { b.project.add("TODO", -1); b.project.add("DONE", 1); return b }},
		{"deleteTask", func(s *testenv.Seed) (string, string, map[string]any) {
			task := s.Task("Set up analytics")
			return s.MayDeleteTask(task, "bob"), cntDelete, map[string]any{"id": task.ID}
		}, func(b state) state { b.project.add("TODO", -1); return b }},
		{"addComment", func(s *testenv.Seed) (string, string, map[string]any) {
			return "bob", cntComment, map[string]any{"id": s.Task("Fix the broken signup form").ID}
		}, func(b state) state { b.comments++; return b }},
		{"deleteComment", func(s *testenv.Seed) (string, string, map[string]any) {
			for _, c := range s.Comments {
				if c.TaskID == s.Task("Fix the broken signup form").ID && c.AuthorID == "bob" {
					return "bob", cntUncomm, map[string]any{"id": c.ID}
				}
			}
			panic("no comment of bob's on the signup form task")
		}, func(b state) state { b.comments--; return b }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testenv.New(t)
			s := e.MustSeed(t)
			web, form := s.Project("Website relaunch").ID, s.Task("Fix the broken signup form").ID
			read := func() state { return state{cntProjectCounts(t, e, "alice", web), cntComments(t, e, "alice", form)} }
			want := tc.want(read())
			viewer, q, vars := tc.query(s)
			for i := range 3 {
				if res := idemDo(t, e, viewer, "count-once", q, vars); len(res.Errors) > 0 {
					t.Fatalf("call %d: %+v", i+1, res.Errors)
				}
				if got := read(); got != want {
					t.Errorf("after call %d with the same key: %+v, want %+v", i+1, got, want)
				}
			}
			cntExact(t, e, "after the replays")
		})
	}
}

// A refused or failed mutation changes no counter: most fail inside the
// transaction that also carries the counter's update.
func TestCountsFailedMutationCountsNothing(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, e *testenv.Env, s *testenv.Seed)
	}{
		{"createTask for a non-member (the transaction fails on the assignee)", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustFail(t, "bob", "BAD_USER_INPUT", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x", assigneeId: "eve"}) { id } }`,
				map[string]any{"p": s.Project("Website relaunch").ID})
		}},
		{"a status change with an assignee who is no member", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustFail(t, "bob", "BAD_USER_INPUT", `mutation($id: ID!) { updateTask(input: {id: $id, status: DONE, assigneeId: "eve"}) { id } }`,
				map[string]any{"id": s.Task("Fix the broken signup form").ID})
		}},
		{"a status change at a stale expectedVersion", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustFail(t, "bob", "CONFLICT", `mutation($id: ID!) { updateTask(input: {id: $id, status: DONE, expectedVersion: 7}) { id } }`,
				map[string]any{"id": s.Task("Fix the broken signup form").ID})
		}},
		{"deleteTask by a non-member", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustFail(t, "eve", "NOT_FOUND", cntDelete, map[string]any{"id": s.Task("Fix the broken signup form").ID})
		}},
		{"deleteComment by neither its author nor the owner", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			for _, c := range s.Comments {
				if c.TaskID == s.Task("Fix the broken signup form").ID && c.AuthorID == "bob" {
					e.MustFail(t, "carol", "FORBIDDEN", cntUncomm, map[string]any{"id": c.ID})
					return
				}
			}
			t.Fatal("no comment of bob's")
		}},
		{"an empty comment", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			e.MustFail(t, "bob", "BAD_USER_INPUT", `mutation($id: ID!) { addComment(input: {taskId: $id, body: "  "}) { id } }`,
				map[string]any{"id": s.Task("Fix the broken signup form").ID})
		}},
		{"cancelled contexts", func(t *testing.T, e *testenv.Env, s *testenv.Seed) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			form := s.Task("Fix the broken signup form").ID
			if _, err := e.Store.CreateTask(ctx, "bob", domain.TaskInput{ProjectID: s.Project("Website relaunch").ID, Title: "x"}); err == nil {
				t.Error("createTask on a cancelled context succeeded")
			}
			done := domain.StatusDone
			if _, err := e.Store.UpdateTask(ctx, "bob", dynamo.TaskPatch{ID: form, Status: domain.Opt[*domain.TaskStatus]{Set: true, Value: &done}}); err == nil {
				t.Error("updateTask on a cancelled context succeeded")
			}
			if _, err := e.Store.AddComment(ctx, "bob", domain.CommentInput{TaskID: form, Body: "x"}); err == nil {
				t.Error("addComment on a cancelled context succeeded")
			}
			if err := e.Store.DeleteTask(ctx, "bob", form); err == nil {
				t.Error("deleteTask on a cancelled context succeeded")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testenv.New(t)
			s := e.MustSeed(t)
			before := e.Dump(t)
			tc.run(t, e, s)
			if after := e.Dump(t); after != before {
				t.Errorf("a failed mutation changed the table:\n%s", mutDiffDump(before, after))
			}
		})
	}
}

// Concurrent writers: comments on one task and new titles for it (a whole
// write of the task the comment count must not lose to), new tasks and
// status changes in one project and renames of the project (a whole write
// of the project), all at once. Whatever succeeded is counted exactly once.
func TestCountsUnderConcurrentWriters(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web, form := s.Project("Website relaunch").ID, s.Task("Fix the broken signup form").ID
	var mu sync.Mutex
	ok := map[string]int{}
	var wg sync.WaitGroup
	run := func(kind, viewer, query string, vars map[string]any) {
		defer wg.Done()
		res := e.Query(t, viewer, query, vars)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case len(res.Errors) == 0:
			ok[kind]++
		case len(res.Errors) != 1 || res.Errors[0].Code() != "CONFLICT":
			t.Errorf("%s: %+v", kind, res.Errors)
		}
	}
	for i := range 12 {
		wg.Add(4)
		go run("comment", []string{"alice", "bob", "carol"}[i%3], cntComment, map[string]any{"id": form})
		go run("retitle", "bob", `mutation($id: ID!, $t: String!) { updateTask(input: {id: $id, title: $t}) { id } }`,
			map[string]any{"id": form, "t": fmt.Sprintf("Signup %d", i)})
		go run("create", "bob", cntCreate, map[string]any{"p": web})
		go run("rename", "alice", `mutation($id: ID!, $n: String!) { updateProject(input: {id: $id, name: $n}) { id } }`,
			map[string]any{"id": web, "n": fmt.Sprintf("Web %d", i)})
	}
	for _, title := range []string{"Set up analytics", "Migrate the blog", "Launch announcement"} {
		wg.Add(1)
		go run("status", "carol", cntStatus, map[string]any{"id": s.Task(title).ID, "s": "DONE"})
	}
	wg.Wait()
	if ok["comment"] == 0 || ok["create"] == 0 || ok["rename"] == 0 || ok["retitle"] == 0 {
		t.Fatalf("nothing of a kind succeeded: %v", ok)
	}
	want := countsView{Total: 6, Todo: 4, InProgress: 1, Done: 1}
	want.add("TODO", ok["create"])
	want.add("TODO", -ok["status"])
	want.add("DONE", ok["status"])
	if got := cntProjectCounts(t, e, "alice", web); got != want {
		t.Errorf("taskCounts %+v, want %+v (successes %v)", got, want, ok)
	}
	if got := cntComments(t, e, "alice", form); got != 2+ok["comment"] {
		t.Errorf("commentCount %d, want %d (successes %v)", got, 2+ok["comment"], ok)
	}
	cntExact(t, e, "after the writers")
	t.Logf("successes: %v", ok)
}

// A board (a project's tasks with their comment counts and the project's
// counts) costs no DynamoDB call more than the same board without them:
// the counters are on the items the board reads anyway.
func TestBoardCountsCostNoCall(t *testing.T) {
	e := testenv.New(t)
	p := seedWide(t, e, 20)
	board := func(counts string, taskCounts string) map[string]int {
		t.Helper()
		e.Calls.Reset()
		var got struct {
			Project struct {
				TaskCounts *countsView
				Tasks      struct {
					Nodes []struct {
						Title        string
						CommentCount *int
					}
				}
			}
		}
		e.MustQuery(t, "owner", `query($id: ID!) { project(id: $id) { name `+taskCounts+` tasks(first: 20) { nodes {
			title status assignee { name } `+counts+` } } } }`, map[string]any{"id": p.ID}, &got)
		if len(got.Project.Tasks.Nodes) != 20 {
			t.Fatalf("%d tasks, want 20", len(got.Project.Tasks.Nodes))
		}
		if counts != "" {
			for _, n := range got.Project.Tasks.Nodes {
				if n.CommentCount == nil || *n.CommentCount != 2 {
					t.Errorf("task %s: commentCount %v, want 2", n.Title, n.CommentCount)
				}
			}
			if c := got.Project.TaskCounts; c == nil || *c != (countsView{Total: 20, Todo: 20}) {
				t.Errorf("taskCounts %+v, want 20 to do", c)
			}
		}
		return e.Calls.ByOp()
	}
	without := board("", "")
	with := board("commentCount", "taskCounts { total todo inProgress done }")
	t.Logf("DynamoDB calls without counts %v, with %v", without, with)
	if !maps.Equal(with, without) {
		t.Errorf("the board with counts makes calls %v, without %v: want the same", with, without)
	}
	// The project with the viewer's membership, the task list, the
	// assignees: nothing else, with or without counts.
	if want := map[string]int{"BatchGetItem": 2, "Query": 1}; !maps.Equal(with, want) {
		t.Errorf("the board with counts makes calls %v, want %v", with, want)
	}
}

// TestMutationAnswersCarryTheCountsAfterThem: a task's creation, move and
// edit answer their project's taskCounts as the change left them (what the
// clients' mutations select so that a normalized cache updates every
// screen showing the counts without a refetch).
func TestMutationAnswersCarryTheCountsAfterThem(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	task := s.Task("Write the landing page copy") // in progress
	const counts = `project { taskCounts { total todo inProgress done } }`
	for _, m := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"createTask", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Counted"}) { ` + counts + ` } }`, map[string]any{"p": task.ProjectID}},
		{"updateTask", `mutation($id: ID!) { updateTask(input: {id: $id, status: DONE}) { ` + counts + ` } }`, map[string]any{"id": task.ID}},
		{"updateTask", `mutation($id: ID!) { updateTask(input: {id: $id, status: TODO, title: "Recounted"}) { ` + counts + ` } }`, map[string]any{"id": task.ID}},
	} {
		before := cntProjectCounts(t, e, "alice", task.ProjectID)
		var got map[string]struct {
			Project struct{ TaskCounts countsView }
		}
		e.MustQuery(t, "alice", m.query, m.vars, &got)
		after := cntProjectCounts(t, e, "alice", task.ProjectID)
		if got[m.name].Project.TaskCounts != after || after == before {
			t.Errorf("%s answered the counts %+v; the project's are %+v after it, %+v before", m.name, got[m.name].Project.TaskCounts, after, before)
		}
	}
}
