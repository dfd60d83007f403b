package modeltest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/policy"
)

// TestModel's mutations, each with its predicted outcome.

// ---- random values ----

func modelPick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

var modelToday = domain.DateOf(testenv.Now)

func (m *modelRun) randDate() string {
	if m.rng.IntN(12) == 0 {
		return modelPick(m.rng, []string{"1999-12-31", "2026-08-24", "2026-08-25", "2026-08-26", "2099-02-28", "2028-02-29"})
	}
	return modelToday.AddDays(m.rng.IntN(33) - 12).String()
}

// randTags returns tags as a client might send them and the set the server
// should keep: trimmed, lower-cased, duplicates dropped.
func (m *modelRun) randTags(n int) (in []string, norm []string) {
	in = []string{}
	norm = []string{}
	for range n {
		tg := modelPick(m.rng, modelTags)
		form := tg
		switch m.rng.IntN(5) {
		case 0:
			form = strings.ToUpper(tg)
		case 1:
			form = "  " + tg + "\t"
		case 2:
			form = strings.ToUpper(tg[:1]) + tg[1:]
		}
		in = append(in, form)
		if !slices.Contains(norm, tg) {
			norm = append(norm, tg)
		}
	}
	return in, norm
}

func (m *modelRun) liveProjects(busy map[*modelProject]bool) []*modelProject {
	var out []*modelProject
	for _, p := range m.projects {
		if !p.gone && !busy[p] {
			out = append(out, p)
		}
	}
	return out
}

func (m *modelRun) liveTasks(busy map[*modelProject]bool) []*modelTask {
	var out []*modelTask
	for _, t := range m.tasks {
		if t.live() && !busy[t.p] {
			out = append(out, t)
		}
	}
	return out
}

func (m *modelRun) liveComments(busy map[*modelProject]bool) []*modelComment {
	var out []*modelComment
	for _, c := range m.comments {
		if c.live() && !busy[c.task.p] {
			out = append(out, c)
		}
	}
	return out
}

// outsider returns a user with a profile who is no member of p, or the
// ghost (no profile) when every user is one.
func (m *modelRun) outsider(p *modelProject) string {
	if out := p.nonMembers(); len(out) > 0 {
		return modelPick(m.rng, out)
	}
	return modelGhost
}

// ---- the mutations, each with its predicted outcome ----

func (m *modelRun) opCreateProject(fail bool) *modelOp {
	viewer := modelPick(m.rng, modelUsers)
	name := fmt.Sprintf("Project %d", m.next())
	input := map[string]any{"name": "  " + name + " "}
	if m.rng.IntN(2) == 0 {
		input["description"] = "About " + name
	}
	op := &modelOp{name: "createProject", viewer: viewer, query: modelMCreateProject, vars: map[string]any{"input": input}}
	if fail {
		switch m.rng.IntN(3) {
		case 0:
			op.viewer, op.want = modelGhost, []string{"NOT_FOUND"}
		case 1:
			input["name"], op.want = " \t ", []string{"BAD_USER_INPUT"}
		default:
			input["name"], op.want = strings.Repeat("n", 201), []string{"BAD_USER_INPUT"}
		}
	}
	op.apply = func(data json.RawMessage) {
		v, ok := modelDecode[struct {
			modelMembersView
			Name  string
			Owner struct{ ID string }
		}](m, data, "createProject")
		if !ok {
			return
		}
		p := &modelProject{id: v.ID, owner: op.viewer, name: name, members: map[string]bool{op.viewer: true}}
		m.projects = append(m.projects, p)
		op.keyed = func() *modelKeyed { return &modelKeyed{field: "createProject", vars: op.vars, id: p.id, p: p} }
		if v.Owner.ID != op.viewer || v.Name != name || domain.KindOf(v.ID) != domain.KindProject {
			m.violate("createProject by %s returned %s", op.viewer, testenv.ShortJSON(v))
		}
		m.checkMembers("createProject", v.modelMembersView, p)
	}
	return op
}

