package modeltest

import (
	"fmt"
	"slices"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// ---- races: concurrent mutations of one project, outcomes derived from
// the responses ----

func (m *modelRun) raceStart(ops []*modelOp) {
	m.raceOps = ops
	m.runConcurrently(ops)
	for _, op := range ops {
		m.raced++
		m.outcome(op)
	}
}

func (m *modelRun) allowed(op *modelOp, codes ...string) string {
	m.t.Helper()
	c := modelCode(op.res)
	if c != "OK" && !slices.Contains(codes, c) {
		m.violate("race: %s by %s refused with %s (%+v), want success or one of %v\nvars: %s", op.name, op.viewer, c,
			op.res.Errors, codes, testenv.ShortJSON(op.vars))
	}
	return c
}

// raceRemoval removes a member while others assign tasks to them and they
// comment and create a task: whatever the order, no task may stay assigned
// to a non-member.
func (m *modelRun) raceRemoval() bool {
	var cands []*modelProject
	for _, p := range m.liveProjects(nil) {
		if len(p.nonOwners()) > 0 {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return false
	}
	p := modelPick(m.rng, cands)
	a := modelPick(m.rng, p.nonOwners())
	remove := &modelOp{name: "removeProjectMember", viewer: p.owner, query: modelMRemoveMember, vars: map[string]any{"p": p.id, "u": a}}
	n := m.next()
	create := &modelOp{name: "createTask assigned to the member", viewer: p.owner, query: modelMCreateTask,
		vars: map[string]any{"input": map[string]any{"projectId": p.id, "title": fmt.Sprintf("Task %d", n), "assigneeId": a,
			"dueDate": modelToday.AddDays(-1).String(), "tags": []string{"urgent"}}}}
	own := &modelOp{name: "createTask by the member", viewer: a, query: modelMCreateTask,
		vars: map[string]any{"input": map[string]any{"projectId": p.id, "title": fmt.Sprintf("Task %d", n+1)}}}
	m.next()
	ops := []*modelOp{remove, create, own}
	var assign, comment *modelOp
	var assignT, commentT *modelTask
	for _, t := range p.liveTasks() {
		switch {
		case assignT == nil && t.assignee != a:
			assignT = t
			assign = &modelOp{name: "updateTask assigning the member", viewer: p.owner, query: modelMUpdateTask,
				vars: map[string]any{"input": map[string]any{"id": t.id, "assigneeId": a}}}
			ops = append(ops, assign)
		case commentT == nil:
			commentT = t
			comment = &modelOp{name: "addComment by the member", viewer: a, query: modelMAddComment,
				vars: map[string]any{"input": map[string]any{"taskId": t.id, "body": fmt.Sprintf("Comment %d", m.next())}}}
			ops = append(ops, comment)
		}
	}
	m.raceStart(ops)

	removed := m.allowed(remove, "CONFLICT") == "OK"
	stillMember := func(op *modelOp, c string, why string) {
		if c != "OK" && c != "CONFLICT" && !removed {
			m.violate("race: %s refused with %s (%s) although %s stayed a member of %s", op.name, c, why, a, p.id)
		}
	}
	if c := m.allowed(create, "BAD_USER_INPUT", "CONFLICT"); c == "OK" {
		v, _ := modelDecode[modelTaskView](m, create.res.Data, "createTask")
		nt := &modelTask{id: v.ID, p: p, title: fmt.Sprintf("Task %d", n), status: "TODO", due: modelToday.AddDays(-1).String(),
			assignee: a, tags: []string{"urgent"}, version: 1}
		p.tasks, m.tasks = append(p.tasks, nt), append(m.tasks, nt)
	} else {
		stillMember(create, c, "no member to assign")
	}
	if c := m.allowed(own, "NOT_FOUND", "CONFLICT"); c == "OK" {
		v, _ := modelDecode[modelTaskView](m, own.res.Data, "createTask")
		nt := &modelTask{id: v.ID, p: p, title: fmt.Sprintf("Task %d", n+1), status: "TODO", version: 1, tags: []string{}}
		p.tasks, m.tasks = append(p.tasks, nt), append(m.tasks, nt)
	} else {
		stillMember(own, c, "no access")
	}
	if assign != nil {
		if c := m.allowed(assign, "BAD_USER_INPUT", "CONFLICT"); c == "OK" {
			assignT.assignee = a
			assignT.version++
		} else {
			stillMember(assign, c, "no member to assign")
		}
	}
	if comment != nil {
		if c := m.allowed(comment, "NOT_FOUND", "CONFLICT"); c == "OK" {
			v, _ := modelDecode[struct{ ID string }](m, comment.res.Data, "addComment")
			body := comment.vars["input"].(map[string]any)["body"].(string)
			cm := &modelComment{id: v.ID, author: a, body: body, task: commentT}
			commentT.comments, m.comments = append(commentT.comments, cm), append(m.comments, cm)
		} else {
			stillMember(comment, c, "no access")
		}
	}
	if removed {
		// Whatever committed before the removal was unassigned by it;
		// whatever came after was refused.
		m.removeMember(p, a)
	}
	return true
}

// raceDeleteProject deletes a project while its members change it.
func (m *modelRun) raceDeleteProject() bool {
	live := m.liveProjects(nil)
	if len(live) == 0 {
		return false
	}
	p := modelPick(m.rng, live)
	del := &modelOp{name: "deleteProject", viewer: p.owner, query: modelMDeleteProject, vars: map[string]any{"id": p.id}}
	ops := []*modelOp{del}
	var after []func()
	// The member removed in the race acts in nothing else, so that a
	// refusal can only come from the deletion.
	var gone string
	if no := p.nonOwners(); len(no) > 0 {
		gone = modelPick(m.rng, no)
		op := &modelOp{name: "removeProjectMember", viewer: p.owner, query: modelMRemoveMember, vars: map[string]any{"p": p.id, "u": gone}}
		ops = append(ops, op)
		after = append(after, func() {
			if m.allowed(op, "NOT_FOUND", "CONFLICT") == "OK" {
				m.removeMember(p, gone)
			}
		})
	}
	actors := []string{}
	for _, u := range p.memberList() {
		if u != gone {
			actors = append(actors, u)
		}
	}
	if u := m.outsider(p); u != modelGhost {
		op := &modelOp{name: "addProjectMember", viewer: p.owner, query: modelMAddMember, vars: map[string]any{"p": p.id, "u": u}}
		ops = append(ops, op)
		after = append(after, func() {
			if m.allowed(op, "NOT_FOUND", "CONFLICT") == "OK" {
				p.members[u] = true
			}
		})
	}
	n := m.next()
	create := &modelOp{name: "createTask", viewer: modelPick(m.rng, actors), query: modelMCreateTask,
		vars: map[string]any{"input": map[string]any{"projectId": p.id, "title": fmt.Sprintf("Task %d", n), "tags": []string{"bug"}}}}
	ops = append(ops, create)
	after = append(after, func() {
		if m.allowed(create, "NOT_FOUND", "CONFLICT") == "OK" {
			v, _ := modelDecode[modelTaskView](m, create.res.Data, "createTask")
			nt := &modelTask{id: v.ID, p: p, title: fmt.Sprintf("Task %d", n), status: "TODO", version: 1, tags: []string{"bug"}}
			p.tasks, m.tasks = append(p.tasks, nt), append(m.tasks, nt)
		}
	})
	if ts := p.liveTasks(); len(ts) > 0 {
		t := modelPick(m.rng, ts)
		fields := slices.DeleteFunc(m.randFields(3), func(f string) bool { return f == "assigneeId" })
		if len(fields) == 0 {
			fields = []string{"status"}
		}
		input, apply := m.randPatch(t, fields)
		upd := &modelOp{name: "updateTask", viewer: modelPick(m.rng, actors), query: modelMUpdateTask, vars: map[string]any{"input": input}}
		ops = append(ops, upd)
		after = append(after, func() {
			if m.allowed(upd, "NOT_FOUND", "CONFLICT") == "OK" {
				apply(t)
			}
		})
		t2 := modelPick(m.rng, ts)
		body := fmt.Sprintf("Comment %d", m.next())
		com := &modelOp{name: "addComment", viewer: modelPick(m.rng, actors), query: modelMAddComment,
			vars: map[string]any{"input": map[string]any{"taskId": t2.id, "body": body}}}
		ops = append(ops, com)
		after = append(after, func() {
			if m.allowed(com, "NOT_FOUND", "CONFLICT") == "OK" {
				v, _ := modelDecode[struct{ ID string }](m, com.res.Data, "addComment")
				cm := &modelComment{id: v.ID, author: com.viewer, body: body, task: t2}
				t2.comments, m.comments = append(t2.comments, cm), append(m.comments, cm)
			}
		})
	}
	m.raceStart(ops)
	deleted := m.allowed(del, "CONFLICT") == "OK"
	for _, f := range after {
		f()
	}
	for _, op := range ops[1:] {
		if c := modelCode(op.res); c == "NOT_FOUND" && !deleted {
			m.violate("race: %s by %s is NOT_FOUND although project %s was not deleted", op.name, op.viewer, p.id)
		}
	}
	if deleted {
		p.gone = true
	}
	return true
}

// raceTaskFields updates different fields of one task at once (and maybe
// comments on it and deletes it): no update may be lost.
func (m *modelRun) raceTaskFields() bool {
	ts := m.liveTasks(nil)
	if len(ts) == 0 {
		return false
	}
	t := modelPick(m.rng, ts)
	fields := slices.Clone(modelTaskFieldNames)
	m.rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	fields = fields[:2+m.rng.IntN(4)]
	members := t.p.memberList()
	var ops, upds []*modelOp
	var applies []func(*modelTask)
	for _, f := range fields {
		input, apply := m.randPatch(t, []string{f})
		op := &modelOp{name: "updateTask(" + f + ")", viewer: modelPick(m.rng, members), query: modelMUpdateTask,
			vars: map[string]any{"input": input}}
		ops, upds, applies = append(ops, op), append(upds, op), append(applies, apply)
	}
	body := fmt.Sprintf("Comment %d", m.next())
	com := &modelOp{name: "addComment", viewer: modelPick(m.rng, members), query: modelMAddComment,
		vars: map[string]any{"input": map[string]any{"taskId": t.id, "body": body}}}
	ops = append(ops, com)
	var del *modelOp
	if m.rng.IntN(3) == 0 {
		del = &modelOp{name: "deleteTask", viewer: modelPick(m.rng, members), query: modelMDeleteTask, vars: map[string]any{"id": t.id}}
		ops = append(ops, del)
	}
	old := t.version
	m.raceStart(ops)
	deleted := del != nil && m.allowed(del, append([]string{"CONFLICT"}, raceDeleteRefusals(del.viewer, t, applies)...)...) == "OK"
	var versions []int
	for i, op := range upds {
		c := m.allowed(op, "NOT_FOUND", "CONFLICT")
		if c == "NOT_FOUND" && !deleted {
			m.violate("race: %s of %s is NOT_FOUND although the task was not deleted", op.name, t.id)
		}
		if c == "OK" {
			applies[i](t)
			if v, ok := modelDecode[modelTaskView](m, op.res.Data, "updateTask"); ok {
				versions = append(versions, v.Version)
			}
		}
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != old+1+i {
			m.violate("race: the successful updates of %s (version %d) returned versions %v, want %d.. in steps of one",
				t.id, old, versions, old+1)
			break
		}
	}
	if c := m.allowed(com, "NOT_FOUND", "CONFLICT"); c == "OK" {
		v, _ := modelDecode[struct{ ID string }](m, com.res.Data, "addComment")
		cm := &modelComment{id: v.ID, author: com.viewer, body: body, task: t}
		t.comments, m.comments = append(t.comments, cm), append(m.comments, cm)
	} else if c == "NOT_FOUND" && !deleted {
		m.violate("race: addComment on %s is NOT_FOUND although the task was not deleted", t.id)
	}
	if deleted {
		m.deleteTask(t)
	}
	return true
}

// raceDeleteRefusals are the codes policy may refuse viewer the delete of
// t with while the updates applies race it: its refusal of t as it is and
// as any set of them leaves it (deleteRefusal), none when it lets the
// viewer delete t in every one.
func raceDeleteRefusals(viewer string, t *modelTask, applies []func(*modelTask)) []string {
	var out []string
	for set := range 1 << len(applies) {
		after := *t
		for i, apply := range applies {
			if set&(1<<i) != 0 {
				apply(&after)
			}
		}
		if c := deleteRefusal(viewer, &after); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// raceExpectedVersion sends several updates with the same expectedVersion:
// exactly one wins, the others are CONFLICT.
func (m *modelRun) raceExpectedVersion() bool {
	ts := m.liveTasks(nil)
	if len(ts) == 0 {
		return false
	}
	t := modelPick(m.rng, ts)
	var ops []*modelOp
	var applies []func(*modelTask)
	for range 3 + m.rng.IntN(3) {
		input, apply := m.randPatch(t, m.randFields(3))
		input["expectedVersion"] = t.version
		ops = append(ops, &modelOp{name: "updateTask with expectedVersion", viewer: modelPick(m.rng, t.p.memberList()),
			query: modelMUpdateTask, vars: map[string]any{"input": input}})
		applies = append(applies, apply)
	}
	m.raceStart(ops)
	winners := 0
	for i, op := range ops {
		if m.allowed(op, "CONFLICT") == "OK" {
			winners++
			applies[i](t)
		}
	}
	if winners != 1 {
		m.violate("race: %d of %d updates of %s with expectedVersion %d won, want exactly one", winners, len(ops), t.id, t.version)
	}
	return true
}
