package modeltest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestModel's checks of the access patterns against the model.

// object on the path is null.
func (m *modelRun) page(viewer, query string, vars map[string]any, path []string, first int) (nodes []json.RawMessage, null bool) {
	m.t.Helper()
	nodes, _, null = m.pageWithParent(viewer, query, vars, path, first)
	return nodes, null
}

// pageWithParent is page that also returns, from the first page, the
// object that holds the connection. It reads the list forwards (first,
// after) or, picked at random, backwards (last, before): either way the
// pages must add up to the whole list in its order.
func (m *modelRun) pageWithParent(viewer, query string, vars map[string]any, path []string, first int) (nodes []json.RawMessage, parent json.RawMessage, null bool) {
	m.t.Helper()
	vars = maps.Clone(vars)
	if vars == nil {
		vars = map[string]any{}
	}
	back := m.rng.IntN(2) == 0
	var cursor *string
	for pages := 0; ; pages++ {
		if back {
			vars["last"], vars["before"] = first, cursor
		} else {
			vars["first"], vars["after"] = first, cursor
		}
		data, ok := m.query(viewer, query, vars)
		if !ok {
			return nil, nil, false
		}
		cur := data
		for i, key := range path {
			if pages == 0 && i == len(path)-1 {
				parent = cur
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(cur, &obj); err != nil {
				m.violate("reading %v of %.300s: %v", path, data, err)
				return nil, nil, false
			}
			cur = obj[key]
			if len(cur) == 0 || string(cur) == "null" {
				if pages > 0 {
					m.violate("%v became null on page %d for %s", path, pages+1, viewer)
				}
				return nil, nil, true
			}
		}
		var conn struct {
			Nodes    []json.RawMessage
			PageInfo struct {
				HasNextPage, HasPreviousPage bool
				EndCursor, StartCursor       *string
			}
		}
		if err := json.Unmarshal(cur, &conn); err != nil {
			m.violate("decoding the connection %v: %v", path, err)
			return nil, nil, false
		}
		pi := conn.PageInfo
		more, next, far := pi.HasNextPage, pi.EndCursor, pi.HasPreviousPage
		if back {
			nodes = append(slices.Clone(conn.Nodes), nodes...)
			more, next, far = pi.HasPreviousPage, pi.StartCursor, pi.HasNextPage
		} else {
			nodes = append(nodes, conn.Nodes...)
		}
		if len(conn.Nodes) > first {
			m.violate("%v: a page of %d has %d nodes (backwards %v)", path, first, len(conn.Nodes), back)
		}
		if len(conn.Nodes) > 0 && (pi.StartCursor == nil || pi.EndCursor == nil) {
			m.violate("%v for %s: a page of %d nodes without startCursor or endCursor", path, viewer, len(conn.Nodes))
		}
		if far {
			m.violate("%v for %s: a page read backwards %v says items lie beyond its far end", path, viewer, back)
		}
		if !more {
			return nodes, parent, false
		}
		if len(conn.Nodes) == 0 || next == nil {
			m.violate("%v for %s: more items with an empty page or no cursor (page %d, backwards %v)", path, viewer, pages+1, back)
			return nodes, parent, false
		}
		if pages > 1000 {
			m.violate("%v for %s: more than 1000 pages", path, viewer)
			return nodes, parent, false
		}
		cursor = next
	}
}

func modelIDs(nodes []json.RawMessage) []string {
	out := []string{}
	for _, n := range nodes {
		var v struct{ ID string }
		_ = json.Unmarshal(n, &v)
		out = append(out, v.ID)
	}
	return out
}

func (m *modelRun) wantIDs(what string, got, want []string) {
	m.t.Helper()
	if !slices.Equal(got, want) {
		m.violate("%s:\n got  %v\n want %v", what, got, want)
	}
}

func (m *modelRun) pageSize() int { return modelPick(m.rng, []int{100, 100, 100, 2, 7}) }

func (m *modelRun) member(u string, p *modelProject) bool { return !p.gone && p.members[u] }

func (m *modelRun) sortedTasks(keep func(*modelTask) bool) []string {
	var ts []*modelTask
	for _, t := range m.tasks {
		if t.live() && keep(t) {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, modelDueLess)
	out := []string{}
	for _, t := range ts {
		out = append(out, t.id)
	}
	return out
}

// projectsOf lists w's projects that viewer may see, newest first.
func (m *modelRun) projectsOf(w, viewer string) []string {
	out := []string{}
	for _, p := range m.projects {
		if m.member(w, p) && m.member(viewer, p) {
			out = append(out, p.id)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

const (
	modelQMine = `query($asOf: Date) { me {
		projects(first: 100) { nodes { id } ` + modelConnPage + ` }
		assignedTasks(first: 100) { nodes { id } ` + modelConnPage + ` }
		overdueTasks(first: 100) { nodes { id } ` + modelConnPage + ` }
		overdueAsOf: overdueTasks(asOf: $asOf, first: 100) { nodes { id } ` + modelConnPage + ` } } }`
	modelQMyProjects = `query($first: Int, $after: String, $last: Int, $before: String) { me { projects(first: $first, after: $after, last: $last, before: $before) { nodes { id owner { id } } ` + modelConnPage + ` } } }`
	modelQMyAssigned = `query($first: Int, $after: String, $last: Int, $before: String) { me { assignedTasks(first: $first, after: $after, last: $last, before: $before) { nodes { id status dueDate assignee { id } } ` + modelConnPage + ` } } }`
	modelQMyOverdue  = `query($first: Int, $after: String, $last: Int, $before: String, $asOf: Date) { me { overdueTasks(asOf: $asOf, first: $first, after: $after, last: $last, before: $before) { nodes { id status dueDate } ` + modelConnPage + ` } } }`
	modelQUser       = `query($id: ID!, $asOf: Date) { user(id: $id) { id name email
		projects(first: 100) { nodes { id } ` + modelConnPage + ` }
		assignedTasks(first: 100) { nodes { id } ` + modelConnPage + ` }
		overdueTasks(asOf: $asOf, first: 100) { nodes { id } ` + modelConnPage + ` } } }`
	modelQUserProjects = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { user(id: $id) { projects(first: $first, after: $after, last: $last, before: $before) { nodes { id } ` + modelConnPage + ` } } }`
	modelQUserAssigned = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { user(id: $id) { assignedTasks(first: $first, after: $after, last: $last, before: $before) { nodes { id } ` + modelConnPage + ` } } }`
	modelQUserOverdue  = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $asOf: Date) { user(id: $id) { overdueTasks(asOf: $asOf, first: $first, after: $after, last: $last, before: $before) { nodes { id } ` + modelConnPage + ` } } }`
	modelQProject      = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $cfirst: Int) { project(id: $id) { id name owner { id }
		members { role user { id name } } taskCounts { total todo inProgress done }
		tasks(first: $first, after: $after, last: $last, before: $before) { nodes { ` + modelTaskFields + ` commentCount
			comments(first: $cfirst) { nodes { id body author { id name } } ` + modelConnPage + ` } } ` + modelConnPage + ` } } }`
	modelQProjectStatus = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $status: TaskStatus) { project(id: $id) {
		tasks(first: $first, after: $after, last: $last, before: $before, status: $status) { nodes { id status } ` + modelConnPage + ` } } }`
	modelQTaskComments = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { task(id: $id) { comments(first: $first, after: $after, last: $last, before: $before) {
		nodes { id body author { id name } } ` + modelConnPage + ` } } }`
	modelQTag = `query($tag: String!, $first: Int, $after: String, $last: Int, $before: String) { tasksByTag(tag: $tag, first: $first, after: $after, last: $last, before: $before) { nodes { id dueDate } ` + modelConnPage + ` } }`
)

type modelConn struct {
	Nodes    []json.RawMessage
	PageInfo struct {
		HasNextPage bool
		EndCursor   *string
	}
}

type modelCommentView struct {
	ID, Body string
	Author   struct{ ID, Name string }
}

// checkPatterns checks the seven access patterns, as every user sees them,
// against the model.
func (m *modelRun) checkPatterns() {
	m.t.Helper()
	m.patternChecks++
	defer func(start time.Time) { m.patternTime += time.Since(start) }(time.Now())
	// Reads change nothing: one sight serves them all.
	m.readView = m.sight()
	defer func() { m.readView = nil }()
	asOf := modelToday.AddDays(m.rng.IntN(21) - 10).String()
	today := modelToday.String()
	for _, v := range modelUsers {
		// Patterns 2, 4 and 7 for the viewer, in one read; one of them
		// again page by page.
		overdue := func(day string) []string {
			return m.sortedTasks(func(t *modelTask) bool {
				return t.assignee == v && t.status != "DONE" && t.due != "" && t.due < day
			})
		}
		lists := []struct {
			alias, query string
			vars         map[string]any
			want         []string
		}{
			{"projects", modelQMyProjects, nil, m.projectsOf(v, v)},
			{"assignedTasks", modelQMyAssigned, nil, m.sortedTasks(func(t *modelTask) bool { return t.assignee == v })},
			{"overdueTasks", modelQMyOverdue, nil, overdue(today)},
			{"overdueAsOf", modelQMyOverdue, map[string]any{"asOf": asOf}, overdue(asOf)},
		}
		if data, ok := m.query(v, modelQMine, map[string]any{"asOf": asOf}); ok {
			var got struct{ Me map[string]modelConn }
			if err := json.Unmarshal(data, &got); err != nil {
				m.violate("decoding %s: %v", data, err)
			}
			for _, l := range lists {
				c := got.Me[l.alias]
				if c.PageInfo.HasNextPage {
					c.Nodes, _ = m.page(v, l.query, l.vars, []string{"me", strings.Replace(l.alias, "AsOf", "Tasks", 1)}, 100)
				}
				m.wantIDs(fmt.Sprintf("%s: me.%s (as of %s)", v, l.alias, asOf), modelIDs(c.Nodes), l.want)
			}
		}
		l := modelPick(m.rng, lists)
		nodes, _ := m.page(v, l.query, l.vars, []string{"me", strings.Replace(l.alias, "AsOf", "Tasks", 1)}, m.pageSize())
		m.wantIDs(fmt.Sprintf("%s: me.%s (as of %s) page by page", v, l.alias, asOf), modelIDs(nodes), l.want)

		// Patterns 1, 2, 4, 7 for the other users: only what lies in
		// projects v is a member of too.
		for _, w := range append(slices.Clone(modelUsers), modelGhost) {
			m.checkOtherUser(v, w, asOf)
		}
		// Patterns 3 and 5: each project's tasks and their comments.
		for _, p := range m.projects {
			if p.gone && m.rng.IntN(4) > 0 {
				continue
			}
			m.checkProject(v, p)
		}
		// Pattern 6: tasks by tag, in v's projects, every tag in one read
		// (tags in the forms clients send them); one again page by page.
		var q strings.Builder
		vars := map[string]any{}
		q.WriteString("query(")
		for i := range modelTags {
			fmt.Fprintf(&q, "$t%d: String!, ", i)
		}
		q.WriteString(") {")
		forms := make([]string, len(modelTags))
		for i, tag := range modelTags {
			forms[i] = tag
			if m.rng.IntN(3) == 0 {
				forms[i] = " " + strings.ToUpper(tag) + " "
			}
			vars[fmt.Sprintf("t%d", i)] = forms[i]
			fmt.Fprintf(&q, " t%d: tasksByTag(tag: $t%d, first: 100) { nodes { id } %s }", i, i, modelConnPage)
		}
		q.WriteString(" }")
		byTag := func(tag string) []string {
			return m.sortedTasks(func(t *modelTask) bool { return m.member(v, t.p) && slices.Contains(t.tags, tag) })
		}
		if data, ok := m.query(v, q.String(), vars); ok {
			var got map[string]modelConn
			if err := json.Unmarshal(data, &got); err != nil {
				m.violate("decoding %s: %v", data, err)
			}
			for i, tag := range modelTags {
				c := got[fmt.Sprintf("t%d", i)]
				if c.PageInfo.HasNextPage {
					c.Nodes, _ = m.page(v, modelQTag, map[string]any{"tag": forms[i]}, []string{"tasksByTag"}, 100)
				}
				m.wantIDs(fmt.Sprintf("%s: tasksByTag(%q)", v, forms[i]), modelIDs(c.Nodes), byTag(tag))
			}
		}
		i := m.rng.IntN(len(modelTags))
		nodes, _ = m.page(v, modelQTag, map[string]any{"tag": forms[i]}, []string{"tasksByTag"}, m.pageSize())
		m.wantIDs(fmt.Sprintf("%s: tasksByTag(%q) page by page", v, forms[i]), modelIDs(nodes), byTag(modelTags[i]))

		// What v may not see is null, exactly like what does not exist.
		var ids []string
		var visible []bool
		for range 4 {
			if len(m.tasks) > 0 {
				t := modelPick(m.rng, m.tasks)
				ids, visible = append(ids, t.id), append(visible, t.live() && m.member(v, t.p))
			}
			if len(m.comments) > 0 {
				c := modelPick(m.rng, m.comments)
				ids, visible = append(ids, c.id), append(visible, c.live() && m.member(v, c.task.p))
			}
			if len(m.projects) > 0 {
				p := modelPick(m.rng, m.projects)
				ids, visible = append(ids, p.id), append(visible, m.member(v, p))
			}
		}
		m.checkNodes(v, ids, visible)
	}
	// The user without a profile.
	res := m.do(modelGhost, `{ me { id } }`, nil)
	m.queries++
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		m.violate("me for a viewer without a profile: want NOT_FOUND, got %+v", res.Errors)
	}
	var ids []string
	var visible []bool
	for _, p := range m.projects {
		if !p.gone {
			ids, visible = append(ids, p.id), append(visible, false)
		}
	}
	m.checkNodes(modelGhost, ids[:min(len(ids), 25)], visible)
}

// checkNodes reads node(id) for each id in one request (as aliases) and
// checks which are null.
func (m *modelRun) checkNodes(viewer string, ids []string, visible []bool) {
	m.t.Helper()
	if len(ids) == 0 {
		return
	}
	var q strings.Builder
	vars := map[string]any{}
	q.WriteString("query(")
	for i := range ids {
		fmt.Fprintf(&q, "$n%d: ID!, ", i)
	}
	q.WriteString(") {")
	for i, id := range ids {
		vars[fmt.Sprintf("n%d", i)] = id
		fmt.Fprintf(&q, " n%d: node(id: $n%d) { id }", i, i)
	}
	q.WriteString(" }")
	data, ok := m.query(viewer, q.String(), vars)
	if !ok {
		return
	}
	var got map[string]*struct{ ID string }
	if err := json.Unmarshal(data, &got); err != nil {
		m.violate("decoding %s: %v", data, err)
		return
	}
	for i, id := range ids {
		n := got[fmt.Sprintf("n%d", i)]
		if (n != nil) != visible[i] || n != nil && n.ID != id {
			m.violate("node(%s) for %s = %+v, want visible=%v", id, viewer, n, visible[i])
		}
	}
}

func (m *modelRun) checkOtherUser(v, w, asOf string) {
	m.t.Helper()
	shares := v == w
	for _, p := range m.projects {
		if m.member(v, p) && m.member(w, p) {
			shares = true
		}
	}
	data, ok := m.query(v, modelQUser, map[string]any{"id": w, "asOf": asOf})
	if !ok {
		return
	}
	type conn struct {
		Nodes    []json.RawMessage
		PageInfo struct{ HasNextPage bool }
	}
	var got struct {
		User *struct {
			ID, Name      string
			Email         *string
			Projects      conn
			AssignedTasks conn
			OverdueTasks  conn
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		m.violate("decoding user(%s) for %s: %v", w, v, err)
		return
	}
	if (got.User != nil) != shares {
		m.violate("user(%s) for %s: visible=%v, want %v", w, v, got.User != nil, shares)
		return
	}
	if got.User == nil {
		return
	}
	u := got.User
	if u.ID != w || u.Name != modelUserName(w) {
		m.violate("user(%s) for %s = %s", w, v, data)
	}
	if (u.Email != nil) != (v == w) {
		m.violate("user(%s).email for %s = %v: only the user sees their email", w, v, u.Email)
	}
	check := func(what string, c conn, query string, vars map[string]any, want []string) {
		nodes := c.Nodes
		if c.PageInfo.HasNextPage || m.rng.IntN(8) == 0 {
			// Read it again page by page.
			nodes, _ = m.page(v, query, vars, []string{"user", what}, m.pageSize())
		}
		m.wantIDs(fmt.Sprintf("%s: user(%s).%s", v, w, what), modelIDs(nodes), want)
	}
	check("projects", u.Projects, modelQUserProjects, map[string]any{"id": w}, m.projectsOf(w, v))
	check("assignedTasks", u.AssignedTasks, modelQUserAssigned, map[string]any{"id": w},
		m.sortedTasks(func(t *modelTask) bool { return t.assignee == w && m.member(v, t.p) }))
	check("overdueTasks", u.OverdueTasks, modelQUserOverdue, map[string]any{"id": w, "asOf": asOf},
		m.sortedTasks(func(t *modelTask) bool {
			return t.assignee == w && m.member(v, t.p) && t.status != "DONE" && t.due != "" && t.due < asOf
		}))
}

func (m *modelRun) checkProject(v string, p *modelProject) {
	m.t.Helper()
	cfirst := modelPick(m.rng, []int{20, 20, 2})
	nodes, parent, null := m.pageWithParent(v, modelQProject, map[string]any{"id": p.id, "cfirst": cfirst}, []string{"project", "tasks"},
		m.pageSize())
	if visible := m.member(v, p); null == visible {
		m.violate("project(%s) for %s: null=%v, want visible=%v", p.id, v, null, visible)
		return
	}
	if null {
		return
	}
	var pv struct {
		modelMembersView
		Name       string
		Owner      struct{ ID string }
		TaskCounts map[string]int
	}
	if err := json.Unmarshal(parent, &pv); err != nil {
		m.violate("decoding project(%s) for %s: %v", p.id, v, err)
	}
	counts := map[string]int{"total": 0, "todo": 0, "inProgress": 0, "done": 0}
	for _, t := range p.tasks {
		if t.live() {
			counts["total"]++
			counts[map[string]string{"TODO": "todo", "IN_PROGRESS": "inProgress", "DONE": "done"}[t.status]]++
		}
	}
	if !maps.Equal(pv.TaskCounts, counts) {
		m.violate("%s: project(%s).taskCounts %v, the model %v", v, p.id, pv.TaskCounts, counts)
	}
	m.checkMembers(v+": project.members", pv.modelMembersView, p)
	if pv.Name != p.name || pv.Owner.ID != p.owner {
		m.violate("%s: project(%s) has name %q owner %s, the model %q %s", v, p.id, pv.Name, pv.Owner.ID, p.name, p.owner)
	}
	want := m.sortedTasks(func(t *modelTask) bool { return t.p == p })
	m.wantIDs(fmt.Sprintf("%s: project(%s).tasks", v, p.id), modelIDs(nodes), want)
	byID := map[string]*modelTask{}
	for _, t := range p.tasks {
		byID[t.id] = t
	}
	for _, n := range nodes {
		var tv struct {
			modelTaskView
			CommentCount int
			Comments     struct {
				Nodes    []modelCommentView
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := json.Unmarshal(n, &tv); err != nil {
			m.violate("decoding a task: %v", err)
			continue
		}
		t := byID[tv.ID]
		if t == nil {
			continue // reported by the list comparison
		}
		m.checkTask(v+": project.tasks", tv.modelTaskView, t)
		if n := len(t.liveComments()); tv.CommentCount != n {
			m.violate("%s: task %s commentCount %d, the model has %d comments", v, t.id, tv.CommentCount, n)
		}
		comments := tv.Comments.Nodes
		if tv.Comments.PageInfo.HasNextPage {
			if tv.Comments.PageInfo.EndCursor == nil || len(comments) == 0 {
				m.violate("%s: task %s comments: hasNextPage with no endCursor or an empty page", v, t.id)
				continue
			}
			more, _ := m.pageFrom(v, t.id, *tv.Comments.PageInfo.EndCursor)
			comments = append(comments, more...)
		}
		var wantC []*modelComment
		for _, c := range t.liveComments() {
			wantC = append(wantC, c)
		}
		slices.SortFunc(wantC, func(a, b *modelComment) int { return cmp.Compare(a.id, b.id) })
		var gotIDs, wantIDs []string
		for _, c := range comments {
			gotIDs = append(gotIDs, c.ID)
		}
		for i, c := range wantC {
			wantIDs = append(wantIDs, c.id)
			if i < len(comments) && comments[i].ID == c.id &&
				(comments[i].Body != c.body || comments[i].Author.ID != c.author || comments[i].Author.Name != modelUserName(c.author)) {
				m.violate("%s: comment %s is %s; the model has author %s body %q", v, c.id, testenv.ShortJSON(comments[i]), c.author, c.body)
			}
		}
		m.wantIDs(fmt.Sprintf("%s: task(%s).comments", v, t.id), gotIDs, wantIDs)
	}
	// The status filter of pattern 3.
	if v == p.owner {
		s := modelPick(m.rng, modelStatuses)
		nodes, _ := m.page(v, modelQProjectStatus, map[string]any{"id": p.id, "status": s}, []string{"project", "tasks"}, m.pageSize())
		m.wantIDs(fmt.Sprintf("%s: project(%s).tasks(status: %s)", v, p.id, s), modelIDs(nodes),
			m.sortedTasks(func(t *modelTask) bool { return t.p == p && t.status == s }))
	}
}

// pageFrom reads a task's comments after a cursor.
func (m *modelRun) pageFrom(viewer, taskID, cursor string) ([]modelCommentView, bool) {
	m.t.Helper()
	var out []modelCommentView
	after := cursor
	for range 1000 {
		data, ok := m.query(viewer, modelQTaskComments, map[string]any{"id": taskID, "first": 3, "after": after})
		if !ok {
			return out, false
		}
		var v struct {
			Task *struct {
				Comments struct {
					Nodes    []modelCommentView
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
		}
		if err := json.Unmarshal(data, &v); err != nil || v.Task == nil {
			m.violate("task(%s).comments after %q for %s: %s", taskID, after, viewer, data)
			return out, false
		}
		out = append(out, v.Task.Comments.Nodes...)
		pi := v.Task.Comments.PageInfo
		if !pi.HasNextPage {
			return out, true
		}
		if pi.EndCursor == nil || len(v.Task.Comments.Nodes) == 0 {
			m.violate("task(%s).comments for %s: hasNextPage with an empty page or no endCursor", taskID, viewer)
			return out, false
		}
		after = *pi.EndCursor
	}
	return out, false
}

func (m *modelRun) check() {
	defer func(start time.Time) { m.tableTime += time.Since(start) }(time.Now())
	m.cleanup()
	m.checkTable()
}

// TestModel drives the server with a seeded random sequence of mutations by
// several users, partly concurrent, and keeps an in-memory model of what the
// successful ones did. Every so often it runs the cleanup worker, checks the
// whole table against the single-table design's invariants and the model,
// and checks the seven access patterns, as every user sees them through
// GraphQL, against the model.
//
// Some mutations carry an Idempotency-Key; replays of the keyed ones that
// succeeded must answer with the same result if the viewer may see it now
// and NOT_FOUND otherwise, and a key reused for another operation is
// refused. Every answer (mutation, replay or read) must show no project,
// task or comment that its viewer may not see at that moment (issue 13).
//
// By default it tries a few hundred mutations; more with
//
//	go test ./graph -run '^TestModel$' -model.n=5000 [-model.seed=7]
//
// or TASKGRAPH_MODEL_N / TASKGRAPH_MODEL_SEED in the environment.
//
// It runs on the embedded store only: dynalite has no TransactWriteItems,
// which every multi-item mutation needs.
