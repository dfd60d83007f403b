package dynamo

import (
	"context"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// afterCall is an Observer that runs f after each call it is told of.
type afterCall func(c *client.Call)

func (f afterCall) ObserveCall(_ context.Context, c *client.Call) { f(c) }

// A user's profile job is one item that each update rewrites: a job
// replaced by a newer update while it runs must not end with the older
// one, or the newer name never reaches the change logs (a synced replica
// would keep the older name for good).
func TestAProfileJobReplacedWhileItRunsIsRunAgain(t *testing.T) {
	ts := newTestStore(t)
	ts.CleanupSettle = 0
	ctx := context.Background()
	rename := func(name string) {
		t.Helper()
		if _, err := ts.UpdateProfile(ctx, "mia", domain.ProfileInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	rename("Mia")
	for _, name := range []string{"P", "Q"} {
		if _, err := ts.CreateProject(ctx, "mia", domain.ProjectInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	rename("Mia A")
	// The job of "Mia A" runs; after its first move, "Mia B" replaces it.
	var once sync.Once
	during := client.WithObserver(ctx, afterCall(func(c *client.Call) {
		if c.Operation == "TransactWriteItems" {
			once.Do(func() { rename("Mia B") })
		}
	}))
	if _, err := ts.RunCleanup(during); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the worker's next runs
		if _, err := ts.RunCleanup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	latest := profileOf(t, ts, "mia").Rev
	ms, err := ts.queryAll(ctx, projectsOfUser, userProjectsPK("mia"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d memberships, want 2", len(ms))
	}
	for _, m := range ms {
		if got := numberOf(m, attrProfileRev); got != int64(latest) {
			t.Errorf("the membership of %s stands for profile rev %d, the profile is at %d: its change log never got the newer name",
				str(m, "projectId"), got, latest)
		}
	}
	if jobs, err := ts.queryAll(ctx, cleanupJobs, cleanupPK); err != nil || len(jobs) != 0 {
		t.Errorf("cleanup jobs left: %d (%v), want none", len(jobs), err)
	}
}
