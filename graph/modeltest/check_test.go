package modeltest

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// ---- checks ----

// cleanup runs the cleanup worker's jobs to the end.
func (m *modelRun) cleanup() {
	m.t.Helper()
	if _, err := m.e.Store.RunCleanup(context.Background()); err != nil {
		m.violate("RunCleanup: %v", err)
	}
}

func modelStr(it map[string]any, k string) string { s, _ := it[k].(string); return s }

// checkTable checks every item of the table against the design's
// invariants (testenv.CheckTable) and the model.
func (m *modelRun) checkTable() {
	m.t.Helper()
	m.tableChecks++
	items := m.e.Items(m.t)
	for _, v := range testenv.CheckTable(items) {
		m.violate("table: %s", v)
	}
	byType := map[string][]map[string]any{}
	for _, it := range items {
		byType[modelStr(it, "type")] = append(byType[modelStr(it, "type")], it)
	}
	for typ, its := range byType {
		switch typ {
		case "USER", "PROJECT", "MEMBER", "TASK", "TAG", "COMMENT", "IDEMPOTENCY", "CLEANUP", "TAGS", "MARKER", "CHANGE", "LEFT", "CHANGELOG": // tag indexes, the change log: testenv.CheckTable
		default:
			if !m.unknownTypes[typ] {
				m.unknownTypes[typ] = true
				m.t.Logf("table: %d items of a type the model does not know (%q), e.g. PK %q", len(its), typ, modelStr(its[0], "PK"))
			}
		}
	}

	// Idempotency records: one for each keyed op that succeeded (but a
	// member added again), none for a replay or a refused op.
	records := map[string]bool{}
	for _, it := range byType["IDEMPOTENCY"] {
		records[modelStr(it, "PK")+" "+modelStr(it, "SK")] = true
	}
	wantRecords := map[string]bool{}
	for _, r := range m.keyed {
		pk, sk := dynamo.IdempotencyItemKey(r.viewer, r.key, r.field)
		wantRecords[pk+" "+sk] = true
	}
	if !maps.Equal(records, wantRecords) {
		var extra, missing []string
		for k := range records {
			if !wantRecords[k] {
				extra = append(extra, k)
			}
		}
		for k := range wantRecords {
			if !records[k] {
				missing = append(missing, k)
			}
		}
		slices.Sort(extra)
		slices.Sort(missing)
		m.violate("table: idempotency records the model does not have: %v; missing: %v", extra, missing)
	}

	profiles := map[string]bool{}
	for _, it := range byType["USER"] {
		profiles[modelStr(it, "id")] = true
	}
	if want := len(modelUsers); len(profiles) != want || profiles[modelGhost] {
		m.violate("table: profiles %v, want exactly %v", slices.Sorted(maps.Keys(profiles)), modelUsers)
	}

	// Projects and memberships.
	projects := map[string]map[string]any{} // project id -> item
	for _, it := range byType["PROJECT"] {
		projects[modelStr(it, "id")] = it
	}
	liveP := map[string]*modelProject{}
	for _, p := range m.projects {
		if !p.gone {
			liveP[p.id] = p
		}
	}
	for id, it := range projects {
		p := liveP[id]
		switch {
		case p == nil:
			m.violate("table: project %s exists, the model has it deleted or never made it", id)
		case modelStr(it, "ownerId") != p.owner || modelStr(it, "name") != p.name:
			m.violate("table: project item %v, the model: owner %s name %q", it, p.owner, p.name)
		}
	}
	for id, p := range liveP {
		if projects[id] == nil {
			m.violate("table: project %s is missing", p.id)
		}
	}
	members := map[string]map[string]bool{} // project id -> user -> true
	for _, it := range byType["MEMBER"] {
		pid := modelStr(it, "projectId")
		if members[pid] == nil {
			members[pid] = map[string]bool{}
		}
		members[pid][modelStr(it, "userId")] = true
	}
	for id, p := range liveP {
		got := slices.Sorted(maps.Keys(members[id]))
		if want := p.memberList(); !slices.Equal(got, want) {
			m.violate("table: project %s has members %v, the model %v", p.id, got, want)
		}
	}

	// Tasks and comments (tag links are in step with their task: testenv.CheckTable).
	tasks := map[string]map[string]any{} // task id -> item
	for _, it := range byType["TASK"] {
		tasks[modelStr(it, "id")] = it
	}
	liveT := map[string]*modelTask{}
	for _, t := range m.tasks {
		if t.live() {
			liveT[t.id] = t
		}
	}
	for id, it := range tasks {
		t := liveT[id]
		if t == nil {
			m.violate("table: task %s exists, the model has it deleted or never made it", id)
			continue
		}
		var tags []string
		list, _ := it["tags"].([]any)
		for _, x := range list {
			s, _ := x.(string)
			tags = append(tags, s)
		}
		slices.Sort(tags)
		wantTags := slices.Sorted(slices.Values(t.tags))
		if modelStr(it, "projectId") != t.p.id || modelStr(it, "title") != t.title || modelStr(it, "status") != t.status ||
			modelStr(it, "dueDate") != t.due || modelStr(it, "assigneeId") != t.assignee || !slices.Equal(tags, wantTags) ||
			modelStr(it, "version") != strconv.Itoa(t.version) || modelStr(it, "description") != testenv.Deref(t.desc) {
			m.violate("table: task %s is %v; the model has title %q status %s due %q assignee %q tags %v version %d desc %q",
				id, it, t.title, t.status, t.due, t.assignee, wantTags, t.version, testenv.Deref(t.desc))
		}
	}
	for id, t := range liveT {
		if tasks[id] == nil {
			m.violate("table: task %s is missing", t.id)
		}
	}
	// Counters (testenv.CheckTable compares them with the items; here with
	// the model).
	for id, it := range projects {
		p := liveP[id]
		if p == nil {
			continue
		}
		want := map[string]int{}
		for _, t := range p.tasks {
			if t.live() {
				want[t.status]++
			}
		}
		got := map[string]int{}
		for attr, st := range map[string]string{"todoCount": "TODO", "inProgressCount": "IN_PROGRESS", "doneCount": "DONE"} {
			if n, _ := strconv.Atoi(modelStr(it, attr)); n != 0 {
				got[st] = n
			}
		}
		if !maps.Equal(got, want) {
			m.violate("table: project %s counts %v, the model has %v", id, got, want)
		}
	}
	for id, it := range tasks {
		if t := liveT[id]; t != nil && modelStr(it, "commentCount") != strconv.Itoa(len(t.liveComments())) {
			m.violate("table: task %s commentCount %q, the model has %d comments", id, modelStr(it, "commentCount"), len(t.liveComments()))
		}
	}
	liveC := map[string]*modelComment{}
	for _, c := range m.comments {
		if c.live() {
			liveC[c.id] = c
		}
	}
	seenC := map[string]bool{}
	for _, it := range byType["COMMENT"] {
		id := modelStr(it, "id")
		seenC[id] = true
		c := liveC[id]
		if c == nil {
			m.violate("table: comment %s exists, the model has it deleted or never made it", id)
		} else if modelStr(it, "body") != c.body || modelStr(it, "authorId") != c.author {
			m.violate("table: comment %s is %v; the model has author %s body %q", id, it, c.author, c.body)
		}
	}
	for id := range liveC {
		if !seenC[id] {
			m.violate("table: comment %s is missing", id)
		}
	}
}
