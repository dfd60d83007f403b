package graph_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

var loadFor = flag.Duration("load", 0, "run TestLoad for this long (e.g. 30s); 0 skips it")

const loadClients = 64

// loadSeed makes 8 projects of 6 members (out of 16 users) with 20 tasks
// each, tagged and partly assigned, with a comment each.
func loadSeed(tb testing.TB, e *testenv.Env) (users []string, taskProject map[string]string, projects map[string][]string) {
	tb.Helper()
	b := e.Store.NewDataset(testenv.Now)
	var us []*domain.User
	for i := range 16 {
		us = append(us, b.User(fmt.Sprintf("load%02d", i), fmt.Sprintf("Load %d", i), ""))
		users = append(users, us[i].ID)
	}
	projects, taskProject = map[string][]string{}, map[string]string{}
	for p := range 8 {
		members := []*domain.User{us[(p+1)%16], us[(p+2)%16], us[(p+3)%16], us[(p+4)%16], us[(p+5)%16]}
		pr := b.Project(fmt.Sprintf("Load project %d", p), "", us[p], members...)
		projects[pr.ID] = []string{us[p].ID}
		for _, m := range members {
			projects[pr.ID] = append(projects[pr.ID], m.ID)
		}
		for i := range 20 {
			due := domain.DateOf(testenv.Now).AddDays(i - 10)
			t := b.Task(pr, fmt.Sprintf("Load task %d.%d", p, i), domain.StatusTodo, &due, members[i%5], "load", fmt.Sprintf("t%d", i%4))
			b.Comment(t, members[i%5], "first")
			taskProject[t.ID] = pr.ID
		}
	}
	e.MustImport(tb, &b.D)
	return users, taskProject, projects
}

type loadStats struct {
	mu       sync.Mutex
	requests atomic.Int64
	status   map[int]int
	codes    map[string]int
}

func (s *loadStats) add(status int, codes []string) {
	s.requests.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[status]++
	for _, c := range codes {
		s.codes[c]++
	}
}

