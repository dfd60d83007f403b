package modeltest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestModel's world: the model's types, its run, how it sends requests and
// settles their outcomes, what an answer may show, documents and views.

// The model's world: a few users with profiles, one without.
var (
	modelUsers = []string{"ann", "ben", "cat", "dan", "eli", "fay"}
	modelTags  = []string{"bug", "ui", "backend", "x.y", "v1-2", "q_3", "urgent"}
)

const (
	modelGhost       = "ghost|no-profile" // a valid sub that never made a profile
	modelMaxProjects = 9
	modelMaxTasks    = 24 // live tasks a project
	modelMaxComments = 6  // live comments a task
)

var modelStatuses = []string{"TODO", "IN_PROGRESS", "DONE"}

func modelUserName(u string) string { return "User " + strings.ToUpper(u) }

type modelProject struct {
	id, owner, name string
	members         map[string]bool
	gone            bool
	tasks           []*modelTask // every task ever created in it, in model order
}

type modelTask struct {
	id       string
	p        *modelProject
	title    string
	desc     *string
	status   string
	due      string // "" when none
	assignee string // "" when none
	tags     []string
	version  int
	gone     bool
	comments []*modelComment
}

type modelComment struct {
	id, author, body string
	task             *modelTask
	gone             bool
}

func (t *modelTask) live() bool    { return !t.gone && !t.p.gone }
func (c *modelComment) live() bool { return !c.gone && c.task.live() }

func (p *modelProject) memberList() []string {
	return slices.Sorted(maps.Keys(p.members))
}

func (p *modelProject) nonOwners() []string {
	var out []string
	for _, u := range p.memberList() {
		if u != p.owner {
			out = append(out, u)
		}
	}
	return out
}

func (p *modelProject) nonMembers() []string {
	var out []string
	for _, u := range modelUsers {
		if !p.members[u] {
			out = append(out, u)
		}
	}
	return out
}

func (p *modelProject) liveTasks() []*modelTask {
	var out []*modelTask
	for _, t := range p.tasks {
		if t.live() {
			out = append(out, t)
		}
	}
	return out
}

func (t *modelTask) liveComments() []*modelComment {
	var out []*modelComment
	for _, c := range t.comments {
		if c.live() {
			out = append(out, c)
		}
	}
	return out
}

// modelDueLess orders tasks as the contract's lists do: by due date, tasks
// without one last, then by id (ids sort in creation order).
func modelDueLess(a, b *modelTask) int {
	da, db := a.due, b.due
	if da == "" {
		da = "~"
	}
	if db == "" {
		db = "~"
	}
	return cmp.Or(cmp.Compare(da, db), cmp.Compare(a.id, b.id))
}

type modelOp struct {
	name   string
	viewer string
	query  string
	vars   map[string]any
	want   []string // nil: must succeed; else the codes of the refusals allowed
	apply  func(data json.RawMessage)
	scope  *modelProject // the one project the op reads or changes (nil: none)
	res    *testenv.Response

	// key is the Idempotency-Key the op is sent with ("": none).
	key string
	// keyed, when set, describes what a successful op recorded with its
	// key (nil: it records nothing, e.g. adding a member again).
	keyed func() *modelKeyed
	// replay is the recorded op that this one sends again; reuse marks an
	// op that sends a recorded key with another mutation or input.
	replay *modelKeyed
	reuse  bool
}

// modelKeyed is a mutation that succeeded with an idempotency key: the
// store keeps a record of it, and a replay answers from that record.
type modelKeyed struct {
	viewer, key, field string
	vars               map[string]any
	id                 string        // the result's id
	p                  *modelProject // the project the result lies in
	t                  *modelTask    // the result, when a task
	c                  *modelComment // the result, when a comment
	deleted            bool          // a delete: its replay answers with the id
}

// modelSight is what the users may see at one moment: the live projects
// with their members, and the project of each live project, task and
// comment.
type modelSight struct {
	members map[string]map[string]bool // live project id -> its members
	in      map[string]string          // live project, task or comment id -> its project's id
	made    map[string]string          // every project, task and comment id ever made -> its project's id
}

