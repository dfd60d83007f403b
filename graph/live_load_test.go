package graph_test

import (
	"io"
	"log/slog"
	"maps"
	"testing"

	"github.com/taskgraph/taskgraph/graph/dispatch"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// A live event's loaders are dispatched by level as a query's are (#40):
// one count covers every resolution of the event (one per group of its
// subscribers, resolved at once: graph/subscription/resolve.go), so an
// event costs the same DynamoDB calls however busy the machine, and a level
// of all its groups is one batch per loader. With every processor busy
// (testenv.Saturate) from its publication to its delivery, the heaviest
// subscription the limits allow (heaviestSub: 32 concurrent lists of the
// actor, whose pages' visibility is one batch) and an event delivered to
// several groups (more than resolve at once among them) make the calls
// they make on a quiet machine (with the former 1 ms window a busy machine
// could split a level), and no event waits for the dispatch's safety net.
// Run it with -count=20 on a busy machine.
func TestLiveEventsUnderLoadKeepTheirCalls(t *testing.T) {
	e := testenv.New(t)
	viewers, p := mustBoard(t, e, 70)
	levels := &dispatch.Levels{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	lv, srv := e.StartLive(t, pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Dispatch: levels}}}, live.HubConfig{})
	heavy := heaviestSub()
	// More groups than resolve at once (70: graph/subscription's
	// maxResolutions is 64), each a viewer's own.
	const ownLists = `subscription($p: ID!) { projectEvents(projectId: $p) { kind actor { id overdueTasks(asOf: "2031-01-01", first: 1) { nodes { id } } } } }`
	var many []viewerSub
	for _, v := range viewers {
		many = append(many, viewerSub{v.ID, ownLists})
	}
	same := make([]viewerSub, pipeline.DefaultMaxSubscriptionsPerSocket)
	for i := range same {
		same[i] = viewerSub{"viewer0", heavy}
	}
	for _, tc := range []struct {
		name string
		subs []viewerSub
		want map[string]int
	}{
		// The hub's check, the actor, 31 pages, their tasks' visibility,
		// the re-check (TestLiveHeaviestSubscriptionAllowedIsBoundedPerEventAndSharedPerViewer).
		{"one subscriber of the heaviest subscription", []viewerSub{{"viewer0", heavy}}, map[string]int{"BatchGetItem": 4, "Query": 31}},
		{"20 subscriptions of one viewer", same, map[string]int{"BatchGetItem": 4, "Query": 31}},
		// Three groups (one per viewer: the selection depends on the
		// viewer), resolved at once: 31 pages each; the actor, and their
		// pages' visibility, read once for all (one after another, the
		// groups read their pages' visibility in 3 batches: 99 calls).
		{"three viewers", []viewerSub{{"viewer0", heavy}, {"viewer1", heavy}, {"viewer2", heavy}}, map[string]int{"BatchGetItem": 4, "Query": 93}},
		// Three documents, three groups: besides the heaviest's, the
		// project's tasks and their comments (projectDataSub).
		{"three documents", []viewerSub{{"viewer0", heavy}, {"viewer1", projectDataSub}, {"viewer2", taskEventsSub}},
			map[string]int{"BatchGetItem": 4, "Query": 35}},
		// 64 groups at once, then 6 as they end: their pages' visibility
		// one batch more.
		{"70 viewers", many, map[string]int{"BatchGetItem": 5, "Query": 70}},
	} {
		for _, saturated := range []bool{false, true} {
			name := tc.name
			if saturated {
				name += ", every processor busy"
			}
			t.Run(name, func(t *testing.T) {
				before := levels.Stalls()
				got := eventCallsOf(t, e, lv, srv, p, "boss", tc.subs, saturated)
				t.Logf("%v (%d)", got, total(got))
				if !maps.Equal(got, tc.want) {
					t.Errorf("the event cost %v, want %v", got, tc.want)
				}
				if n := levels.Stalls() - before; n != 0 {
					t.Errorf("the dispatch's safety net read the event's loaders %d times", n)
				}
			})
		}
	}
}