func (m *modelRun) opAddMember(p *modelProject, fail bool) *modelOp {
	u := modelPick(m.rng, modelUsers)
	if nm := p.nonMembers(); len(nm) > 0 && m.rng.IntN(4) > 0 {
		u = modelPick(m.rng, nm)
	}
	op := &modelOp{name: "addProjectMember", viewer: p.owner, query: modelMAddMember, scope: p}
	if fail {
		switch m.rng.IntN(4) {
		case 0:
			if no := p.nonOwners(); len(no) > 0 {
				op.viewer, op.want = modelPick(m.rng, no), []string{"FORBIDDEN"}
				break
			}
			fallthrough
		case 1:
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
		case 2:
			u, op.want = modelGhost, []string{"NOT_FOUND"}
		default:
			u, op.want = "two words", []string{"BAD_USER_INPUT"}
		}
	}
	op.vars = map[string]any{"p": p.id, "u": u}
	if !p.members[u] { // adding a member again changes nothing and records nothing
		op.keyed = func() *modelKeyed { return &modelKeyed{field: "addProjectMember", vars: op.vars, id: p.id, p: p} }
	}
	op.apply = func(data json.RawMessage) {
		p.members[u] = true
		if v, ok := modelDecode[modelMembersView](m, data, "addProjectMember"); ok {
			m.checkMembers("addProjectMember", v, p)
		}
	}
	return op
}

// removeMember applies a member's removal to the model: their tasks in the
// project become unassigned, each a new version.
func (m *modelRun) removeMember(p *modelProject, u string) {
	delete(p.members, u)
	for _, t := range p.liveTasks() {
		if t.assignee == u {
			t.assignee = ""
			t.version++
		}
	}
}

func (m *modelRun) opRemoveMember(p *modelProject, fail bool) *modelOp {
	no := p.nonOwners()
	if len(no) == 0 && !fail {
		return nil
	}
	op := &modelOp{name: "removeProjectMember", viewer: p.owner, query: modelMRemoveMember, scope: p}
	u := ""
	if len(no) > 0 {
		u = modelPick(m.rng, no)
	}
	if fail || u == "" {
		switch m.rng.IntN(4) {
		case 0:
			u, op.want = p.owner, []string{"BAD_USER_INPUT"}
		case 1:
			if nm := p.nonMembers(); len(nm) > 0 {
				u, op.want = modelPick(m.rng, nm), []string{"NOT_FOUND"}
				break
			}
			u, op.want = modelGhost, []string{"NOT_FOUND"}
		case 2:
			if len(no) > 0 {
				op.viewer, op.want = modelPick(m.rng, no), []string{"FORBIDDEN"}
				if u == "" {
					u = p.owner
				}
				break
			}
			fallthrough
		default:
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
			if u == "" {
				u = p.owner
			}
		}
	}
	op.vars = map[string]any{"p": p.id, "u": u}
	op.keyed = func() *modelKeyed { return &modelKeyed{field: "removeProjectMember", vars: op.vars, id: p.id, p: p} }
	op.apply = func(data json.RawMessage) {
		m.removeMember(p, u)
		if v, ok := modelDecode[modelMembersView](m, data, "removeProjectMember"); ok {
			m.checkMembers("removeProjectMember", v, p)
		}
	}
	return op
}

