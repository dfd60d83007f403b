package graph_test

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/dispatch"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// A live event's loaders are dispatched by level as a query's are (#40):
// one count covers every resolution of the event (one per group of its
// subscribers), so an event costs the same DynamoDB calls however busy the
// machine. With every processor busy (testenv.Saturate) the heaviest
// subscription the limits allow (heaviestSub: 32 concurrent lists of the
// actor, whose pages' visibility is one batch) and an event delivered to
// several groups make the calls they make on a quiet machine (with the
// former 1 ms window a busy machine split the batches), and no event waits
// for the dispatch's safety net. Run it with -count=20 on a busy machine.
func TestLiveEventsUnderLoadKeepTheirCalls(t *testing.T) {
	e := testenv.New(t)
	b := e.Store.NewDataset(testenv.Now)
	boss := b.User("boss", "Boss", "")
	var viewers []*domain.User
	for i := range 3 {
		viewers = append(viewers, b.User(fmt.Sprintf("viewer%d", i), fmt.Sprintf("Viewer %d", i), ""))
	}
	p := b.Project("Board", "", boss, viewers...)
	due, _ := domain.ParseDate("2026-01-05")
	for i := range 3 {
		b.Task(p, fmt.Sprintf("Overdue %d", i), domain.StatusTodo, &due, boss)
	}
	e.MustImport(t, &b.D)
	levels := &dispatch.Levels{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	lv, srv := e.StartLive(t, pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Dispatch: levels}}}, live.HubConfig{})
	heavy := heaviestSub()
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
		// viewer), resolved one after another: 31 pages each, and each
		// its pages' visibility; the actor read once for all.
		{"three viewers", []viewerSub{{"viewer0", heavy}, {"viewer1", heavy}, {"viewer2", heavy}}, map[string]int{"BatchGetItem": 6, "Query": 93}},
		// Three documents, three groups: besides the heaviest's, the
		// project's tasks and their comments (projectDataSub).
		{"three documents", []viewerSub{{"viewer0", heavy}, {"viewer1", projectDataSub}, {"viewer2", taskEventsSub}},
			map[string]int{"BatchGetItem": 4, "Query": 35}},
	} {
		for _, saturated := range []bool{false, true} {
			name := tc.name
			if saturated {
				name += ", every processor busy"
			}
			t.Run(name, func(t *testing.T) {
				if saturated {
					defer testenv.Saturate(t)()
				}
				before := levels.Stalls()
				got := eventCallsOf(t, e, lv, srv, p, "boss", tc.subs)
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
