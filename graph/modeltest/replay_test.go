package modeltest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestModel's idempotency keys (replays and reused keys) and the choice of
// the next mutation.

// ---- idempotency keys: replays and reused keys ----

// modelReplayProject selects, under a project, what a replay must never
// hand out unchecked: its members, tasks and their comments.
const modelReplayProject = `id name owner { id } members { role user { id } }
	tasks(first: 100) { nodes { id comments(first: 100) { nodes { id } } } }`

// modelReplayDocs are the documents of replays, by mutation field: the
// same field and arguments as the first call (the key's record checks
// those), with a deeper selection (which it does not check).
var modelReplayDocs = map[string]string{
	"createProject":       `mutation($input: CreateProjectInput!) { createProject(input: $input) { ` + modelReplayProject + ` } }`,
	"addProjectMember":    `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { ` + modelReplayProject + ` } }`,
	"removeProjectMember": `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { ` + modelReplayProject + ` } }`,
	"createTask": `mutation($input: CreateTaskInput!) { createTask(input: $input) {
		id title description status dueDate version assignee { id } tags { name } project { ` + modelReplayProject + ` } } }`,
	"updateTask": `mutation($input: UpdateTaskInput!) { updateTask(input: $input) {
		id title description status dueDate version assignee { id } tags { name } project { ` + modelReplayProject + ` } } }`,
	"addComment": `mutation($input: AddCommentInput!) { addComment(input: $input) {
		id body author { id } task { id project { ` + modelReplayProject + ` } } } }`,
	"deleteTask":    modelMDeleteTask,
	"deleteComment": modelMDeleteComment,
	"deleteProject": modelMDeleteProject,
}

// modelReplayView is a replay's answer under a project.
type modelReplayView struct {
	modelMembersView
	Name  string
	Owner struct{ ID string }
	Tasks struct{ Nodes []json.RawMessage }
}

// seesResult reports whether the viewer of a recorded op may see its
// result now: a replay answers with it then, and NOT_FOUND otherwise. A
// delete's replay answers with the id the client sent.
func (m *modelRun) seesResult(r *modelKeyed) bool {
	switch {
	case r.deleted:
		return true
	case r.c != nil:
		return r.c.live() && m.member(r.viewer, r.p)
	case r.t != nil:
		return r.t.live() && m.member(r.viewer, r.p)
	}
	return m.member(r.viewer, r.p)
}