type modelRun struct {
	t      *testing.T
	e      *testenv.Env
	rng    *rand.Rand
	tokens map[string]string
	seq    int

	projects []*modelProject
	tasks    []*modelTask
	comments []*modelComment

	keyed    []*modelKeyed // every keyed op that left a record, in order
	raceOps  []*modelOp    // the ops of the last race
	readView *modelSight   // the sight of reads while checkPatterns runs

	tried, succeeded, refused, raced, violations, shown   int
	tableChecks, patternChecks, queries                   int
	keysSent, replays, replaysGone, reuses, reusesRefused int
	shownAnswers, shownObjects, leaks                     int
	tableTime, patternTime                                time.Duration
	unknownTypes                                          map[string]bool
}

func (m *modelRun) violate(format string, args ...any) {
	m.t.Helper()
	m.violations++
	if m.shown < 40 {
		m.shown++
		m.t.Errorf(format, args...)
	}
}

func (m *modelRun) next() int { m.seq++; return m.seq }

// do posts one GraphQL request; safe for concurrent use.
func (m *modelRun) do(viewer, query string, vars map[string]any) *testenv.Response {
	return m.doKey(viewer, "", query, vars)
}

// send posts an op's request, with its idempotency key if it has one.
func (m *modelRun) send(op *modelOp) { op.res = m.doKey(op.viewer, op.key, op.query, op.vars) }

// doKey is do with an Idempotency-Key header (none when key is "").
func (m *modelRun) doKey(viewer, key, query string, vars map[string]any) *testenv.Response {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := testenv.Post(map[string]any{"query": query, "variables": vars}, testenv.Via(m.e.Handler), testenv.Context(ctx),
		testenv.Bearer(m.tokens[viewer]), testenv.Header(pipeline.IdempotencyHeader, key))
	if err != nil {
		panic(err)
	}
	res := &testenv.Response{Status: rec.Status}
	if err := json.Unmarshal(rec.Body, res); err != nil {
		res.Errors = []testenv.Error{{Message: fmt.Sprintf("HTTP %d, not JSON: %.300s", rec.Status, rec.Body),
			Extensions: map[string]any{"code": "NOT_JSON"}}}
	}
	return res
}

// query runs a read that must succeed and returns its data.
func (m *modelRun) query(viewer, query string, vars map[string]any) (json.RawMessage, bool) {
	m.t.Helper()
	m.queries++
	res := m.do(viewer, query, vars)
	if len(res.Errors) > 0 {
		m.violate("read by %s failed: %+v\nquery: %s\nvars: %s", viewer, res.Errors, query, testenv.ShortJSON(vars))
		return nil, false
	}
	m.checkShown("a read", viewer, res.Data, m.seesNow(viewer))
	return res.Data, true
}

func (m *modelRun) runConcurrently(ops []*modelOp) {
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Go(func() { m.send(op) })
	}
	wg.Wait()
}

func modelCode(res *testenv.Response) string {
	if len(res.Errors) == 0 {
		return "OK"
	}
	return res.Errors[0].Code()
}

// outcome counts an op's result and checks that a refusal is one coded error
// with no data; it returns "OK" or the error's code.
func (m *modelRun) outcome(op *modelOp) string {
	m.t.Helper()
	m.tried++
	res := op.res
	if len(res.Errors) == 0 {
		m.succeeded++
		return "OK"
	}
	m.refused++
	if len(res.Errors) != 1 || res.Errors[0].Code() == "" {
		m.violate("%s by %s: want one coded error, got %+v\nvars: %s", op.name, op.viewer, res.Errors, testenv.ShortJSON(op.vars))
	}
	if !testenv.NullData(res.Data) {
		m.violate("%s by %s: refused with %v but returned data %s", op.name, op.viewer, res.Codes(), res.Data)
	}
	return res.Errors[0].Code()
}

