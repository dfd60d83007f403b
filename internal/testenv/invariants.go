package testenv

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// CheckTable checks every item of a settled table (one whose cleanup jobs
// have run; see Env.Items) against the design's invariants, whatever the
// history that made it, and returns one line per violation:
//
//   - every item's key, and every index key, is the one the store's key
//     functions make from the item's own fields (dynamo.ProjectItemKey,
//     TaskIndexKeys, TagLinkKeys, …), and every attribute a backfill the
//     table has had gives (the keys of an index added to a table that held
//     data: keys.go's backfills) is the one it makes of the item's own
//     (dynamo.BackfillViolations: a new index with its backfill needs no
//     code here);
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
//     lists the mark's user among its marked ones (invariants_sync.go);
//   - outbox items (events not yet published or not yet deleted) are well
//     formed: keyed by their event's id and commit time, a known kind, a
//     project id, an actor and a subject, an expiry, and the snapshots
//     their kind calls for, of the event's project.
//
// A task's and a comment's item may leave out the ids its keys hold (a
// lean item: docs/design.md, "Items"); they are filled in, in place, first
// (dynamo.WholeItem), and one that holds them must hold what its keys do.
//
// Items of other types are not checked.
func CheckTable(items []map[string]any) []string {
	c := checker{by: map[[2]string]map[string]any{}, links: map[[2]string]tagLink{}, indexes: map[[2]string]map[string]string{}}
	c.whole(items)
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
	c.out = append(c.out, dynamo.BackfillViolations(items)...)
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
	c.whole(items)
	c.counters(items)
	return c.out
}

// whole fills in, in place, what lean task and comment items leave out
// (dynamo.WholeItem), and reports what an item holds against its keys.
func (c *checker) whole(items []map[string]any) {
	for _, it := range items {
		if t := str(it, "type"); t == "TASK" || t == "COMMENT" {
			for _, a := range dynamo.WholeItem(it) {
				c.violate("%s %s %s: %s %q is not what its keys hold", strings.ToLower(t), str(it, "PK"), str(it, "SK"), a, str(it, a))
			}
		}
	}
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
	t := &domain.Task{ID: id, ProjectID: pid, Title: str(it, "title"), Status: domain.TaskStatus(str(it, "status"))}
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
