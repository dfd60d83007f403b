package graph_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
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

func modelUlid(id string) string { return id[strings.LastIndexByte(id, '#')+1:] }

// checkTable checks every item of the table against the design's
// invariants and the model.
func (m *modelRun) checkTable() {
	m.t.Helper()
	m.tableChecks++
	items := m.e.Items()
	byType := map[string][]map[string]any{}
	for _, it := range items {
		byType[modelStr(it, "type")] = append(byType[modelStr(it, "type")], it)
	}
	for typ, its := range byType {
		switch typ {
		case "USER", "PROJECT", "MEMBER", "TASK", "TAG", "COMMENT", "IDEMPOTENCY":
		case "CLEANUP":
			m.violate("table: %d cleanup jobs remain after RunCleanup, e.g. %v", len(its), its[0])
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
		wantRecords["IDEM#"+r.viewer+"#"+r.key+" OP#"+r.field] = true
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
	projects := map[string]map[string]any{} // project ULID -> item
	for _, it := range byType["PROJECT"] {
		projects[modelUlid(modelStr(it, "id"))] = it
	}
	liveP := map[string]*modelProject{}
	for _, p := range m.projects {
		if !p.gone {
			liveP[modelUlid(p.id)] = p
		}
	}
	for pu, it := range projects {
		p := liveP[pu]
		switch {
		case p == nil:
			m.violate("table: project %s exists, the model has it deleted or never made it", modelStr(it, "id"))
		case modelStr(it, "PK") != "PROJECT#"+pu || modelStr(it, "SK") != "PROJECT" || modelStr(it, "ownerId") != p.owner ||
			modelStr(it, "name") != p.name:
			m.violate("table: project item %v, the model: owner %s name %q", it, p.owner, p.name)
		}
	}
	for pu, p := range liveP {
		if projects[pu] == nil {
			m.violate("table: project %s is missing", p.id)
		}
	}
	members := map[string]map[string]bool{} // project ULID -> user -> true
	for _, it := range byType["MEMBER"] {
		pid, u := modelStr(it, "projectId"), modelStr(it, "userId")
		pu := modelUlid(pid)
		if members[pu] == nil {
			members[pu] = map[string]bool{}
		}
		members[pu][u] = true
		proj := projects[pu]
		if proj == nil {
			m.violate("table: orphan membership of %s in %s (no project)", u, pid)
			continue
		}
		role := "MEMBER"
		if modelStr(proj, "ownerId") == u {
			role = "OWNER"
		}
		if modelStr(it, "PK") != "PROJECT#"+pu || modelStr(it, "SK") != "MEMBER#"+u || modelStr(it, "GSI1PK") != "USER#"+u ||
			modelStr(it, "GSI1SK") != "PROJECT#"+pu || modelStr(it, "role") != role {
			m.violate("table: membership item %v has wrong keys or role (want %s)", it, role)
		}
		if !profiles[u] {
			m.violate("table: membership of %s in %s, who has no profile", u, pid)
		}
	}
	for pu, p := range liveP {
		got := slices.Sorted(maps.Keys(members[pu]))
		if want := p.memberList(); !slices.Equal(got, want) {
			m.violate("table: project %s has members %v, the model %v", p.id, got, want)
		}
	}

	// Tasks, tag links and comments.
	tasks := map[string]map[string]any{} // task ULID -> item
	for _, it := range byType["TASK"] {
		tasks[modelUlid(modelStr(it, "id"))] = it
	}
	liveT := map[string]*modelTask{}
	for _, t := range m.tasks {
		if t.live() {
			liveT[modelUlid(t.id)] = t
		}
	}
	links := map[string][]string{} // task ULID -> tag names
	for _, it := range byType["TAG"] {
		pk := modelStr(it, "PK")
		tu := strings.TrimPrefix(pk, "TASK#")
		name := strings.TrimPrefix(modelStr(it, "SK"), "TAG#")
		links[tu] = append(links[tu], name)
		task := tasks[tu]
		if task == nil {
			m.violate("table: orphan tag link %s / %s (no task)", pk, modelStr(it, "SK"))
			continue
		}
		pu := modelUlid(modelStr(task, "projectId"))
		if modelStr(it, "taskId") != modelStr(task, "id") || modelStr(it, "GSI1PK") != "TAG#"+name+"#PROJECT#"+pu ||
			modelStr(it, "GSI1SK") != modelStr(task, "GSI1SK") {
			m.violate("table: tag link %v does not match its task (project %s, GSI1SK %s)", it, pu, modelStr(task, "GSI1SK"))
		}
	}
	for tu, it := range tasks {
		id, pid := modelStr(it, "id"), modelStr(it, "projectId")
		pu := modelUlid(pid)
		if projects[pu] == nil {
			m.violate("table: orphan task %s of project %s (no project)", id, pid)
		}
		due, assignee, status := modelStr(it, "dueDate"), modelStr(it, "assigneeId"), modelStr(it, "status")
		dueKey := due
		if dueKey == "" {
			dueKey = "~"
		}
		sk := "DUE#" + dueKey + "#" + tu
		if modelStr(it, "PK") != "TASK#"+tu || modelStr(it, "SK") != "TASK" || modelStr(it, "GSI1PK") != "PROJECT#"+pu ||
			modelStr(it, "GSI1SK") != sk {
			m.violate("table: task item %s has keys PK %q SK %q GSI1PK %q GSI1SK %q, want GSI1SK %q", id, modelStr(it, "PK"),
				modelStr(it, "SK"), modelStr(it, "GSI1PK"), modelStr(it, "GSI1SK"), sk)
		}
		if assignee == "" {
			// Unassigned tasks are indexed per project (see docs/design.md).
			if modelStr(it, "GSI2PK") != "UNASSIGNED#PROJECT#"+pu || modelStr(it, "GSI2SK") != sk {
				m.violate("table: unassigned task %s has GSI2 keys %q %q", id, modelStr(it, "GSI2PK"), modelStr(it, "GSI2SK"))
			}
		} else {
			part := "OPEN"
			if status == "DONE" {
				part = "DONE"
			}
			if modelStr(it, "GSI2PK") != "USER#"+assignee+"#"+part || modelStr(it, "GSI2SK") != sk {
				m.violate("table: task %s (assignee %s, %s) has GSI2 keys %q %q", id, assignee, status, modelStr(it, "GSI2PK"),
					modelStr(it, "GSI2SK"))
			}
			if !members[pu][assignee] {
				m.violate("table: task %s is assigned to %s, no member of %s", id, assignee, pid)
			}
		}
		var tags []string
		if raw, ok := it["tags"]; ok {
			list, _ := raw.([]any)
			if len(list) == 0 {
				m.violate("table: task %s has a tags attribute that is no list or empty: %#v", id, raw)
			}
			for _, x := range list {
				s, _ := x.(string)
				tags = append(tags, s)
			}
		}
		slices.Sort(tags)
		if len(slices.Compact(slices.Clone(tags))) != len(tags) {
			m.violate("table: task %s has duplicate tags %v", id, tags)
		}
		got := slices.Sorted(slices.Values(links[tu]))
		if !slices.Equal(tags, got) {
			m.violate("table: task %s has tags %v but tag links %v", id, tags, got)
		}
		t := liveT[tu]
		if t == nil {
			m.violate("table: task %s exists, the model has it deleted or never made it", id)
			continue
		}
		wantTags := slices.Sorted(slices.Values(t.tags))
		if pid != t.p.id || modelStr(it, "title") != t.title || status != t.status || due != t.due || assignee != t.assignee ||
			!slices.Equal(tags, wantTags) || modelStr(it, "version") != strconv.Itoa(t.version) ||
			modelStr(it, "description") != modelDeref(t.desc) {
			m.violate("table: task %s is %v; the model has title %q status %s due %q assignee %q tags %v version %d desc %q",
				id, it, t.title, t.status, t.due, t.assignee, wantTags, t.version, modelDeref(t.desc))
		}
	}
	for tu, t := range liveT {
		if tasks[tu] == nil {
			m.violate("table: task %s is missing", t.id)
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
		tu := strings.TrimPrefix(modelStr(it, "PK"), "TASK#")
		if tasks[tu] == nil {
			m.violate("table: orphan comment %s (no task %s)", id, tu)
		}
		if id != "cmt#"+tu+"#"+modelUlid(id) || modelStr(it, "SK") != "COMMENT#"+modelUlid(id) ||
			modelStr(it, "taskId") != "tsk#"+tu || !profiles[modelStr(it, "authorId")] {
			m.violate("table: comment item %v has wrong keys or author", it)
		}
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

// page reads every page of the connection at path (each step a field of
// the data; the last one the connection), first items a page. null when an
