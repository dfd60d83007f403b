package graph_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// seedScale makes `projects` projects of 5 members each (the viewer "u0" in
// all), each with `tasks` tasks carrying 2 tags and 3 comments.
func seedScale(tb testing.TB, e *testenv.Env, projects, tasks int) int {
	tb.Helper()
	b := e.Store.NewDataset(testenv.Now)
	var users []*domain.User
	for i := range 5 {
		users = append(users, b.User(fmt.Sprintf("u%d", i), fmt.Sprintf("User %d", i), ""))
	}
	for p := range projects {
		pr := b.Project(fmt.Sprintf("P%03d", p), "", users[0], users[1:]...)
		for i := range tasks {
			due := domain.DateOf(testenv.Now).AddDays(i%40 - 20)
			t := b.Task(pr, fmt.Sprintf("T%03d", i), domain.StatusTodo, &due, users[i%5], "alpha", fmt.Sprintf("t%d", i%7))
			for c := range 3 {
				b.Comment(t, users[c], "comment")
			}
		}
	}
	e.MustImport(tb, &b.D)
	n := len(b.D.Users) + len(b.D.Projects) + len(b.D.Members) + len(b.D.Comments)
	for _, t := range b.D.Tasks {
		n += 1 + len(t.Tags)
	}
	return n
}

// dashboard is the contract's dashboard query.
const dashboard = testenv.Dashboard

// BenchmarkDashboard runs the contract's dashboard query on the embedded
// store at two table sizes: the embedded store's cost grows with the table
// (it scans every key per Query and serializes calls), which is what the
// README's size guidance is measured with. Run:
//
//	go test ./graph -run '^$' -bench Dashboard -benchtime 5x -v
func BenchmarkDashboard(b *testing.B) {
	for _, size := range []struct{ projects, tasks int }{{3, 10}, {10, 20}} {
		e := testenv.New(b)
		start := time.Now()
		items := seedScale(b, e, size.projects, size.tasks)
		b.Logf("loading %d items took %v", items, time.Since(start))
		b.Run(fmt.Sprintf("items=%d", items), func(b *testing.B) {
			e.Calls.Reset()
			for b.Loop() {
				e.MustQuery(b, "u0", dashboard, nil, nil)
			}
			b.ReportMetric(float64(e.Calls.Total())/float64(b.N), "ddbcalls/op")
		})
	}
}