func (m *modelRun) opCreateTask(p *modelProject, fail bool) *modelOp {
	if len(p.liveTasks()) >= modelMaxTasks && !fail {
		return nil
	}
	members := p.memberList()
	viewer := modelPick(m.rng, members)
	n := m.next()
	title := fmt.Sprintf("Task %d", n)
	input := map[string]any{"projectId": p.id, "title": " " + title}
	nt := &modelTask{p: p, title: title, status: "TODO", version: 1, tags: []string{}}
	if m.rng.IntN(3) > 0 {
		nt.due = m.randDate()
		input["dueDate"] = nt.due
	} else if m.rng.IntN(2) == 0 {
		input["dueDate"] = nil
	}
	if m.rng.IntN(5) < 3 {
		nt.assignee = modelPick(m.rng, members)
		input["assigneeId"] = nt.assignee
	}
	if m.rng.IntN(4) > 0 {
		in, norm := m.randTags(m.rng.IntN(5))
		input["tags"], nt.tags = in, norm
	}
	if m.rng.IntN(3) == 0 {
		d := fmt.Sprintf("Details of task %d", n)
		input["description"], nt.desc = "\n"+d, &d
	}
	op := &modelOp{name: "createTask", viewer: viewer, query: modelMCreateTask, vars: map[string]any{"input": input}, scope: p}
	if fail {
		switch m.rng.IntN(7) {
		case 0:
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
			delete(input, "assigneeId")
		case 1:
			input["title"], op.want = "   ", []string{"BAD_USER_INPUT"}
		case 2:
			input["tags"], op.want = []string{"ok", "not ok"}, []string{"BAD_USER_INPUT"}
		case 3:
			many := []string{}
			for i := range 21 {
				many = append(many, fmt.Sprintf("t%d", i))
			}
			input["tags"], op.want = many, []string{"BAD_USER_INPUT"}
		case 4:
			input["dueDate"], op.want = modelPick(m.rng, []string{"2026-02-30", "2026-13-01", "26-08-25", "2026-08-25T00:00:00Z"}),
				[]string{"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}
		case 5:
			if nm := p.nonMembers(); len(nm) > 0 {
				input["assigneeId"], op.want = modelPick(m.rng, nm), []string{"BAD_USER_INPUT"}
				break
			}
			fallthrough
		default:
			input["description"], op.want = strings.Repeat("d", 10_001), []string{"BAD_USER_INPUT"}
		}
	}
	op.apply = func(data json.RawMessage) {
		v, ok := modelDecode[modelTaskView](m, data, "createTask")
		if !ok {
			return
		}
		nt.id = v.ID
		p.tasks = append(p.tasks, nt)
		m.tasks = append(m.tasks, nt)
		m.checkTask("createTask", v, nt)
	}
	op.keyed = func() *modelKeyed { return &modelKeyed{field: "createTask", vars: op.vars, id: nt.id, p: p, t: nt} }
	return op
}

// randPatch builds an updateTask input changing the given fields, and the
// change it should make.
func (m *modelRun) randPatch(t *modelTask, fields []string) (map[string]any, func(*modelTask)) {
	input := map[string]any{"id": t.id}
	var fs []func(*modelTask)
	for _, f := range fields {
		switch f {
		case "title":
			title := fmt.Sprintf("Task %d, renamed", m.next())
			input["title"] = title + "  "
			fs = append(fs, func(t *modelTask) { t.title = title })
		case "description":
			if m.rng.IntN(3) == 0 {
				input["description"] = modelPick(m.rng, []any{nil, "  "})
				fs = append(fs, func(t *modelTask) { t.desc = nil })
			} else {
				d := fmt.Sprintf("Notes %d", m.next())
				input["description"] = d
				fs = append(fs, func(t *modelTask) { t.desc = &d })
			}
		case "status":
			s := modelPick(m.rng, modelStatuses)
			input["status"] = s
			fs = append(fs, func(t *modelTask) { t.status = s })
		case "dueDate":
			if m.rng.IntN(4) == 0 {
				input["dueDate"] = nil
				fs = append(fs, func(t *modelTask) { t.due = "" })
			} else {
				d := m.randDate()
				input["dueDate"] = d
				fs = append(fs, func(t *modelTask) { t.due = d })
			}
		case "assigneeId":
			if m.rng.IntN(4) == 0 {
				input["assigneeId"] = nil
				fs = append(fs, func(t *modelTask) { t.assignee = "" })
			} else {
				a := modelPick(m.rng, t.p.memberList())
				input["assigneeId"] = a
				fs = append(fs, func(t *modelTask) { t.assignee = a })
			}
		case "tags":
			switch m.rng.IntN(6) {
			case 0:
				input["tags"] = nil
				fs = append(fs, func(t *modelTask) { t.tags = []string{} })
			case 1:
				input["tags"] = []string{}
				fs = append(fs, func(t *modelTask) { t.tags = []string{} })
			default:
				in, norm := m.randTags(1 + m.rng.IntN(5))
				input["tags"] = in
				fs = append(fs, func(t *modelTask) { t.tags = norm })
			}
		}
	}
	return input, func(t *modelTask) {
		for _, f := range fs {
			f(t)
		}
		t.version++
	}
}

var modelTaskFieldNames = []string{"title", "description", "status", "dueDate", "assigneeId", "tags"}

func (m *modelRun) randFields(maxN int) []string {
	fields := slices.Clone(modelTaskFieldNames)
	m.rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return fields[:1+m.rng.IntN(maxN)]
}

func (m *modelRun) opUpdateTask(t *modelTask, fail bool) *modelOp {
	p := t.p
	viewer := modelPick(m.rng, p.memberList())
	input, apply := m.randPatch(t, m.randFields(len(modelTaskFieldNames)))
	if m.rng.IntN(2) == 0 {
		input["expectedVersion"] = t.version
	}
	op := &modelOp{name: "updateTask", viewer: viewer, query: modelMUpdateTask, vars: map[string]any{"input": input}, scope: p}
	if fail {
		switch m.rng.IntN(6) {
		case 0:
			input["expectedVersion"], op.want = t.version+modelPick(m.rng, []int{-1, 1, 7}), []string{"CONFLICT"}
		case 1:
			input["title"], op.want = nil, []string{"BAD_USER_INPUT"}
		case 2:
			input["tags"], op.want = []string{"fine", strings.Repeat("x", 51)}, []string{"BAD_USER_INPUT"}
		case 3:
			if nm := p.nonMembers(); len(nm) > 0 {
				input["assigneeId"], op.want = modelPick(m.rng, nm), []string{"BAD_USER_INPUT"}
				break
			}
			fallthrough
		case 4:
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
		default:
			input["status"], op.want = nil, []string{"BAD_USER_INPUT"}
		}
	}
	op.apply = func(data json.RawMessage) {
		apply(t)
		if v, ok := modelDecode[modelTaskView](m, data, "updateTask"); ok {
			m.checkTask("updateTask", v, t)
		}
	}
	op.keyed = func() *modelKeyed { return &modelKeyed{field: "updateTask", vars: op.vars, id: t.id, p: p, t: t} }
	return op
}

func (m *modelRun) deleteTask(t *modelTask) {
	t.gone = true
	for _, c := range t.comments {
		c.gone = true
	}
}

// deleteRefusal is the code policy refuses viewer, a member, the delete of
// t with, as the model holds it ("": policy lets them): the model asks the
// rule rather than restating it, so its ops follow a change of the rule.
func deleteRefusal(viewer string, t *modelTask) string {
	task := &domain.Task{ID: t.id, ProjectID: t.p.id, Title: t.title, Description: t.desc,
		Status: domain.TaskStatus(t.status), Tags: t.tags, Version: t.version}
	if t.assignee != "" {
		task.AssigneeID = &t.assignee
	}
	if _, err := policy.MayDeleteTask(viewer, task, &domain.Project{ID: t.p.id, Name: t.p.name, OwnerID: t.p.owner}); err != nil {
		return codes.OfDomain(domain.ErrorCode(err))
	}
	return ""
}

func (m *modelRun) opDeleteTask(t *modelTask, fail bool) *modelOp {
	op := &modelOp{name: "deleteTask", viewer: modelPick(m.rng, t.p.memberList()), query: modelMDeleteTask,
		vars: map[string]any{"id": t.id}, scope: t.p}
	if code := deleteRefusal(op.viewer, t); code != "" {
		op.want = []string{code}
	}
	if fail {
		op.viewer, op.want = m.outsider(t.p), []string{"NOT_FOUND"}
	}
	op.apply = func(data json.RawMessage) {
		if v, ok := modelDecode[string](m, data, "deleteTask"); ok && v != t.id {
			m.violate("deleteTask(%s) returned %q", t.id, v)
		}
		m.deleteTask(t)
	}
	op.keyed = func() *modelKeyed {
		return &modelKeyed{field: "deleteTask", vars: op.vars, id: t.id, p: t.p, t: t, deleted: true}
	}
	return op
}

func (m *modelRun) opAddComment(t *modelTask, fail bool) *modelOp {
	if len(t.liveComments()) >= modelMaxComments && !fail {
		return nil
	}
	viewer := modelPick(m.rng, t.p.memberList())
	body := fmt.Sprintf("Comment %d", m.next())
	input := map[string]any{"taskId": t.id, "body": "\t" + body + "\n"}
	op := &modelOp{name: "addComment", viewer: viewer, query: modelMAddComment, vars: map[string]any{"input": input}, scope: t.p}
	if fail {
		switch m.rng.IntN(3) {
		case 0:
			input["body"], op.want = " \n ", []string{"BAD_USER_INPUT"}
		case 1:
			input["body"], op.want = strings.Repeat("b", 10_001), []string{"BAD_USER_INPUT"}
		default:
			op.viewer, op.want = m.outsider(t.p), []string{"NOT_FOUND"}
		}
	}
	op.apply = func(data json.RawMessage) {
		v, ok := modelDecode[struct {
			ID, Body string
			Author   struct{ ID, Name string }
			Task     struct{ ID string }
		}](m, data, "addComment")
		if !ok {
			return
		}
		c := &modelComment{id: v.ID, author: op.viewer, body: body, task: t}
		t.comments = append(t.comments, c)
		m.comments = append(m.comments, c)
		op.keyed = func() *modelKeyed { return &modelKeyed{field: "addComment", vars: op.vars, id: c.id, p: t.p, c: c} }
		if v.Body != body || v.Author.ID != op.viewer || v.Author.Name != modelUserName(op.viewer) || v.Task.ID != t.id ||
			!strings.HasPrefix(v.ID, "cmt#"+t.id[len("tsk#"):]+"#") {
			m.violate("addComment by %s on %s returned %s", op.viewer, t.id, testenv.ShortJSON(v))
		}
	}
	return op
}

func (m *modelRun) opDeleteComment(c *modelComment, fail bool) *modelOp {
	p := c.task.p
	viewer := p.owner
	if p.members[c.author] && m.rng.IntN(3) > 0 {
		viewer = c.author
	}
	op := &modelOp{name: "deleteComment", viewer: viewer, query: modelMDeleteComment, vars: map[string]any{"id": c.id}, scope: p}
	if fail {
		var others []string
		for _, u := range p.nonOwners() {
			if u != c.author {
				others = append(others, u)
			}
		}
		if len(others) > 0 && m.rng.IntN(2) == 0 {
			op.viewer, op.want = modelPick(m.rng, others), []string{"FORBIDDEN"}
		} else {
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
		}
	}
	op.apply = func(data json.RawMessage) { c.gone = true }
	op.keyed = func() *modelKeyed {
		return &modelKeyed{field: "deleteComment", vars: op.vars, id: c.id, p: p, c: c, deleted: true}
	}
	return op
}

func (m *modelRun) opDeleteProject(p *modelProject, fail bool) *modelOp {
	op := &modelOp{name: "deleteProject", viewer: p.owner, query: modelMDeleteProject, vars: map[string]any{"id": p.id}, scope: p}
	if fail {
		if no := p.nonOwners(); len(no) > 0 && m.rng.IntN(2) == 0 {
			op.viewer, op.want = modelPick(m.rng, no), []string{"FORBIDDEN"}
		} else {
			op.viewer, op.want = m.outsider(p), []string{"NOT_FOUND"}
		}
	}
	op.apply = func(data json.RawMessage) {
		if v, ok := modelDecode[string](m, data, "deleteProject"); ok && v != p.id {
			m.violate("deleteProject(%s) returned %q", p.id, v)
		}
		p.gone = true
	}
	op.keyed = func() *modelKeyed {
		return &modelKeyed{field: "deleteProject", vars: op.vars, id: p.id, p: p, deleted: true}
	}
	return op
}

// opGone targets what no longer exists, or ids of the wrong form.
func (m *modelRun) opGone() *modelOp {
	var deadP []*modelProject
	for _, p := range m.projects {
		if p.gone {
			deadP = append(deadP, p)
		}
	}
	var deadT []*modelTask
	for _, t := range m.tasks {
		if !t.live() {
			deadT = append(deadT, t)
		}
	}
	var deadC []*modelComment
	for _, c := range m.comments {
		if !c.live() {
			deadC = append(deadC, c)
		}
	}
	nf := []string{"NOT_FOUND"}
	noop := func(json.RawMessage) {}
	switch k := m.rng.IntN(6); {
	case k == 0 && len(deadP) > 0:
		p := modelPick(m.rng, deadP)
		return &modelOp{name: "createTask in a deleted project", viewer: p.owner, query: modelMCreateTask, want: nf, apply: noop,
			vars: map[string]any{"input": map[string]any{"projectId": p.id, "title": "Too late"}}}
	case k == 1 && len(deadP) > 0:
		p := modelPick(m.rng, deadP)
		return &modelOp{name: "addProjectMember to a deleted project", viewer: p.owner, query: modelMAddMember, want: nf,
			apply: noop, vars: map[string]any{"p": p.id, "u": modelPick(m.rng, modelUsers)}}
	case k == 2 && len(deadT) > 0:
		t := modelPick(m.rng, deadT)
		return &modelOp{name: "updateTask of a deleted task", viewer: t.p.owner, query: modelMUpdateTask, want: nf, apply: noop,
			vars: map[string]any{"input": map[string]any{"id": t.id, "status": "DONE"}}}
	case k == 3 && len(deadT) > 0:
		t := modelPick(m.rng, deadT)
		return &modelOp{name: "addComment to a deleted task", viewer: t.p.owner, query: modelMAddComment, want: nf, apply: noop,
			vars: map[string]any{"input": map[string]any{"taskId": t.id, "body": "Anyone?"}}}
	case k == 4 && len(deadC) > 0:
		c := modelPick(m.rng, deadC)
		return &modelOp{name: "deleteComment of a deleted comment", viewer: c.task.p.owner, query: modelMDeleteComment,
			want: nf, apply: noop, vars: map[string]any{"id": c.id}}
	}
	bad := []string{"BAD_USER_INPUT"}
	switch m.rng.IntN(3) {
	case 0:
		return &modelOp{name: "deleteTask of a malformed id", viewer: modelPick(m.rng, modelUsers), query: modelMDeleteTask,
			want: bad, apply: noop, vars: map[string]any{"id": "tsk#not-a-ulid"}}
	case 1:
		if len(m.projects) > 0 {
			return &modelOp{name: "deleteComment of a project id", viewer: modelPick(m.rng, modelUsers), query: modelMDeleteComment,
				want: bad, apply: noop, vars: map[string]any{"id": modelPick(m.rng, m.projects).id}}
		}
	}
	return &modelOp{name: "addProjectMember with a task id", viewer: modelPick(m.rng, modelUsers), query: modelMAddMember,
		want: bad, apply: noop, vars: map[string]any{"p": "tsk#01ARZ3NDEKTSV4RRFFQ69G5FAV", "u": "ann"}}
}