// TestLoad drives the real HTTP server on loopback with 64 clients mixing
// reads and writes for -load, then checks: no 5xx, no internal or
// unavailable errors, no growth of goroutines or heap from the first half to
// the second, and a consistent table (testenv.CheckTable). Run:
//
//	go test ./graph -run TestLoad -load 30s -v
func TestLoad(t *testing.T) {
	if *loadFor == 0 {
		t.Skip("run with -load 30s")
	}
	e := testenv.New(t)
	users, projectOf, projects := loadSeed(t, e) // projectOf: task → project, grows with creates
	srv := httptest.NewServer(e.Handler)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}, Timeout: 30 * time.Second}
	tokens := map[string]string{}
	for _, u := range users {
		tokens[u] = e.Token(t, u)
	}
	var known sync.Map // task ids believed alive
	for id := range projectOf {
		known.Store(id, true)
	}
	var projMu sync.Mutex
	stats := &loadStats{status: map[int]int{}, codes: map[string]int{}}
	post := func(viewer, q string, vars map[string]any) (json.RawMessage, []string) {
		raw, err := testenv.Post(map[string]any{"query": q, "variables": vars}, testenv.To(srv.URL), testenv.HTTPClient(client),
			testenv.Bearer(tokens[viewer]))
		if err != nil {
			stats.add(-1, []string{"TRANSPORT"})
			return nil, nil
		}
		var r testenv.Response
		_ = json.Unmarshal(raw.Body, &r)
		stats.add(raw.Status, r.Codes())
		return r.Data, r.Codes()
	}
	randomTask := func(r *rand.Rand) (string, string) {
		var ids []string
		known.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return len(ids) < 400 })
		if len(ids) == 0 {
			return "", ""
		}
		id := ids[r.IntN(len(ids))]
		projMu.Lock()
		defer projMu.Unlock()
		return id, projectOf[id]
	}
	memberOf := func(r *rand.Rand, pid string) string { ms := projects[pid]; return ms[r.IntN(len(ms))] }

	ctx, cancel := context.WithTimeout(context.Background(), *loadFor)
	defer cancel()
	var wg sync.WaitGroup
	for c := range loadClients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for ctx.Err() == nil {
				tid, pid := randomTask(r)
				if tid == "" {
					return
				}
				viewer := memberOf(r, pid)
				switch n := r.IntN(100); {
				case n < 35:
					post(viewer, `{ me { projects(first: 3) { nodes { name members { user { name } } tasks(first: 5) { nodes { title assignee { name } tags { name } comments(first: 2) { nodes { body author { name } } } } } } } } }`, nil)
				case n < 50:
					post(viewer, `query($id: ID!) { task(id: $id) { title version project { name } comments { nodes { body author { name } } } } }`, map[string]any{"id": tid})
				case n < 60:
					post(viewer, `{ tasksByTag(tag: "load", first: 10) { nodes { title } pageInfo { hasNextPage } } }`, nil)
				case n < 65:
					post(viewer, `{ me { assignedTasks(first: 10) { nodes { title } } overdueTasks { nodes { title } } } }`, nil)
				case n < 77:
					data, _ := post(viewer, `mutation($p: ID!, $a: ID) { createTask(input: {projectId: $p, title: "Made under load", assigneeId: $a, tags: ["load"]}) { id } }`,
						map[string]any{"p": pid, "a": memberOf(r, pid)})
					var d struct{ CreateTask *struct{ ID string } }
					if json.Unmarshal(data, &d) == nil && d.CreateTask != nil {
						projMu.Lock()
						projectOf[d.CreateTask.ID] = pid
						projMu.Unlock()
						known.Store(d.CreateTask.ID, true)
					}
				case n < 89:
					post(viewer, `mutation($id: ID!, $d: Date, $s: TaskStatus, $tags: [String!]) { updateTask(input: {id: $id, dueDate: $d, status: $s, tags: $tags}) { version } }`,
						map[string]any{"id": tid, "d": domain.DateOf(testenv.Now).AddDays(r.IntN(30) - 15).String(),
							"s": []string{"TODO", "IN_PROGRESS", "DONE"}[r.IntN(3)], "tags": []string{"load", fmt.Sprintf("t%d", r.IntN(6))}})
				case n < 95:
					post(viewer, `mutation($id: ID!) { addComment(input: {taskId: $id, body: "under load"}) { id } }`, map[string]any{"id": tid})
				default:
					if _, codes := post(viewer, `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": tid}); len(codes) == 0 {
						known.Delete(tid)
					}
				}
			}
		})
	}
	sample := func() (int, uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}
	time.Sleep(*loadFor / 2)
	g1, h1 := sample()
	<-ctx.Done()
	g2, h2 := sample()
	wg.Wait()
	n := stats.requests.Load()
	t.Logf("%d requests in %v by %d clients (%.0f/s); HTTP statuses %v; error codes %v", n, *loadFor, loadClients,
		float64(n)/loadFor.Seconds(), stats.status, stats.codes)
	t.Logf("goroutines %d at half time, %d at the end; heap %.1f MiB at half time, %.1f MiB at the end", g1, g2,
		float64(h1)/(1<<20), float64(h2)/(1<<20))
	for status := range stats.status {
		if status >= 500 || status < 0 {
			t.Errorf("%d responses with HTTP status %d", stats.status[status], status)
		}
	}
	for _, bad := range []string{"INTERNAL_SERVER_ERROR", "SERVICE_UNAVAILABLE", "TRANSPORT", "BAD_USER_INPUT", "BAD_REQUEST"} {
		if stats.codes[bad] > 0 {
			t.Errorf("%d %s errors", stats.codes[bad], bad)
		}
	}
	if g2 > g1+loadClients/2 {
		t.Errorf("goroutines grew from %d to %d between the halves", g1, g2)
	}
	if h2 > 2*h1+32<<20 {
		t.Errorf("heap grew from %d to %d bytes between the halves", h1, h2)
	}
	if _, err := e.Store.RunCleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, v := range testenv.CheckTable(e.Items(t)) {
		t.Error(v)
	}
}
