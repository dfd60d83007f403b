package testenv

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// CheckTable checks every item of a settled table (one whose cleanup jobs
// have run; see Env.Items) against the design's invariants, whatever the
// history that made it, and returns one line per violation:
//
//   - every item's key, and every index key, is the one the store's key
//     functions make from the item's own fields (dynamo.ProjectItemKey,
//     TaskIndexKeys, TagLinkKeys, …);
//   - nothing is orphaned: no membership without its project, no task
//     without its project, no tag link or comment without its task;
//   - a task's tag links are exactly its tags (no duplicates, no empty tags
//     list), each in step with the task's project, due date and assignee,
//     and carrying nothing else of the task;
//   - in a table with the marker of complete tag indexes, each project's
//     index of a tag lists exactly its tasks with the tag, each with its
//     due date and assignee, and counts them (an index marked full lists
//     none; one of a tag no task has any more lists none);
//   - a task's GSI2 partition is its assignee's open or done tasks, or its
//     project's unassigned tasks, and its assignee is a member;
//   - a membership's role is OWNER exactly for the project's owner, and its
//     user, like a comment's author, has a profile;
//   - idempotency records are well formed (op, digest, an id as result,
//     an expiry) and keyed by their op;
//   - every counter equals what it counts: a project's todoCount,
//     inProgressCount and doneCount its task items of each status, a
//     task's commentCount its comment items (a missing counter is a
//     violation too);
//   - in a table with the marker of complete change logs (docs/sync.md):
//     every project has a seq and a projectSeq no greater; every
//     membership, task and comment of a project has a syncSeq, no greater
//     than its project's seq, where the project's log holds a live entry
//     naming it (a member's with its joinedAt), born (made) at a position
//     its entry records too, no greater; every live entry of a
//     project is so named by its object (one entry per object); a gone
//     entry names no object that exists but one whose live entry lies
//     further on (a member added back), a gone task's the ids of its
//     comments; gone entries, departures and every item of a deleted
//     project's log expire, with the sweep's GSI2 keys;
//   - no cleanup job is left;
//   - every sync mark is true: its project exists, at the mark's seq, and
//     lists the mark's user among its marked ones (invariants_marks.go);
//   - outbox items (events not yet published or not yet deleted) are well
//     formed: keyed by their event's id and commit time, a known kind, a
//     project id, an actor and a subject, an expiry, and the snapshots
//     their kind calls for, of the event's project.
//
// Items of other types are not checked.
func CheckTable(items []map[string]any) []string {
	c := checker{by: map[[2]string]map[string]any{}, links: map[[2]string]tagLink{}, indexes: map[[2]string]map[string]string{}}
	for _, it := range items {
		c.by[[2]string{str(it, "PK"), str(it, "SK")}] = it
	}
	profiles := map[string]bool{}
	for _, it := range items {
		if str(it, "type") == "USER" {
			profiles[str(it, "id")] = true
		}
	}
	// Tasks first: they say which tag links must exist.
	for _, it := range items {
		if str(it, "type") == "TASK" {
			c.task(it)
		}
	}
	for _, it := range items {
		switch str(it, "type") {
		case "USER":
			c.keys(it, "user", pair(dynamo.UserItemKey(str(it, "id"))))
		case "PROJECT":
			c.keys(it, "project", pair(dynamo.ProjectItemKey(str(it, "id"))))
		case "MEMBER":
			c.member(it, profiles)
		case "TAG":
			c.tagLink(it)
		case "COMMENT":
			c.comment(it, profiles)
		case "IDEMPOTENCY":
			c.idempotency(it)
		case "OUTBOX":
			c.outbox(it)
		case "CLEANUP":
			c.violate("cleanup job left: %s %s", str(it, "PK"), str(it, "SK"))
		case "SYNCMARK":
			c.syncMark(it)
		}
	}
	c.tagIndexes(items)
	c.counters(items)
	c.changeLog(items)
	for k, l := range c.links {
		if !l.seen {
			c.violate("task %s: tag %q has no tag link (%s %s)", str(l.task, "id"), l.tag, k[0], k[1])
		}
	}
	return c.out
}

