package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestSyncProperty: random writers make every kind of change (tasks,
// comments, projects, members added and removed or leaving, profiles,
// deletions),
// while clients that keep a replica sync at random moments, in the middle
// of the writes, with pages of random sizes; the clock jumps past the
// event retention (49 h), close to the tombstones' window (29 days) and
// past it (31 days, then the sweep). At each checkpoint (writers stopped,
// the cleanup worker's jobs done) every replica, synced to the end,
// equals a fresh full read of what its viewer may see; and no page ever
// brings an object its viewer certainly could not see while it was asked
// for (a project they were never in, or left before the page and were not
// added back to during it; a user they never shared a project with).
func TestSyncProperty(t *testing.T) { syncProperty(t, false) }

// TestSyncPropertyWithMarks is TestSyncProperty with every sync writing
// its viewer's marks (dynamo.Store.MarkEverySync), as a sync of a viewer
// in more projects than a page reads does: the pages then skip the
// projects marked at their tokens' positions, and every change unmarks
// its project first (dynamo/syncmark.go). The replicas still equal full
// reads, and the table's marks stay true (testenv.CheckTable).
func TestSyncPropertyWithMarks(t *testing.T) { syncProperty(t, true) }

func syncProperty(t *testing.T, withMarks bool) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	e, clock := newSyncEnv(t)
	e.Store.MarkEverySync = withMarks
	w := newSyncWorld(t, e, clock, seed)
	ctx := context.Background()

	var expired atomic.Int64
	viewers := []string{"u0", "u1", "u2", "u3", "u4", "u5"}
	replicas := map[string]*replica{}
	for _, v := range viewers {
		replicas[v] = newReplica(v)
	}
	checkpoint := func(name string) {
		t.Helper()
		w.settle(ctx)
		for _, v := range viewers {
			r := replicas[v]
			r.syncChecked(t, e, w, 100, &expired)
			if d := diffObjects(r.objs, fullRead(t, e, v)); d != "" {
				w.mu.Lock()
				for task, p := range w.taskOf { // name the projects of the tasks too
					if strings.Contains(d, task) {
						d += "\n(task " + task + " of " + p + `, "id":"` + p + `")`
					}
				}
				w.mu.Unlock()
				t.Errorf("%s: %s's replica differs from a full read:\n%s\nwhat its pages said of them:\n%s\n%s", name, v, d, r.trailOfWith(d, w.historyOf(d, v)), w.historyOf(d, v))
			}
		}
	}
	// phase runs the writers and the clients (those not offline) at once.
	phase := func(name string, ops int, offline ...string) {
		t.Helper()
		began := time.Now()
		defer func() { t.Logf("phase %s: %v", name, time.Since(began)) }()
		stop := make(chan struct{})
		var clients, writers sync.WaitGroup
		for i, v := range viewers {
			if slices.Contains(offline, v) {
				continue
			}
			clients.Add(1)
			go func() {
				defer clients.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(i)+100))
				r := replicas[v]
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(5+rng.IntN(40)) * time.Millisecond):
					}
					r.syncChecked(t, e, w, 1+rng.IntN(100), &expired)
				}
			}()
		}
		for i := range 3 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(i)))
				for range ops {
					w.change(rng)
				}
			}()
		}
		cleaner := make(chan struct{})
		go func() { // the cleanup worker, as the server runs it
			defer close(cleaner)
			for {
				select {
				case <-stop:
					return
				case <-time.After(30 * time.Millisecond):
					_, _ = e.Store.RunCleanup(ctx)
				}
			}
		}()
		writers.Wait()
		close(stop)
		clients.Wait()
		<-cleaner
		t.Logf("phase %s: writes done after %v", name, time.Since(began))
		checkpoint(name)
	}

	phase("A (writes and syncs at once)", 30)
	clock.Advance(49 * time.Hour) // past the event stream's retention
	phase("B (after 49 h; u4 and u5 offline)", 20, "u4", "u5")
	clock.Advance(29 * 24 * time.Hour) // within the tombstones' window
	if _, err := e.Store.SweepChanges(ctx); err != nil {
		t.Fatal(err)
	}
	phase("C (after 29 days; u3 offline)", 20, "u3")
	if expired.Load() != 0 {
		t.Errorf("%d syncs were refused as expired within the window", expired.Load())
	}
	clock.Advance(31 * 24 * time.Hour) // past it: every token expires
	if _, err := e.Store.SweepChanges(ctx); err != nil {
		t.Fatal(err)
	}
	phase("D (after 31 days and the sweep)", 15)
	if expired.Load() < int64(len(viewers)) {
		t.Errorf("%d syncs were refused as expired after 31 days, want one per viewer at least", expired.Load())
	}
	w.mu.Lock()
	t.Logf("%d changes tried, %d committed (%v); %d leak checks", w.tried, w.committed, w.byOp, w.checks.Load())
	w.mu.Unlock()
	items := e.Items(t)
	if v := testenv.CheckTable(items); len(v) > 0 {
		t.Errorf("table invariants:\n%s", v)
	}
	marks := 0
	for _, it := range items {
		if it["type"] == "SYNCMARK" {
			marks++
		}
	}
	// Every viewer synced to the end at the last checkpoint: each holds a
	// mark of every project they are in (none without MarkEverySync).
	if (marks > 0) != withMarks {
		t.Errorf("%d sync marks in the table at the end, with MarkEverySync %v", marks, withMarks)
	}
	t.Logf("%d sync marks at the end", marks)
}

