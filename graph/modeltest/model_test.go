package modeltest

import (
	"flag"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The size and seed of TestModel's run.
var (
	modelNFlag    = flag.Int("model.n", 0, "mutations TestModel tries (default 200; env TASKGRAPH_MODEL_N)")
	modelSeedFlag = flag.Uint64("model.seed", 0, "seed of TestModel's random sequence (default 1; env TASKGRAPH_MODEL_SEED)")
	diffNFlag     = flag.Int("diff.n", 60, "mutations TestModelAgainstDynamoDBLocal tries (its -model.seed picks them)")
)

func modelSettings(t *testing.T) (n int, seed uint64) {
	n, seed = 200, 1
	if v := os.Getenv("TASKGRAPH_MODEL_N"); v != "" {
		x, err := strconv.Atoi(v)
		if err != nil || x < 1 {
			t.Fatalf("TASKGRAPH_MODEL_N=%q is not a positive number", v)
		}
		n = x
	}
	if v := os.Getenv("TASKGRAPH_MODEL_SEED"); v != "" {
		x, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TASKGRAPH_MODEL_SEED=%q is not a number", v)
		}
		seed = x
	}
	if *modelNFlag > 0 {
		n = *modelNFlag
	}
	if *modelSeedFlag > 0 {
		seed = *modelSeedFlag
	}
	return n, seed
}

func TestModel(t *testing.T) {
	n, seed := modelSettings(t)
	runModel(t, testenv.New(t), n, seed)
}

// TestModelAgainstDynamoDBLocal is the differential test: the model test's
// operations, with every DynamoDB call the store makes sent to the
// embedded store and to DynamoDB Local, their answers compared call by
// call (testenv.Tee: items and their order, counts, LastEvaluatedKey,
// error codes, a cancelled transaction's reasons). -args -diff.n N runs N
// mutations (default 60); -model.seed picks the sequence.
func TestModelAgainstDynamoDBLocal(t *testing.T) {
	_, seed := modelSettings(t)
	e, tee := testenv.NewDiff(t)
	runModel(t, e, *diffNFlag, seed)
	calls, total := tee.Calls(), 0
	for _, n := range calls {
		total += n
	}
	t.Logf("%d calls compared (%v), %d answered differently", total, calls, tee.Diffs())
	if calls["TransactWriteItems"] == 0 || calls["Query"] == 0 || calls["BatchGetItem"] == 0 || calls["GetItem"] == 0 {
		t.Errorf("too few calls compared: %v", calls)
	}
}

// runModel runs n mutations of the model test's random sequence seed on e,
// checking the table and the access patterns against the model.
func runModel(t *testing.T, e *testenv.Env, n int, seed uint64) {
	m := &modelRun{t: t, e: e, rng: rand.New(rand.NewPCG(seed, 0x7a5c)), tokens: map[string]string{},
		unknownTypes: map[string]bool{}}
	start := time.Now()
	for _, u := range append(slices.Clone(modelUsers), modelGhost) {
		m.tokens[u] = e.Token(t, u)
	}
	for _, u := range modelUsers {
		res := m.do(u, `mutation($input: UpdateProfileInput!) { updateProfile(input: $input) { id } }`,
			map[string]any{"input": map[string]any{"name": modelUserName(u), "email": u + "@example.com"}})
		if len(res.Errors) > 0 {
			t.Fatalf("updateProfile(%s): %+v", u, res.Errors)
		}
	}

	// Checks: the table every ~tableEvery mutations, the access patterns
	// every ~patternEvery, and both at the end.
	tableEvery, patternEvery := 30, n // the short default checks the patterns at the end only
	if n > 1000 {
		tableEvery, patternEvery = 50, max(250, n/20)
	}
	lastTable, lastPattern := 0, 0
	seqOps, batches, races := 0, 0, 0
	for m.tried < n && m.violations < 200 {
		switch k := m.rng.IntN(20); {
		case k < 10 || len(m.liveProjects(nil)) < 3:
			if op := m.gen(map[*modelProject]bool{}); op != nil {
				m.send(op)
				m.settle(op)
				seqOps++
			}
		case k < 17:
			// Concurrent mutations of different projects: their outcomes
			// do not depend on one another.
			busy := map[*modelProject]bool{}
			var ops []*modelOp
			for range 4 + m.rng.IntN(5) {
				if op := m.gen(busy); op != nil {
					ops = append(ops, op)
				}
			}
			m.runConcurrently(ops)
			for _, op := range ops {
				m.settle(op)
			}
			batches++
		default:
			race := []func() bool{m.raceRemoval, m.raceDeleteProject, m.raceTaskFields, m.raceExpectedVersion}
			before := m.sight()
			if modelPick(m.rng, race)() {
				races++
				// A race's answers come from any moment of it: each may
				// show what its viewer could see before or after it.
				after := m.sight()
				for _, op := range m.raceOps {
					m.checkShown("race: "+op.name, op.viewer, op.res.Data, func(id string) bool {
						return seesDuring(before, after, op.viewer, id)
					})
				}
			}
		}
		if m.tried-lastTable >= tableEvery && m.tried < n {
			lastTable = m.tried
			m.check()
		}
		if m.tried-lastPattern >= patternEvery && m.tried < n {
			lastPattern = m.tried
			m.checkPatterns()
		}
	}
	m.check()
	m.checkPatterns()

	live := func() (p, ts, cs int) {
		for _, x := range m.projects {
			if !x.gone {
				p++
			}
		}
		for _, x := range m.tasks {
			if x.live() {
				ts++
			}
		}
		for _, x := range m.comments {
			if x.live() {
				cs++
			}
		}
		return
	}
	lp, lt, lc := live()
	t.Logf("TestModel seed %d: %d mutations tried, %d succeeded, %d refused (%d in %d races, %d in %d concurrent batches, %d alone); "+
		"%d table checks, %d access-pattern checks (%d reads); %d invariant violations; end state %d projects, %d tasks, %d comments "+
		"live (%d, %d, %d ever); %s (cleanup and table checks %s, access-pattern checks %s)",
		seed, m.tried, m.succeeded, m.refused, m.raced, races, m.tried-m.raced-seqOps, batches, seqOps, m.tableChecks,
		m.patternChecks, m.queries, m.violations, lp, lt, lc, len(m.projects), len(m.tasks), len(m.comments),
		time.Since(start).Round(time.Millisecond), m.tableTime.Round(time.Millisecond), m.patternTime.Round(time.Millisecond))
	t.Logf("TestModel idempotency: %d mutations sent with a fresh key (%d left a record); %d replays (%d refused NOT_FOUND); "+
		"%d key reuses (%d refused BAD_USER_INPUT); visibility: %d answers showing %d objects checked, %d showed what their viewer "+
		"may not see", m.keysSent, len(m.keyed), m.replays, m.replaysGone, m.reuses, m.reusesRefused, m.shownAnswers, m.shownObjects, m.leaks)
	if m.violations > 0 {
		t.Errorf("%d invariant violations (the first %d shown above)", m.violations, m.shown)
	}
}

