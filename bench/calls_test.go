package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/dispatch"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// pinnedWait is the batch window of the report's count-only "wide" mode:
// long enough that every level is one batch on a machine that is not
// overloaded. TestCallsAndRoundTrips does not rely on a window: with the
// production window (loaders.DefaultBatchWait, 1 ms), and even with this one,
// a busy machine can split a level (the dashboard's comment lists, its
// member and assignee users) into several batches, or the gate's quiet
// window can split a level's calls into two releases, so counts would vary
// from run to run.
const pinnedWait = 50 * time.Millisecond

// TestCallsAndRoundTrips pins the DynamoDB calls (by operation) and the
// sequential round trips of every suite operation on the 1× dataset with
// batching on. The loaders' batches are dispatched by level, as in
// production, and the gate's held calls released by the dispatcher when
// every goroutine of request work is parked (steppedEnv), so the counts are what the design needs,
// independent of the machine's load, and any extra call or level is a
// change in the code. When a change alters them on purpose, update the
// table from the failure message, which prints what was observed.
func TestCallsAndRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a dataset and runs the suite (about 3 s)")
	}
	env, h := steppedEnv(t, nil)
	checkPinnedCalls(t, env, h)
}

// TestCallsAndRoundTripsUnderLoad is TestCallsAndRoundTrips with every
// processor busy (testenv.Saturate: GOMAXPROCS×2 spinning goroutines)
// while the suite runs: dispatched by level, a level's batches wait for
// its last field however late the scheduler runs it, so the counts are
// the same (with the former 1 ms window a busy machine split levels: the
// side-by-side run's tasksByTag 4.65 calls for 3, dashboard 34 for 28).
// Run it with -count=20 on a busy machine.
func TestCallsAndRoundTripsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a dataset and runs the suite (about 3 s)")
	}
	env, h := steppedEnv(t, nil)
	testenv.Saturate(t)
	checkPinnedCalls(t, env, h)
}

// pinnedCalls are the suite's DynamoDB calls (by operation) and sequential
// round trips on the 1× dataset with batching on.
var pinnedCalls = []struct {
	name       string
	op         string
	calls      Calls
	roundTrips int
}{
	{"profile is one point read", "profile",
		Calls{"BatchGetItem": 1}, 1},
	// A user's projects are listed from their profile's copies (no
	// memberships Query: graph/loaders/copies.go); this page selects
	// more than a copy holds, so the projects are read.
	{"my projects: the profile, then projects and their member lists, then owners and members in one batch", "myProjects",
		Calls{"BatchGetItem": 3, "Query": 10}, 3},
	{"a project's tasks start with its visibility check, assignees in one batch", "projectTasks",
		Calls{"BatchGetItem": 2, "Query": 1}, 2},
	{"assigned tasks: both assignee partitions, then one visibility batch with the profile", "assignedTasks",
		Calls{"BatchGetItem": 1, "Query": 2}, 2},
	{"a task's comments start with the task, authors with the visibility check", "taskComments",
		Calls{"BatchGetItem": 2, "Query": 1}, 2},
	// The viewer's profile (their projects), then their 10 projects'
	// tag indexes in one BatchGetItem; then the page's tasks with their
	// projects and assignees in one more.
	{"tasks by tag: the profile, the tag indexes of the viewer's projects in one batch, then the page's tasks with their projects and assignees in one batch", "tasksByTag",
		Calls{"BatchGetItem": 3}, 3},
	{"overdue tasks: one partition, then one visibility batch with the profile", "overdueTasks",
		Calls{"BatchGetItem": 1, "Query": 1}, 2},
	// The comment lists of a project's tasks are one Query of the
	// project's comment collection where the tasks' counts make it pay
	// (dynamo.CommentsOfTasks), per task otherwise: the profile (the
	// projects' copies), 10 projects' task and member lists, then 12
	// comment reads and the users.
	{"dashboard: the profile, then the projects' member and task lists, then users with each project's comment lists", "dashboard",
		Calls{"BatchGetItem": 2, "Query": 32}, 3},
}

// checkPinnedCalls runs the suite through h and fails t where an
// operation's calls or round trips differ from pinnedCalls.
func checkPinnedCalls(t *testing.T, env *Env, h http.Handler) {
	t.Helper()
	ctx := context.Background()
	covered := map[string]bool{}
	for _, tt := range pinnedCalls {
		covered[tt.op] = true
		t.Run(tt.name, func(t *testing.T) {
			op := suiteOp(t, tt.op)
			got, err := env.Count(ctx, h, op) // fails on any GraphQL error
			if err != nil {
				t.Fatal(err)
			}
			if !got.Calls.Equal(tt.calls) || got.RoundTrips != tt.roundTrips {
				t.Errorf("%s: got calls {%v} in %d round trips (calls per round trip %v); want {%v} in %d",
					tt.op, got.Calls, got.RoundTrips, got.Rounds, tt.calls, tt.roundTrips)
			}
		})
	}
	for _, op := range Suite() {
		if !covered[op.Name] {
			t.Errorf("operation %s has no pinned counts", op.Name)
		}
	}
}