// CheckCounters checks only the counters of a table's items (see
// CheckTable): it holds at every moment, also while cleanup jobs wait, so
// tests check it between mutations.
func CheckCounters(items []map[string]any) []string {
	var c checker
	c.counters(items)
	return c.out
}

type checker struct {
	by    map[[2]string]map[string]any // PK, SK → item
	links map[[2]string]tagLink        // the tag links the tasks call for
	// indexes are the tag index entries the tasks call for: key → attribute → value.
	indexes map[[2]string]map[string]string
	out     []string
}

type tagLink struct {
	task           map[string]any
	tag            string
	gsi1pk, gsi1sk string
	seen           bool
}

func (c *checker) violate(format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf(format, args...))
}

func str(it map[string]any, k string) string { s, _ := it[k].(string); return s }

// item returns the item with that key, nil for none.
func (c *checker) item(pk, sk string) map[string]any { return c.by[[2]string{pk, sk}] }

// pair holds a key function's two results.
func pair(pk, sk string) [2]string { return [2]string{pk, sk} }

// keys checks that an item has the key its fields call for.
func (c *checker) keys(it map[string]any, what string, want [2]string) {
	if str(it, "PK") != want[0] || str(it, "SK") != want[1] {
		c.violate("%s %s: key %q %q, want %q %q", what, str(it, "id"), str(it, "PK"), str(it, "SK"), want[0], want[1])
	}
}

func (c *checker) member(it map[string]any, profiles map[string]bool) {
	pid, u := str(it, "projectId"), str(it, "userId")
	pk, sk := dynamo.MemberItemKey(pid, u)
	g1pk, g1sk := dynamo.MemberIndexKeys(pid, u)
	if str(it, "PK") != pk || str(it, "SK") != sk || str(it, "GSI1PK") != g1pk || str(it, "GSI1SK") != g1sk {
		c.violate("membership of %s in %s: keys %q %q %q %q, want %q %q %q %q", u, pid, str(it, "PK"), str(it, "SK"),
			str(it, "GSI1PK"), str(it, "GSI1SK"), pk, sk, g1pk, g1sk)
	}
	proj := c.item(dynamo.ProjectItemKey(pid))
	if proj == nil {
		c.violate("orphan membership of %s in %s (no project)", u, pid)
	} else if role := map[bool]string{true: "OWNER", false: "MEMBER"}[str(proj, "ownerId") == u]; str(it, "role") != role {
		c.violate("membership of %s in %s: role %q, want %s", u, pid, str(it, "role"), role)
	}
	if !profiles[u] {
		c.violate("membership of %s in %s, who has no profile", u, pid)
	}
}

// task checks a task's item and notes the tag links it calls for.
func (c *checker) task(it map[string]any) {
	id, pid := str(it, "id"), str(it, "projectId")
	c.keys(it, "task", pair(dynamo.TaskItemKey(id)))
	if c.item(dynamo.ProjectItemKey(pid)) == nil {
		c.violate("orphan task %s of project %s (no project)", id, pid)
	}
	t := &domain.Task{ID: id, ProjectID: pid, Status: domain.TaskStatus(str(it, "status"))}
	if due := str(it, "dueDate"); due != "" {
		d, err := domain.ParseDate(due)
		if err != nil {
			c.violate("task %s: due date %q is no date", id, due)
		}
		t.DueDate = &d
	}
	if a := str(it, "assigneeId"); a != "" {
		t.AssigneeID = &a
		if c.item(dynamo.MemberItemKey(pid, a)) == nil {
			c.violate("task %s is assigned to %s, no member of %s", id, a, pid)
		}
	}
	g1pk, g1sk, g2pk, g2sk := dynamo.TaskIndexKeys(t)
	if str(it, "GSI1PK") != g1pk || str(it, "GSI1SK") != g1sk {
		c.violate("task %s: GSI1 keys %q %q, want %q %q", id, str(it, "GSI1PK"), str(it, "GSI1SK"), g1pk, g1sk)
	}
	if str(it, "GSI2PK") != g2pk || str(it, "GSI2SK") != g2sk {
		c.violate("task %s (assignee %q, %s): GSI2 keys %q %q, want %q %q", id, str(it, "assigneeId"), t.Status,
			str(it, "GSI2PK"), str(it, "GSI2SK"), g2pk, g2sk)
	}
	var tags []string
	if raw, ok := it["tags"]; ok {
		list, _ := raw.([]any)
		if len(list) == 0 {
			c.violate("task %s has a tags attribute that is no list or empty: %#v", id, raw)
		}
		for _, x := range list {
			s, _ := x.(string)
			tags = append(tags, s)
		}
	}
	if sorted := slices.Sorted(slices.Values(tags)); len(slices.Compact(sorted)) != len(tags) {
		c.violate("task %s has duplicate tags %v", id, tags)
	}
	for _, tag := range tags {
		pk, sk, lpk, lsk := dynamo.TagLinkKeys(t, tag)
		c.links[[2]string{pk, sk}] = tagLink{task: it, tag: tag, gsi1pk: lpk, gsi1sk: lsk}
		ipk, isk, attr, value := dynamo.TagIndexEntry(t, tag)
		if c.indexes[pair(ipk, isk)] == nil {
			c.indexes[pair(ipk, isk)] = map[string]string{}
		}
		c.indexes[pair(ipk, isk)][attr] = value
	}
}