// TestModelUnassignedTaskKeepsIndexWhole is the shortest sequence TestModel
// found that breaks the assignee index (GSI2) on the embedded store: a task
// that loses its assignee leaves its old index entry behind. Removing that
// member then fails, and once the task is deleted too, the index hides
// other assigned tasks, so a member's removal leaves them assigned to a
// non-member.
func TestModelUnassignedTaskKeepsIndexWhole(t *testing.T) {
	setup := func(t *testing.T) (e *testenv.Env, project, task string) {
		e = testenv.New(t)
		for _, u := range []string{"olga", "abe"} {
			e.MustQuery(t, u, `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": u}, nil)
		}
		var p struct{ CreateProject struct{ ID string } }
		e.MustQuery(t, "olga", `mutation { createProject(input: {name: "P"}) { id } }`, nil, &p)
		project = p.CreateProject.ID
		e.MustQuery(t, "olga", modelMAddMember, map[string]any{"p": project, "u": "abe"}, nil)
		var c struct{ CreateTask struct{ ID string } }
		e.MustQuery(t, "olga", modelMCreateTask, map[string]any{"input": map[string]any{"projectId": project, "title": "T1",
			"assigneeId": "abe"}}, &c)
		task = c.CreateTask.ID
		e.MustQuery(t, "olga", modelMUpdateTask, map[string]any{"input": map[string]any{"id": task, "assigneeId": nil}}, nil)
		return e, project, task
	}
	assigned := func(t *testing.T, e *testenv.Env, viewer string) []string {
		var got struct {
			Me struct {
				AssignedTasks struct{ Nodes []struct{ ID string } }
			}
		}
		e.MustQuery(t, viewer, `{ me { assignedTasks(first: 100) { nodes { id } } } }`, nil, &got)
		ids := []string{}
		for _, n := range got.Me.AssignedTasks.Nodes {
			ids = append(ids, n.ID)
		}
		return ids
	}

	t.Run("the member of a task that was unassigned can be removed", func(t *testing.T) {
		e, project, _ := setup(t)
		res := e.Query(t, "olga", modelMRemoveMember, map[string]any{"p": project, "u": "abe"})
		if len(res.Errors) > 0 {
			t.Errorf("removeProjectMember: %+v, want success", res.Errors)
		}
	})

	t.Run("a task unassigned and deleted hides no other assigned task", func(t *testing.T) {
		e, project, task := setup(t)
		e.MustQuery(t, "olga", modelMDeleteTask, map[string]any{"id": task}, nil)
		var c struct{ CreateTask struct{ ID string } }
		e.MustQuery(t, "olga", modelMCreateTask, map[string]any{"input": map[string]any{"projectId": project, "title": "T2",
			"assigneeId": "abe"}}, &c)
		t2 := c.CreateTask.ID
		if got := assigned(t, e, "abe"); !slices.Equal(got, []string{t2}) {
			t.Errorf("abe's assignedTasks = %v, want [%s]", got, t2)
		}
		res := e.Query(t, "olga", modelMRemoveMember, map[string]any{"p": project, "u": "abe"})
		if len(res.Errors) > 0 {
			t.Fatalf("removeProjectMember: %+v, want success", res.Errors)
		}
		var got struct {
			Task struct{ Assignee *struct{ ID string } }
		}
		e.MustQuery(t, "olga", `query($id: ID!) { task(id: $id) { assignee { id } } }`, map[string]any{"id": t2}, &got)
		if got.Task.Assignee != nil {
			t.Errorf("after abe left the project, task %s is still assigned to %s", t2, got.Task.Assignee.ID)
		}
	})
}