// TestBackwardCallsAndRoundTrips pins that reading every screen's lists
// from their other end (last instead of first, at every level) costs what
// reading them forwards costs: the same DynamoDB calls by operation in the
// same round trips, stepped level by level as in TestCallsAndRoundTrips.
func TestBackwardCallsAndRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a dataset and runs the suite (about 3 s)")
	}
	env, h := steppedEnv(t, nil)
	ctx := context.Background()
	backward := 0
	for _, op := range Suite() {
		if !strings.Contains(op.Query, "(first: ") && !strings.Contains(op.Query, ", first: ") {
			continue
		}
		backward++
		t.Run(op.Name, func(t *testing.T) {
			back := op
			back.Query = strings.ReplaceAll(op.Query, "first: ", "last: ")
			fwd, err := env.Count(ctx, h, op)
			if err != nil {
				t.Fatal(err)
			}
			got, err := env.Count(ctx, h, back)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Calls.Equal(fwd.Calls) || got.RoundTrips != fwd.RoundTrips {
				t.Errorf("backwards: calls {%v} in %d round trips (%v); forwards {%v} in %d (%v)",
					got.Calls, got.RoundTrips, got.Rounds, fwd.Calls, fwd.RoundTrips, fwd.Rounds)
			}
		})
	}
	if backward < 7 {
		t.Errorf("%d operations with lists, want 7", backward)
	}
}

// steppedEnv seeds the 1× dataset and returns its env and the production
// handler (its loaders dispatched by level, package graph/dispatch), whose
// dispatcher releases the gate's held calls when an operation's work all
// waits and none of its loaders has keys (dispatch.Levels.SetIdle), until
// the test ends: a round trip is then everything the server can ask
// before it needs an answer. release, when not nil, makes that release of
// the gate's held calls (else Gate.Release: all of them).
func steppedEnv(t *testing.T, release func(*Gate) func() int) (*Env, http.Handler) {
	t.Helper()
	env, _ := newEnv(t, 1, DefaultQuiet)
	levels := &dispatch.Levels{}
	h := env.Handler(Mode{Name: "by level", Loaders: loaders.Config{Dispatch: levels}})
	env.Gate.SetManual(true)
	rel := env.Gate.Release
	if release != nil {
		rel = release(env.Gate)
	}
	levels.SetIdle(rel)
	t.Cleanup(func() { levels.SetIdle(nil); env.Gate.SetManual(false) })
	return env, h
}

// TestCommentAuthorsJoinTheVisibilityCheckWhenTheTaskAnswersFirst pins
// that a task's comment authors are read in the batch of the task's
// visibility check even when the task's read is answered before its
// comments, as on DynamoDB, where the two answers of one round trip come
// apart (on the simulator of the side-by-side benchmark, one in five
// operations split the batch with the production batch window): a
// BatchGetItem after both answers, not one after each.
func TestCommentAuthorsJoinTheVisibilityCheckWhenTheTaskAnswersFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a dataset (about 3 s)")
	}
	env, h := steppedEnv(t, pointReadsFirst)
	got, err := env.Count(context.Background(), h, suiteOp(t, "taskComments"))
	if err != nil {
		t.Fatal(err)
	}
	// The task, then its comments, then the project, the membership and
	// the authors.
	want, wantRounds := Calls{"BatchGetItem": 2, "Query": 1}, 3
	if !got.Calls.Equal(want) || got.RoundTrips != wantRounds {
		t.Errorf("got calls {%v} in %d round trips (%v); want {%v} in %d", got.Calls, got.RoundTrips, got.Rounds, want, wantRounds)
	}
}

// pointReadsFirst makes a release of g's held calls that, when point reads
// (BatchGetItem) are held with other calls, answers the point reads alone
// and keeps the others for the next release: the point reads' answers
// arrive first.
func pointReadsFirst(g *Gate) func() int {
	isRead := func(c *heldCall) bool {
		return strings.HasSuffix(c.req.Header.Get("X-Amz-Target"), ".BatchGetItem")
	}
	return func() int {
		g.mu.Lock()
		var now, later []*heldCall
		for _, c := range g.held {
			if isRead(c) {
				now = append(now, c)
			} else {
				later = append(later, c)
			}
		}
		if len(now) > 0 && len(later) > 0 {
			g.held = now
		} else {
			later = nil
		}
		batch := g.take()
		g.held = later
		g.mu.Unlock()
		g.send(batch, nil)
		return len(batch)
	}
}