// tagIndexes checks the tag indexes against the entries the tasks call
// for, in a table with the marker of complete indexes.
func (c *checker) tagIndexes(items []map[string]any) {
	if c.item(dynamo.TagIndexedKey()) == nil {
		return
	}
	for _, it := range items {
		if str(it, "type") != "TAGS" {
			continue
		}
		k := pair(str(it, "PK"), str(it, "SK"))
		want := c.indexes[k]
		delete(c.indexes, k)
		if it["full"] == true {
			continue
		}
		got := map[string]string{}
		m, _ := it["tasks"].(map[string]any)
		for tu, v := range m {
			if tu != "_" { // keeps the map from being empty (tagindex.go)
				got[tu], _ = v.(string)
			}
		}
		if !maps.Equal(got, want) {
			c.violate("tag index %s %s lists %v, but its tasks call for %v", k[0], k[1], got, want)
		}
		units := 0
		for tu, v := range want {
			units += dynamo.TagIndexUnits(tu, v)
		}
		if n, err := strconv.Atoi(str(it, "entries")); err != nil || n != units {
			c.violate("tag index %s %s counts %v units of entries, but lists %d", k[0], k[1], it["entries"], units)
		}
	}
	for k, want := range c.indexes {
		c.violate("no tag index %s %s, but its tasks call for %v", k[0], k[1], want)
	}
}

// counters checks every project's and task's counters against the items
// they count.
func (c *checker) counters(items []map[string]any) {
	tasks := map[string]map[string]int{} // project id → status → task items
	comments := map[string]int{}         // task id → comment items
	for _, it := range items {
		switch str(it, "type") {
		case "TASK":
			pid := str(it, "projectId")
			if tasks[pid] == nil {
				tasks[pid] = map[string]int{}
			}
			tasks[pid][str(it, "status")]++
		case "COMMENT":
			comments[str(it, "taskId")]++
		}
	}
	counter := func(what, id string, it map[string]any, attr string, want int) {
		raw, ok := it[attr].(string) // numbers are their text (plain)
		if got, err := strconv.Atoi(raw); !ok || err != nil || got != want {
			c.violate("%s %s: %s %v, but %d items", what, id, attr, it[attr], want)
		}
	}
	for _, it := range items {
		switch id := str(it, "id"); str(it, "type") {
		case "PROJECT":
			for attr, st := range map[string]string{"todoCount": "TODO", "inProgressCount": "IN_PROGRESS", "doneCount": "DONE"} {
				counter("project", id, it, attr, tasks[id][st])
			}
		case "TASK":
			counter("task", id, it, "commentCount", comments[id])
		}
	}
}