// settle checks an op whose outcome the model predicts and applies it when
// it succeeded (also when it should not have: the model follows the store).
func (m *modelRun) settle(op *modelOp) {
	m.t.Helper()
	code := m.outcome(op)
	switch {
	case code == "OK" && op.want != nil:
		m.violate("%s by %s succeeded, want a refusal with %v\nvars: %s\ndata: %.400s", op.name, op.viewer, op.want,
			testenv.ShortJSON(op.vars), op.res.Data)
	case code != "OK" && op.want == nil:
		m.violate("%s by %s refused with %+v, want success\nvars: %s", op.name, op.viewer, op.res.Errors, testenv.ShortJSON(op.vars))
	case code != "OK" && !slices.Contains(op.want, code):
		m.violate("%s by %s refused with %s (%s), want one of %v\nvars: %s", op.name, op.viewer, code,
			op.res.Errors[0].Message, op.want, testenv.ShortJSON(op.vars))
	}
	if code == "OK" {
		op.apply(op.res.Data)
	}
	switch {
	case op.replay != nil:
		m.replays++
		if code == "NOT_FOUND" {
			m.replaysGone++
		}
	case op.reuse:
		m.reuses++
		if code == "BAD_USER_INPUT" {
			m.reusesRefused++
		}
	case code == "OK" && op.want == nil && op.key != "" && op.keyed != nil:
		if r := op.keyed(); r != nil {
			r.viewer, r.key = op.viewer, op.key
			m.keyed = append(m.keyed, r)
		}
	}
	// The ops of a sequence or a batch change distinct projects, and an
	// answer shows only the op's own project: the model after the op is
	// what the viewer may see at the moment of the answer.
	m.checkShown(op.name, op.viewer, op.res.Data, m.seesNow(op.viewer))
}

// ---- what an answer may show ----

// sight returns what the users may see now, by the model.
func (m *modelRun) sight() *modelSight {
	s := &modelSight{members: map[string]map[string]bool{}, in: map[string]string{}, made: map[string]string{}}
	for _, p := range m.projects {
		s.made[p.id] = p.id
		if !p.gone {
			s.members[p.id], s.in[p.id] = maps.Clone(p.members), p.id
		}
	}
	for _, t := range m.tasks {
		s.made[t.id] = t.p.id
		if t.live() {
			s.in[t.id] = t.p.id
		}
	}
	for _, c := range m.comments {
		s.made[c.id] = c.task.p.id
		if c.live() {
			s.in[c.id] = c.task.p.id
		}
	}
	return s
}

// seesNow returns whether viewer may see an object now, by the model (the
// sight is taken when first needed, or is the reads' one).
func (m *modelRun) seesNow(viewer string) func(id string) bool {
	view := m.readView
	return func(id string) bool {
		if view == nil {
			view = m.sight()
		}
		return view.sees(viewer, id)
	}
}

// sees reports whether viewer may see the object id: it is live and the
// viewer is a member of its project.
func (s *modelSight) sees(viewer, id string) bool {
	p, ok := s.in[id]
	return ok && s.members[p][viewer]
}

// seesDuring reports whether viewer may have seen the object id at some
// moment between the sights before and after: it was live in one of them,
// or was made in between (and maybe deleted again), and the viewer was a
// member of its project in one of them. Made for races, whose answers come
// from any moment between.
func seesDuring(before, after *modelSight, viewer, id string) bool {
	p, ok := before.in[id]
	if !ok {
		p, ok = after.in[id]
	}
	if _, old := before.made[id]; !ok && !old {
		p, ok = after.made[id]
	}
	return ok && (before.members[p][viewer] || after.members[p][viewer])
}

