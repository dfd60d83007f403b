package graph_test

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The bound of eventually consistent screens (dynamo.Screen): a member
// removed a moment ago may still see the project only while the replica
// of their profile lags, never once it caught up; and nothing they do is
// decided on the lagging replica: a mutation's guard reads strongly
// (dynamo.Guard) and refuses them at once, as does a sync (dynamo.SyncRead).
func TestVisibilityLagsNoMoreThanTheTablesReplicas(t *testing.T) {
	e, lag := testenv.NewLagging(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch").ID
	const see = `query($p: ID!) { project(id: $p) { id name } }`
	sees := func(step string) bool {
		t.Helper()
		res := e.Query(t, "carol", see, map[string]any{"p": web})
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %+v", step, res.Errors)
		}
		return !strings.Contains(string(res.Data), `"project":null`)
	}
	if !sees("a member") {
		t.Fatal("carol does not see the project she is a member of")
	}
	pk, sk := dynamo.UserItemKey("carol")
	lag.Hold(t, e.Store.Table(), pk, sk) // her profile's replica stops here
	if res := e.Query(t, "alice", `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`,
		map[string]any{"p": web, "u": "carol"}); len(res.Errors) > 0 {
		t.Fatalf("removing carol: %+v", res.Errors)
	}
	if !sees("removed, the replica lagging") || lag.Stale() == 0 {
		t.Fatalf("the lagging replica was not read (%d stale items): the test proves nothing", lag.Stale())
	}
	res := e.Query(t, "carol", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Sneaky"}) { id } }`, map[string]any{"p": web})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("a removed member's createTask while her replica lags: %v, want NOT_FOUND (the guard reads strongly)", got)
	}
	sync := e.Query(t, "carol", `{ sync(since: null) { upserts { __typename ... on Project { id } } } }`, nil)
	if len(sync.Errors) > 0 || !strings.Contains(string(sync.Data), "Project") {
		t.Fatalf("carol's sync: %s %+v; want her other projects", sync.Data, sync.Errors)
	}
	if strings.Contains(string(sync.Data), web) {
		t.Errorf("a sync while her replica lags lists the project: %s", sync.Data)
	}
	lag.CatchUp()
	if sees("removed, the replica caught up") {
		t.Error("carol still sees the project once her profile's replica caught up")
	}
}