func (c *checker) tagLink(it map[string]any) {
	k := [2]string{str(it, "PK"), str(it, "SK")}
	l, ok := c.links[k]
	switch {
	case !ok && c.item(dynamo.TaskItemKey(str(it, "taskId"))) == nil:
		c.violate("orphan tag link %s %s (no task %s)", k[0], k[1], str(it, "taskId"))
	case !ok:
		c.violate("tag link %s %s without its task's tag", k[0], k[1])
	default:
		l.seen = true
		c.links[k] = l
		if str(it, "taskId") != str(l.task, "id") || str(it, "GSI1PK") != l.gsi1pk || str(it, "GSI1SK") != l.gsi1sk {
			c.violate("tag link %s %s out of step with its task: taskId %q GSI1 %q %q, want %q %q %q", k[0], k[1],
				str(it, "taskId"), str(it, "GSI1PK"), str(it, "GSI1SK"), str(l.task, "id"), l.gsi1pk, l.gsi1sk)
		}
		c.linkCopy(k, it, l.task)
	}
}

// linkOwn are the attributes of a tag link besides those it takes from
// its task (linkFromTask).
var linkOwn = map[string]bool{"PK": true, "SK": true, "GSI1PK": true, "GSI1SK": true, "type": true, "taskId": true}

// linkFromTask are the attributes a tag link carries of its task: the ids
// tasksByTag reads the task with, at once with its project and assignee.
var linkFromTask = []string{"projectId", "assigneeId"}

// linkCopy checks that a tag link carries its task's project and assignee
// as the task now is, and nothing else of it.
func (c *checker) linkCopy(k [2]string, link, task map[string]any) {
	for _, a := range linkFromTask {
		if !reflect.DeepEqual(link[a], task[a]) {
			c.violate("tag link %s %s disagrees with its task on %s: %#v, want %#v", k[0], k[1], a, link[a], task[a])
		}
	}
	for a := range link {
		if !linkOwn[a] && !slices.Contains(linkFromTask, a) {
			c.violate("tag link %s %s carries %s, which a link does not", k[0], k[1], a)
		}
	}
}

func (c *checker) comment(it map[string]any, profiles map[string]bool) {
	id, tid := str(it, "id"), str(it, "taskId")
	c.keys(it, "comment", pair(dynamo.CommentItemKey(id)))
	if of, err := domain.ParseCommentID(id); err != nil || of != tid {
		c.violate("comment %s: no comment id of its task %s", id, tid)
	}
	if c.item(dynamo.TaskItemKey(tid)) == nil {
		c.violate("orphan comment %s (no task %s)", id, tid)
	}
	if !profiles[str(it, "authorId")] {
		c.violate("comment %s: author %q has no profile", id, str(it, "authorId"))
	}
}

func (c *checker) idempotency(it map[string]any) {
	op, result, project := str(it, "op"), str(it, "result"), str(it, "project")
	_, sk := dynamo.IdempotencyItemKey("", "", op)
	exp, err := strconv.ParseInt(str(it, "expiresAt"), 10, 64)
	switch kind := domain.KindOf(result); {
	case op == "" || str(it, "SK") != sk:
		c.violate("idempotency record %s %s: op %q", str(it, "PK"), str(it, "SK"), op)
	case str(it, "digest") == "":
		c.violate("idempotency record %s %s has no digest", str(it, "PK"), str(it, "SK"))
	case kind != domain.KindProject && kind != domain.KindTask && kind != domain.KindComment:
		c.violate("idempotency record %s %s: result %q is no project, task or comment id", str(it, "PK"), str(it, "SK"), result)
	case project != "" && domain.KindOf(project) != domain.KindProject:
		c.violate("idempotency record %s %s: project %q is no project id", str(it, "PK"), str(it, "SK"), project)
	case err != nil || exp <= 0:
		c.violate("idempotency record %s %s: expiresAt %v", str(it, "PK"), str(it, "SK"), it["expiresAt"])
	}
}