// modelShownIDs returns the ids of the projects, tasks and comments an
// answer shows: of every object in data with an "id" of one of those kinds.
func modelShownIDs(data json.RawMessage) []string {
	var v any
	if len(data) == 0 || json.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if id, ok := x["id"].(string); ok &&
				(strings.HasPrefix(id, "prj#") || strings.HasPrefix(id, "tsk#") || strings.HasPrefix(id, "cmt#")) {
				out = append(out, id)
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// checkShown is the visibility invariant: an answer to viewer shows no
// project, task or comment that the viewer may not see (by sees).
func (m *modelRun) checkShown(what, viewer string, data json.RawMessage, sees func(id string) bool) {
	m.t.Helper()
	ids := modelShownIDs(data)
	if len(ids) == 0 {
		return
	}
	m.shownAnswers++
	m.shownObjects += len(ids)
	var hidden []string
	for _, id := range ids {
		if !sees(id) {
			hidden = append(hidden, id)
		}
	}
	if len(hidden) > 0 {
		m.leaks++
		m.violate("%s by %s shows %v, which %s may not see (deleted, or not a member of its project)\ndata: %.400s",
			what, viewer, hidden, viewer, data)
	}
}

// ---- documents and views ----

const (
	modelTaskFields = `id title description status dueDate version project { id } assignee { id } tags { name }`
	modelConnPage   = `pageInfo { hasNextPage endCursor hasPreviousPage startCursor }`

	modelMCreateProject = `mutation($input: CreateProjectInput!) { createProject(input: $input) { id name owner { id } members { role user { id } } } }`
	modelMAddMember     = `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id members { role user { id } } } }`
	modelMRemoveMember  = `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id members { role user { id } } } }`
	modelMDeleteProject = `mutation($id: ID!) { deleteProject(id: $id) }`
	modelMCreateTask    = `mutation($input: CreateTaskInput!) { createTask(input: $input) { ` + modelTaskFields + ` } }`
	modelMUpdateTask    = `mutation($input: UpdateTaskInput!) { updateTask(input: $input) { ` + modelTaskFields + ` } }`
	modelMDeleteTask    = `mutation($id: ID!) { deleteTask(id: $id) }`
	modelMAddComment    = `mutation($input: AddCommentInput!) { addComment(input: $input) { id body author { id name } task { id } } }`
	modelMDeleteComment = `mutation($id: ID!) { deleteComment(id: $id) }`
)

type modelTaskView struct {
	ID          string
	Title       string
	Description *string
	Status      string
	DueDate     *string
	Version     int
	Project     struct{ ID string }
	Assignee    *struct{ ID string }
	Tags        []struct{ Name string }
}

type modelMembersView struct {
	ID      string
	Members []struct {
		Role string
		User struct{ ID string }
	}
}

func modelDecode[T any](m *modelRun, data json.RawMessage, field string) (T, bool) {
	m.t.Helper()
	var wrap map[string]T
	var zero T
	if err := json.Unmarshal(data, &wrap); err != nil {
		m.violate("decoding %s: %v: %.300s", field, err, data)
		return zero, false
	}
	v, ok := wrap[field]
	if !ok {
		m.violate("no %s in %.300s", field, data)
	}
	return v, ok
}

// checkTask compares a task as the API shows it with the model.
func (m *modelRun) checkTask(where string, v modelTaskView, t *modelTask) {
	m.t.Helper()
	var tags []string
	for _, tg := range v.Tags {
		tags = append(tags, tg.Name)
	}
	slices.Sort(tags)
	want := slices.Sorted(slices.Values(t.tags))
	assignee := ""
	if v.Assignee != nil {
		assignee = v.Assignee.ID
	}
	if v.ID != t.id || v.Title != t.title || testenv.Deref(v.Description) != testenv.Deref(t.desc) || v.Status != t.status ||
		testenv.Deref(v.DueDate) != t.due || v.Version != t.version || v.Project.ID != t.p.id || assignee != t.assignee ||
		!slices.Equal(tags, want) {
		m.violate("%s: task %s is %s; the model has title %q desc %q status %s due %q version %d project %s assignee %q tags %v",
			where, t.id, testenv.ShortJSON(v), t.title, testenv.Deref(t.desc), t.status, t.due, t.version, t.p.id, t.assignee, want)
	}
}

// checkMembers compares a project's members as a mutation returned them.
func (m *modelRun) checkMembers(where string, v modelMembersView, p *modelProject) {
	m.t.Helper()
	got := map[string]string{}
	for _, mem := range v.Members {
		got[mem.User.ID] = mem.Role
	}
	want := map[string]string{}
	for u := range p.members {
		want[u] = "MEMBER"
	}
	want[p.owner] = "OWNER"
	if v.ID != p.id || !maps.Equal(got, want) {
		m.violate("%s: project %s has members %v, the model %v", where, p.id, got, want)
	}
}