// opReplay sends a recorded op again, with its key, viewer and input,
// selecting more than the first call did; or, one time in four, reuses
// its key for another operation. Its project is its scope: nothing else
// changes it meanwhile.
func (m *modelRun) opReplay(busy map[*modelProject]bool) *modelOp {
	var cands []*modelKeyed
	for _, r := range m.keyed {
		if !busy[r.p] {
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// Half the time, if there is one, the op of a viewer who has left a
	// live project since: the replay that must not show them the project.
	if left := slices.DeleteFunc(slices.Clone(cands), func(r *modelKeyed) bool {
		return r.deleted || r.p.gone || r.p.members[r.viewer]
	}); len(left) > 0 && m.rng.IntN(2) == 0 {
		cands = left
	}
	r := modelPick(m.rng, cands)
	if m.rng.IntN(4) == 0 {
		return m.opReuse(r)
	}
	op := &modelOp{name: "replay of " + r.field, viewer: r.viewer, key: r.key, query: modelReplayDocs[r.field], vars: r.vars,
		scope: r.p, replay: r}
	if !m.seesResult(r) {
		op.want = []string{"NOT_FOUND"}
	}
	op.apply = func(data json.RawMessage) {
		where := fmt.Sprintf("replay of %s by %s (key %s)", r.field, r.viewer, r.key)
		switch {
		case r.deleted:
			if v, ok := modelDecode[string](m, data, r.field); ok && v != r.id {
				m.violate("%s answered %q, want %s", where, v, r.id)
			}
		case r.c != nil:
			v, ok := modelDecode[struct {
				ID, Body string
				Author   struct{ ID string }
				Task     struct{ ID string }
			}](m, data, r.field)
			if ok && (v.ID != r.id || v.Body != r.c.body || v.Author.ID != r.c.author || v.Task.ID != r.c.task.id) {
				m.violate("%s answered %s; the model has comment %s by %s on %s: %q", where, testenv.ShortJSON(v), r.id, r.c.author,
					r.c.task.id, r.c.body)
			}
		case r.t != nil:
			// A replay reads the task as it is now.
			if v, ok := modelDecode[modelTaskView](m, data, r.field); ok {
				m.checkTask(where, v, r.t)
			}
		default:
			v, ok := modelDecode[modelReplayView](m, data, r.field)
			if !ok {
				return
			}
			m.checkMembers(where, v.modelMembersView, r.p)
			m.wantIDs(where+": project.tasks", modelIDs(v.Tasks.Nodes), m.sortedTasks(func(t *modelTask) bool { return t.p == r.p }))
		}
	}
	return op
}

// opReuse sends a recorded key with another mutation under the same alias,
// or with the same mutation and other input: BAD_USER_INPUT, and nothing
// changes (as the table check sees). What it sends would succeed without
// the key, in the record's project or a new one.
func (m *modelRun) opReuse(r *modelKeyed) *modelOp {
	op := &modelOp{viewer: r.viewer, key: r.key, want: []string{"BAD_USER_INPUT"}, apply: func(json.RawMessage) {},
		scope: r.p, reuse: true}
	if r.field != "createProject" && m.rng.IntN(2) == 0 {
		op.name = "key of " + r.field + " reused for createProject under its alias"
		op.query = `mutation($input: CreateProjectInput!) { ` + r.field + `: createProject(input: $input) { id } }`
		op.vars = map[string]any{"input": map[string]any{"name": fmt.Sprintf("Stray %d", m.next())}}
		return op
	}
	op.name = "key of " + r.field + " reused with other input"
	op.query = modelReplayDocs[r.field]
	var vars map[string]any // a deep copy
	b, _ := json.Marshal(r.vars)
	if err := json.Unmarshal(b, &vars); err != nil {
		panic(err)
	}
	op.vars = vars
	input, _ := vars["input"].(map[string]any)
	other := fmt.Sprintf("Other %d", m.next())
	switch r.field {
	case "createProject":
		input["name"] = other
	case "createTask", "updateTask":
		input["title"] = other
	case "addComment":
		input["body"] = other
	case "addProjectMember", "removeProjectMember":
		vars["u"] = modelPick(m.rng, slices.DeleteFunc(slices.Clone(modelUsers), func(u string) bool { return u == vars["u"] }))
	case "deleteTask":
		vars["id"] = "tsk#01ARZ3NDEKTSV4RRFFQ69G5FAV"
		for _, t := range r.p.liveTasks() {
			if t.id != r.id {
				vars["id"] = t.id
			}
		}
	case "deleteComment":
		vars["id"] = "cmt#" + strings.TrimPrefix(r.c.task.id, "tsk#") + "#01ARZ3NDEKTSV4RRFFQ69G5FAV"
		for _, c := range r.c.task.liveComments() {
			if c.id != r.id {
				vars["id"] = c.id
			}
		}
	case "deleteProject":
		vars["id"] = "prj#01ARZ3NDEKTSV4RRFFQ69G5FAV"
	}
	return op
}

// gen picks a random mutation whose project is not busy, and marks it busy.
// One in four is sent with a fresh idempotency key; some are replays.
func (m *modelRun) gen(busy map[*modelProject]bool) *modelOp {
	for range 30 {
		fail := m.rng.IntN(5) == 0
		var op *modelOp
		live := m.liveProjects(busy)
		switch k := m.rng.IntN(100); {
		case len(m.keyed) > 0 && m.rng.IntN(8) == 0:
			op = m.opReplay(busy)
		case k < 6 || len(live) == 0:
			if len(m.liveProjects(nil)) < modelMaxProjects || fail {
				op = m.opCreateProject(fail)
			} else if len(live) > 0 {
				op = m.opDeleteProject(modelPick(m.rng, live), false)
			}
		case k < 15:
			op = m.opAddMember(modelPick(m.rng, live), fail)
		case k < 21:
			op = m.opRemoveMember(modelPick(m.rng, live), fail)
		case k < 42:
			op = m.opCreateTask(modelPick(m.rng, live), fail)
		case k < 66:
			if ts := m.liveTasks(busy); len(ts) > 0 {
				op = m.opUpdateTask(modelPick(m.rng, ts), fail)
			}
		case k < 72:
			if ts := m.liveTasks(busy); len(ts) > 0 {
				op = m.opDeleteTask(modelPick(m.rng, ts), fail)
			}
		case k < 85:
			if ts := m.liveTasks(busy); len(ts) > 0 {
				op = m.opAddComment(modelPick(m.rng, ts), fail)
			}
		case k < 91:
			if cs := m.liveComments(busy); len(cs) > 0 {
				op = m.opDeleteComment(modelPick(m.rng, cs), fail)
			}
		case k < 93:
			op = m.opDeleteProject(modelPick(m.rng, live), fail)
		default:
			op = m.opGone()
		}
		if op != nil && (op.scope == nil || !busy[op.scope]) {
			if op.scope != nil {
				busy[op.scope] = true
			}
			if op.replay == nil && !op.reuse && m.rng.IntN(4) == 0 {
				op.key = fmt.Sprintf("model-%d", m.next())
				m.keysSent++
			}
			return op
		}
	}
	return nil
}