// eventSnapshots says which snapshots (task, comment, project) each event
// kind carries.
var eventSnapshots = map[domain.EventKind][3]bool{
	domain.EventProjectUpdated: {false, false, true},
	domain.EventProjectDeleted: {false, false, false},
	domain.EventMemberAdded:    {false, false, true},
	domain.EventMemberRemoved:  {false, false, true},
	domain.EventTaskCreated:    {true, false, false},
	domain.EventTaskUpdated:    {true, false, false},
	domain.EventTaskDeleted:    {false, false, false},
	domain.EventCommentAdded:   {true, true, false},
	domain.EventCommentDeleted: {true, false, false},
}

func (c *checker) outbox(it map[string]any) {
	id, pk, sk := str(it, "id"), str(it, "PK"), str(it, "SK")
	pl, _ := it["payload"].(map[string]any)
	if pl == nil {
		c.violate("outbox item %s %s has no payload", pk, sk)
		return
	}
	pid, kind := str(pl, "projectId"), domain.EventKind(str(pl, "kind"))
	at, err := time.Parse(time.RFC3339Nano, str(pl, "at"))
	exp, experr := strconv.ParseInt(str(it, "expiresAt"), 10, 64)
	want, known := eventSnapshots[kind]
	wpk, wsk := dynamo.OutboxItemKey(id, at)
	switch {
	case id == "" || str(pl, "id") != id:
		c.violate("outbox item %s %s: id %q, payload id %q", pk, sk, id, str(pl, "id"))
	case err != nil:
		c.violate("outbox item %s %s: at %q is no time", pk, sk, str(pl, "at"))
	case pk != wpk || sk != wsk:
		c.violate("outbox item %s %s: key, want %q %q", pk, sk, wpk, wsk)
	case experr != nil || exp <= 0:
		c.violate("outbox item %s %s: expiresAt %v", pk, sk, it["expiresAt"])
	case !known:
		c.violate("outbox item %s %s: kind %q", pk, sk, kind)
	case domain.KindOf(pid) != domain.KindProject:
		c.violate("outbox item %s %s: project %q is no project id", pk, sk, pid)
	case str(pl, "actorId") == "" || str(pl, "subjectId") == "":
		c.violate("outbox item %s %s: no actor or subject", pk, sk)
	}
	for i, name := range []string{"task", "comment", "project"} {
		snap, has := pl[name].(map[string]any)
		if has != want[i] {
			c.violate("outbox item %s %s (%s): %s snapshot present %v, want %v", pk, sk, kind, name, has, want[i])
			continue
		}
		switch {
		case !has:
		case name == "task" && str(snap, "projectId") != pid, name == "project" && str(snap, "id") != pid:
			c.violate("outbox item %s %s: %s snapshot of another project than %s", pk, sk, name, pid)
		case name == "comment" && str(snap, "id") != str(pl, "subjectId"):
			c.violate("outbox item %s %s: comment snapshot %s, subject %s", pk, sk, str(snap, "id"), str(pl, "subjectId"))
		}
	}
}