// syncChecked syncs to the end (starting again on SYNC_TOKEN_EXPIRED) and
// checks each page for objects the viewer could not see.
func (r *replica) syncChecked(t *testing.T, e *testenv.Env, w *syncWorld, first int, expired *atomic.Int64) []*syncPage {
	var pages []*syncPage
	for range 10_000 {
		start := time.Now()
		p, code := r.page(t, e, first)
		end := time.Now()
		switch {
		case code == "SYNC_TOKEN_EXPIRED":
			expired.Add(1)
			r.token, r.objs = nil, map[string]string{}
			continue
		case code != "":
			t.Errorf("%s: sync refused with %s", r.viewer, code)
			return pages
		}
		w.checkPage(t, r.viewer, p, start, end)
		pages = append(pages, p)
		if !p.HasMore {
			return pages
		}
	}
	t.Errorf("%s: a sync of 10,000 pages", r.viewer)
	return pages
}

// syncWorld is what the writers know of the data (best effort: a change
// they pick may fail), and the history of memberships, by the wall clock,
// that the leak check reads.
type syncWorld struct {
	t     *testing.T
	e     *testenv.Env
	clock *testClock

	mu       sync.Mutex
	users    []string
	projects map[string]*worldProject
	tasks    map[string]string // task → project, while it lives
	taskOf   map[string]string // task → project, every task ever made
	comments map[string]string // comment → author
	history  map[[2]string][]memberEvent
	deleted  map[string]time.Time // project → when its deletion was answered
	// adding and creating are the membership additions and the projects'
	// creations in flight, by (project, user) and by creator: committed,
	// they are seen before their answer is recorded.
	adding    map[[2]string]int
	creating  map[string]int
	tried     int
	committed int
	byOp      map[string]int
	checks    atomic.Int64
}

type worldProject struct {
	owner   string
	members []string
}

// memberEvent is a membership change, between the request's start and its
// answer.
type memberEvent struct {
	add        bool
	start, end time.Time
}

func newSyncWorld(t *testing.T, e *testenv.Env, clock *testClock, seed uint64) *syncWorld {
	w := &syncWorld{t: t, e: e, clock: clock, projects: map[string]*worldProject{}, tasks: map[string]string{}, taskOf: map[string]string{}, comments: map[string]string{},
		history: map[[2]string][]memberEvent{}, deleted: map[string]time.Time{}, adding: map[[2]string]int{}, creating: map[string]int{}, byOp: map[string]int{}}
	rng := rand.New(rand.NewPCG(seed, 99))
	b := e.Store.NewDataset(testenv.Now)
	var users []*domain.User
	for i := range 6 {
		users = append(users, b.User(fmt.Sprintf("u%d", i), fmt.Sprintf("User %d", i), ""))
		w.users = append(w.users, users[i].ID)
	}
	for p := range 3 {
		owner := users[p]
		var members []*domain.User
		for _, u := range users {
			if u != owner && rng.IntN(2) == 0 {
				members = append(members, u)
			}
		}
		pr := b.Project(fmt.Sprintf("P%d", p), "", owner, members...)
		wp := &worldProject{owner: owner.ID}
		for _, u := range append([]*domain.User{owner}, members...) {
			wp.members = append(wp.members, u.ID)
			w.history[[2]string{pr.ID, u.ID}] = []memberEvent{{add: true}}
		}
		w.projects[pr.ID] = wp
		for i := range 4 {
			tk := b.Task(pr, fmt.Sprintf("T%d.%d", p, i), domain.StatusTodo, nil, nil, "seed")
			w.tasks[tk.ID], w.taskOf[tk.ID] = pr.ID, pr.ID
			c := b.Comment(tk, owner, "seeded")
			w.comments[c.ID] = owner.ID
		}
	}
	e.MustImport(t, &b.D)
	return w
}

