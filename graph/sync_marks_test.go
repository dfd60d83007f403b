package graph_test

import (
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestSyncMarksAgainstDynamoDBLocal runs syncs that write their viewers'
// marks (dynamo.Store.MarkEverySync) and the changes that delete them,
// with every call made on the embedded store and on DynamoDB Local
// (testenv.Tee compares every answer): the marks' string sets added to and
// emptied, the conditions that return a project's item (ALL_OLD), the
// projection of a profile's copies, the size() of the membership cap. The
// replicas equal full reads, and the table's marks are true, throughout.
func TestSyncMarksAgainstDynamoDBLocal(t *testing.T) {
	e, tee := testenv.NewDiff(t)
	e.Store.MarkEverySync = true
	s := e.MustSeed(t)
	web := s.Project("Website relaunch")
	replicas := map[string]*replica{"alice": newReplica("alice"), "bob": newReplica("bob"), "carol": newReplica("carol")}
	syncAll := func(step string) {
		t.Helper()
		for _, r := range replicas {
			r.sync(t, e, 3)
			r.mustEqualFullRead(t, e)
		}
		if v := testenv.CheckTable(e.Items(t)); len(v) > 0 {
			t.Errorf("%s: table invariants:\n%v", step, v)
		}
	}
	syncAll("base syncs")
	syncAll("nothing new")
	for _, c := range []struct{ step, viewer, doc string }{
		{"a task renamed", "bob", `mutation($t: ID!) { updateTask(input: {id: $t, title: "renamed"}) { id } }`},
		{"a comment added", "carol", `mutation($t: ID!) { addComment(input: {taskId: $t, body: "hi"}) { id } }`},
		{"the project renamed", "alice", `mutation($p: ID!) { updateProject(input: {id: $p, name: "Web"}) { id } }`},
		{"carol leaves", "carol", `mutation($p: ID!) { leaveProject(projectId: $p) }`},
		{"the project deleted", "alice", `mutation($p: ID!) { deleteProject(id: $p) }`},
	} {
		e.MustQuery(t, c.viewer, c.doc, map[string]any{"t": s.Task("Set up analytics").ID, "p": web.ID}, nil)
		mustCleanup(t, e) // a deleted project's items, as the worker removes them
		syncAll(c.step)
	}
	if tee.Diffs() > 0 {
		t.Errorf("%d calls answered differently", tee.Diffs())
	}
	t.Logf("%v calls compared", tee.Calls())
}