// changeLog checks the change logs of a table with their marker (see
// CheckTable).
func (c *checker) changeLog(items []map[string]any) {
	if c.item(dynamo.ChangeLogKey()) == nil {
		return
	}
	num := func(it map[string]any, attr string) int64 {
		n, _ := strconv.ParseInt(str(it, attr), 10, 64)
		return n
	}
	seqs := map[string]int64{}            // project id → seq
	named := map[[2]string]string{}       // entry key → the object that names it
	live := map[string]map[string]int64{} // project id → object id → position of its live entry
	taskOf := map[string]string{}         // task id → project id
	for _, it := range items {
		switch str(it, "type") {
		case "PROJECT":
			seq, pseq := num(it, "seq"), num(it, "projectSeq")
			if seq <= 0 || pseq <= 0 || pseq > seq {
				c.violate("project %s: seq %v, projectSeq %v", str(it, "id"), it["seq"], it["projectSeq"])
			}
			seqs[str(it, "id")] = seq
		case "TASK":
			taskOf[str(it, "id")] = str(it, "projectId")
		}
	}
	for _, it := range items {
		var pid, id, since string
		switch str(it, "type") {
		case "MEMBER":
			pid, id, since = str(it, "projectId"), str(it, "userId"), str(it, "joinedAt")
		case "TASK":
			pid, id = str(it, "projectId"), str(it, "id")
		case "COMMENT":
			pid, id = taskOf[str(it, "taskId")], str(it, "id")
		default:
			continue
		}
		seq, ok := seqs[pid]
		if !ok {
			continue // an orphan: reported above
		}
		pos := num(it, "syncSeq")
		e := c.item(dynamo.ChangeItemKey(pid, pos))
		switch {
		case pos <= 0 || pos > seq:
			c.violate("%s in %s: syncSeq %v, its project's seq %d", id, pid, it["syncSeq"], seq)
		case e == nil || str(e, "id") != id || e["gone"] != nil:
			c.violate("%s in %s: no live entry of it at its syncSeq %d (%v)", id, pid, pos, e)
		case since != "" && str(e, "since") != since:
			c.violate("member %s of %s: entry since %q, joined %q", id, pid, str(e, "since"), since)
		case num(it, "born") <= 0 || num(it, "born") > pos || num(e, "born") != num(it, "born"):
			c.violate("%s in %s: born %v, its entry's %v, at %d", id, pid, it["born"], e["born"], pos)
		default:
			named[pair(dynamo.ChangeItemKey(pid, pos))] = id
			if live[pid] == nil {
				live[pid] = map[string]int64{}
			}
			live[pid][id] = pos
		}
	}
	expiring := func(it map[string]any, what string) {
		exp := num(it, "expiresAt")
		g2pk, g2sk := dynamo.ExpiryIndexKeys(str(it, "PK"), str(it, "SK"), exp)
		if exp <= 0 || str(it, "GSI2PK") != g2pk || str(it, "GSI2SK") != g2sk {
			c.violate("%s %s %s: expiresAt %v, GSI2 %q %q; want an expiry and %q %q", what, str(it, "PK"), str(it, "SK"),
				it["expiresAt"], str(it, "GSI2PK"), str(it, "GSI2SK"), g2pk, g2sk)
		}
	}
	for _, it := range items {
		typ := str(it, "type")
		if typ != "CHANGE" && typ != "LEFT" {
			continue
		}
		k := pair(str(it, "PK"), str(it, "SK"))
		pid, pos, isEntry := dynamo.ChangeLogOf(k[0], k[1])
		seq, exists := seqs[pid]
		switch {
		case pid == "" || isEntry != (typ == "CHANGE"):
			c.violate("change log item %s %s of type %s: not a key of the change log", k[0], k[1], typ)
			continue
		case !exists: // a deleted project's log: it waits for its expiry
			expiring(it, "an item of a deleted project's log")
			continue
		case typ == "LEFT":
			if wpk, wsk := dynamo.DepartureItemKey(pid, str(it, "userId")); wpk != k[0] || wsk != k[1] || num(it, "pos") <= 0 || num(it, "pos") > seq {
				c.violate("departure %s %s of user %q at %v", k[0], k[1], str(it, "userId"), it["pos"])
			}
			expiring(it, "departure")
			continue
		case pos > seq:
			c.violate("entry %s %s lies beyond its project's seq %d", k[0], k[1], seq)
		}
		id := str(it, "id")
		if it["gone"] == nil {
			if named[k] != id {
				c.violate("live entry %s %s of %q, which no object of the project records (%q)", k[0], k[1], id, named[k])
			}
			continue
		}
		expiring(it, "gone entry")
		if at, ok := live[pid][id]; ok && at < pos {
			c.violate("gone entry %s %s of %q, which lives on at %d", k[0], k[1], id, at)
		}
		for _, raw := range listOf(it["comments"]) {
			if of, err := domain.ParseCommentID(raw); err != nil || of != id {
				c.violate("gone entry %s %s of task %s lists %q, no comment of it", k[0], k[1], id, raw)
			}
		}
		if len(listOf(it["comments"])) != len(listOf(it["commentsBorn"])) {
			c.violate("gone entry %s %s: %d comments, %d born positions", k[0], k[1], len(listOf(it["comments"])), len(listOf(it["commentsBorn"])))
		}
	}
}

// listOf returns a list attribute's strings.
func listOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