// pick returns a random element (zero for none).
func pick[T any](rng *rand.Rand, xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[rng.IntN(len(xs))]
}

// change makes one random change through the API.
func (w *syncWorld) change(rng *rand.Rand) {
	w.clock.Advance(time.Duration(1+rng.IntN(500)) * time.Millisecond)
	w.mu.Lock()
	var pids []string
	for id := range w.projects {
		pids = append(pids, id)
	}
	slices.Sort(pids)
	var tids []string
	for id := range w.tasks {
		tids = append(tids, id)
	}
	slices.Sort(tids)
	var cids []string
	for id := range w.comments {
		cids = append(cids, id)
	}
	slices.Sort(cids)
	pid := pick(rng, pids)
	var p worldProject
	if wp := w.projects[pid]; wp != nil {
		p = worldProject{owner: wp.owner, members: slices.Clone(wp.members)}
	}
	tid := pick(rng, tids)
	tproject := w.tasks[tid]
	var tmembers []string
	if wp := w.projects[tproject]; wp != nil {
		tmembers = slices.Clone(wp.members)
	}
	cid := pick(rng, cids)
	w.mu.Unlock()

	member := pick(rng, p.members)
	var op, doc string
	var vars map[string]any
	viewer := member
	switch n := rng.IntN(100); {
	case n < 5:
		op, viewer = "createProject", pick(rng, w.users)
		doc, vars = `mutation($n: String!) { createProject(input: {name: $n}) { id } }`, map[string]any{"n": fmt.Sprintf("New %d", rng.IntN(1000))}
	case n < 9:
		op, viewer = "updateProject", p.owner
		doc, vars = `mutation($id: ID!, $n: String!) { updateProject(input: {id: $id, name: $n}) { id } }`, map[string]any{"id": pid, "n": fmt.Sprintf("Renamed %d", rng.IntN(1000))}
	case n < 12:
		if len(pids) < 3 {
			return
		}
		op, viewer = "deleteProject", p.owner
		doc, vars = `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": pid}
	case n < 22:
		op, viewer = "addProjectMember", p.owner
		doc, vars = `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`, map[string]any{"p": pid, "u": pick(rng, w.users)}
	case n < 32:
		op, viewer = "removeProjectMember", p.owner
		u := pick(rng, p.members)
		if u == p.owner {
			return
		}
		doc, vars = `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`, map[string]any{"p": pid, "u": u}
		if rng.IntN(2) == 0 { // or the member leaves: the same removal
			op, viewer = "leaveProject", u
			doc, vars = `mutation($p: ID!) { leaveProject(projectId: $p) }`, map[string]any{"p": pid, "u": u}
		}
	case n < 47:
		op = "createTask"
		doc, vars = `mutation($p: ID!, $t: String!, $a: ID, $tags: [String!]) { createTask(input: {projectId: $p, title: $t, assigneeId: $a, tags: $tags}) { id } }`,
			map[string]any{"p": pid, "t": fmt.Sprintf("Task %d", rng.IntN(1000)), "a": pick(rng, append(p.members, "")), "tags": []string{pick(rng, []string{"a", "b", "c"})}}
		if vars["a"] == "" {
			vars["a"] = nil
		}
	case n < 65:
		op, viewer = "updateTask", pick(rng, tmembers)
		in := map[string]any{"id": tid}
		switch rng.IntN(5) {
		case 0:
			in["title"] = fmt.Sprintf("Title %d", rng.IntN(1000))
		case 1:
			in["status"] = pick(rng, []string{"TODO", "IN_PROGRESS", "DONE"})
		case 2:
			in["assigneeId"] = pick(rng, append(tmembers, ""))
			if in["assigneeId"] == "" {
				in["assigneeId"] = nil
			}
		case 3:
			in["tags"] = []string{pick(rng, []string{"a", "b", "c", "d"})}
		default:
			in["dueDate"] = testenv.Day(rng.IntN(20) - 10)
		}
		doc, vars = `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { id } }`, map[string]any{"in": in}
	case n < 71:
		op, viewer = "deleteTask", pick(rng, tmembers)
		doc, vars = `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": tid}
	case n < 86:
		op, viewer = "addComment", pick(rng, tmembers)
		doc, vars = `mutation($id: ID!, $b: String!) { addComment(input: {taskId: $id, body: $b}) { id } }`, map[string]any{"id": tid, "b": fmt.Sprintf("Comment %d", rng.IntN(1000))}
	case n < 92:
		w.mu.Lock()
		op, viewer = "deleteComment", w.comments[cid]
		w.mu.Unlock()
		doc, vars = `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": cid}
	default:
		op, viewer = "updateProfile", pick(rng, w.users)
		doc, vars = `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": fmt.Sprintf("Name %d", rng.IntN(1000))}
	}
	if viewer == "" {
		return
	}
	inFlight := w.inFlight(op, viewer, pid, vars)
	start := time.Now()
	res := w.e.Query(w.t, viewer, doc, vars)
	end := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	inFlight()
	w.tried++
	if len(res.Errors) > 0 {
		for _, err := range res.Errors {
			if code := err.Code(); code == "INTERNAL_SERVER_ERROR" || code == "SERVICE_UNAVAILABLE" {
				w.t.Errorf("%s by %s: %s", op, viewer, err.Message)
			}
		}
		return
	}
	w.committed++
	w.byOp[op]++
	var d map[string]map[string]any
	_ = json.Unmarshal(res.Data, &d)
	id, _ := d[op]["id"].(string)
	switch op {
	case "createProject":
		w.projects[id] = &worldProject{owner: viewer, members: []string{viewer}}
		w.history[[2]string{id, viewer}] = append(w.history[[2]string{id, viewer}], memberEvent{add: true, start: start, end: end})
	case "deleteProject":
		delete(w.projects, pid)
		w.deleted[pid] = end
	case "addProjectMember":
		u := vars["u"].(string)
		if wp := w.projects[pid]; wp != nil && !slices.Contains(wp.members, u) {
			wp.members = append(wp.members, u)
		}
		w.history[[2]string{pid, u}] = append(w.history[[2]string{pid, u}], memberEvent{add: true, start: start, end: end})
	case "removeProjectMember", "leaveProject":
		u := vars["u"].(string)
		if wp := w.projects[pid]; wp != nil {
			wp.members = slices.DeleteFunc(wp.members, func(m string) bool { return m == u })
		}
		w.history[[2]string{pid, u}] = append(w.history[[2]string{pid, u}], memberEvent{start: start, end: end})
	case "createTask":
		w.tasks[id], w.taskOf[id] = pid, pid
	case "deleteTask":
		delete(w.tasks, tid)
	case "addComment":
		w.comments[id] = viewer
	case "deleteComment":
		delete(w.comments, cid)
	}
}

// inFlight notes a membership addition or a project's creation about to
// be asked for, and returns what takes the note back (to be called with
// w.mu held).
func (w *syncWorld) inFlight(op, viewer, pid string, vars map[string]any) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch op {
	case "addProjectMember":
		k := [2]string{pid, vars["u"].(string)}
		w.adding[k]++
		return func() { w.adding[k]-- }
	case "createProject":
		w.creating[viewer]++
		return func() { w.creating[viewer]-- }
	}
	return func() {}
}

// settle runs the cleanup worker's jobs to their end (the profiles copied
// into the change logs, the deleted objects' items gone).
func (w *syncWorld) settle(ctx context.Context) {
	w.t.Helper()
	for range 10 {
		if _, err := w.e.Store.RunCleanup(ctx); err != nil {
			w.t.Fatal(err)
		}
		left := false
		for _, it := range w.e.Items(w.t) {
			if it["PK"] == "CLEANUP" {
				left = true
			}
		}
		if !left {
			return
		}
	}
	w.t.Fatal("cleanup jobs left after 10 runs")
}

// certainlyOut reports whether viewer could not see project between start
// and end: never a member; or removed (or the project deleted) before
// start, with no addition that may have taken effect since.
func (w *syncWorld) certainlyOut(project, viewer string, start, end time.Time) bool {
	if d, ok := w.deleted[project]; ok && d.Before(start) {
		return true
	}
	evs := w.history[[2]string{project, viewer}]
	if !slices.ContainsFunc(evs, func(e memberEvent) bool { return e.add }) {
		return true
	}
	for _, r := range evs {
		if r.add || !r.end.Before(start) {
			continue
		}
		later := slices.ContainsFunc(evs, func(a memberEvent) bool { return a.add && !a.end.Before(r.start) && a.start.Before(end) })
		if !later {
			return true
		}
	}
	return false
}

// mayBeJoining reports whether viewer may be in project by a change whose
// answer is not recorded yet: an addition in flight, or a creation in
// flight of a project the world does not know yet (w.mu held).
func (w *syncWorld) mayBeJoining(project, viewer string) bool {
	if w.adding[[2]string{project, viewer}] > 0 {
		return true
	}
	_, known := w.projects[project]
	_, gone := w.deleted[project]
	return !known && !gone && w.creating[viewer] > 0
}

// checkPage checks a page's objects against what viewer could see while
// it was asked for.
func (w *syncWorld) checkPage(t *testing.T, viewer string, p *syncPage, start, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range p.Upserts {
		w.checks.Add(1)
		id, _ := u["id"].(string)
		var project string
		switch u["__typename"] {
		case "Project":
			project = id
		case "Task":
			project, _ = u["project"].(map[string]any)["id"].(string)
		case "Comment":
			taskID, _ := u["task"].(map[string]any)["id"].(string)
			project = w.taskOf[taskID]
		case "User":
			if id != viewer && !w.everShared(viewer, id) {
				t.Errorf("%s's sync brought user %s, with whom they never shared a project", viewer, id)
			}
			continue
		}
		if w.certainlyOut(project, viewer, start, end) && !w.mayBeJoining(project, viewer) {
			t.Errorf("%s's sync brought %s %s of project %s, which they could not see then", viewer, u["__typename"], id, project)
		}
	}
}

// historyOf tells the membership changes of the users and projects a diff
// names.
func (w *syncWorld) historyOf(diff, viewer string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	named := func(k [2]string) bool {
		return strings.Contains(diff, `"id":"`+k[1]+`"`) || strings.Contains(diff, `"id":"`+k[0]+`"`)
	}
	projects := map[string]bool{} // the projects of what the diff names, for the viewer's own history in them
	for k := range w.history {
		if named(k) {
			projects[k[0]] = true
		}
	}
	var out []string
	for k, evs := range w.history {
		if !named(k) && !(k[1] == viewer && projects[k[0]]) {
			continue
		}
		var parts []string
		for _, e := range evs {
			parts = append(parts, fmt.Sprintf("%s %s..%s", map[bool]string{true: "added", false: "removed"}[e.add],
				e.start.Format("05.000"), e.end.Format("05.000")))
		}
		deleted := ""
		if d, ok := w.deleted[k[0]]; ok {
			deleted = " (deleted " + d.Format("05.000") + ")"
		}
		out = append(out, fmt.Sprintf("%s%s %s: %s", k[0], deleted, k[1], strings.Join(parts, ", ")))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// everShared reports whether two users were ever members of one project
// (an addition in flight counted, as in mayBeJoining).
func (w *syncWorld) everShared(a, b string) bool {
	in := func(p, u string) bool { // an addition answered, or in flight (mayBeJoining)
		return w.adding[[2]string{p, u}] > 0 || slices.ContainsFunc(w.history[[2]string{p, u}], func(e memberEvent) bool { return e.add })
	}
	for k := range w.history {
		if k[1] == a && in(k[0], a) && in(k[0], b) {
			return true
		}
	}
	for k, n := range w.adding {
		if n > 0 && k[1] == a && in(k[0], b) {
			return true
		}
	}
	return false
}
